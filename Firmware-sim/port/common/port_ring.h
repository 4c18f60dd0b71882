/*
 * Every board port: the UART's byte rings between an interrupt and the main
 * loop. Single producer, single consumer: head is written by the producer,
 * tail by the consumer, both only grow (uint32_t wraps; the size is a power
 * of two), so neither side needs a lock. One core: a compiler barrier orders
 * the bytes before the index that publishes them.
 */
#ifndef PORT_RING_H
#define PORT_RING_H

#include <stddef.h>
#include <stdint.h>

typedef struct port_ring {
    volatile uint32_t head;   /* producer */
    volatile uint32_t tail;   /* consumer */
    uint8_t *buf;
    uint32_t size;            /* a power of two */
} port_ring_t;

static inline void port_ring_barrier(void) { __asm__ volatile("" ::: "memory"); }

static inline uint32_t port_ring_used(const port_ring_t *r) { return r->head - r->tail; }

static inline uint32_t port_ring_room(const port_ring_t *r) { return r->size - (r->head - r->tail); }

/* Producer: one byte if there is room (an interrupt's receive); 0 when full. */
static inline int port_ring_push(port_ring_t *r, uint8_t byte)
{
    if (r->head - r->tail >= r->size) {
        return 0;
    }
    r->buf[r->head & (r->size - 1u)] = byte;
    port_ring_barrier();
    r->head = r->head + 1u;
    return 1;
}

/* Consumer: the oldest byte (an interrupt's transmit); the ring must not be empty. */
static inline uint8_t port_ring_pop(port_ring_t *r)
{
    uint8_t byte = r->buf[r->tail & (r->size - 1u)];
    r->tail = r->tail + 1u;
    return byte;
}

/* Consumer: copies up to cap bytes out; returns how many. */
static inline size_t port_ring_read(port_ring_t *r, uint8_t *out, size_t cap)
{
    uint32_t tail = r->tail;
    uint32_t avail = r->head - tail;
    size_t n = avail < cap ? (size_t)avail : cap;
    size_t i;
    port_ring_barrier();
    for (i = 0; i < n; i++) {
        out[i] = r->buf[(tail + (uint32_t)i) & (r->size - 1u)];
    }
    port_ring_barrier();
    r->tail = tail + (uint32_t)n;
    return n;
}

/* Producer: copies up to len bytes in; returns how many fit. */
static inline size_t port_ring_write(port_ring_t *r, const uint8_t *in, size_t len)
{
    uint32_t head = r->head;
    uint32_t room = r->size - (head - r->tail);
    size_t n = len < room ? len : (size_t)room;
    size_t i;
    for (i = 0; i < n; i++) {
        r->buf[(head + (uint32_t)i) & (r->size - 1u)] = in[i];
    }
    port_ring_barrier();
    r->head = head + (uint32_t)n;
    return n;
}

/* What an interrupt-side counter grew by since the main loop's last call: the
 * interrupt only increments *count, the main loop only remembers *taken. */
static inline uint32_t port_take_count(const volatile uint32_t *count, uint32_t *taken)
{
    uint32_t now = *count;
    uint32_t grown = now - *taken;
    *taken = now;
    return grown;
}

#endif /* PORT_RING_H */
