/*
 * CameraControl firmware core: the link (PROTOCOL.md §6, §8).
 *
 * Owns everything between a parsed envelope and the UART: the transmit
 * sequence, the receive sequence expectation (gap counting), the 64-entry
 * duplicate window, reliable retransmission slots (RTO 20 ms, doubling, at
 * most 8 transmissions), ACKs, heartbeats and the liveness timeout, and the
 * transmit buffer of wire bytes waiting for the UART.
 *
 * A retransmission timeout counts from when the packet's copy has left the
 * tx buffer, behind the frames queued before it (a copy still waiting there
 * is never sent again: another would only queue behind it), and, on a line
 * whose speed the board gave (cc_link_set_line_speed), it is longer by the
 * time CC_LINK_ACK_ALLOWANCE_BYTES take on that line: the packet's end still
 * in the UART's FIFO, then the host's ACK. So a slow line does not make every
 * reliable packet go out twice (PROTOCOL.md §6).
 *
 * Sending: write the payload into cc_link_payload(), then cc_link_send()
 * (or cc_link_send_bulk() for raw sample batches).
 *
 * Priority (PROTOCOL.md §6): two queues feed the UART. The tx buffer holds
 * framed packets of every kind but bulk (reliable packets and their
 * retransmissions, ACKs, responses, errors, stream ends, heartbeats,
 * best-effort events); the bulk queue holds unframed bodies of bulk packets.
 * The UART gets the tx buffer first; a bulk packet is numbered, framed and
 * started only when the tx buffer is empty, and once started it is finished.
 * So a packet of the tx buffer waits for at most one bulk frame, bulk
 * packets never take room from the others, and sequence numbers still go
 * out in increasing order (retransmissions aside). A bulk packet that finds
 * the bulk queue full is dropped (tx_dropped). For this to hold on a board,
 * the HAL's own UART FIFO should be small (uart_write may take less).
 */
#ifndef CC_LINK_H
#define CC_LINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cc_config.h"
#include "cc_counters.h"
#include "cc_envelope.h"
#include "cc_frame.h"
#include "cc_wire.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Size of the payload buffer: the largest payload of any packet (shortest
 * envelope). cc_link_payload_cap gives the exact limit of one packet. */
#define CC_LINK_PAYLOAD_CAP (CC_MAX_FRAME_BYTES - CC_WIRE_MIN_ENVELOPE_BYTES - CC_WIRE_CHECK_BYTES)
/* The payload any packet can carry, whatever its call id. */
#define CC_LINK_PAYLOAD_CAP_ANY (CC_MAX_FRAME_BYTES - CC_WIRE_MAX_ENVELOPE_BYTES - CC_WIRE_CHECK_BYTES)

/* What a reliable packet's ACK needs on the line beyond the retransmission
 * timeout, in bytes: the packet's last bytes still in a UART FIFO (16 bytes
 * at most on the boards and in the simulator) and the host's ACK (about 10
 * bytes framed), with a few to spare. 33 ms at 9600 baud, 2.8 ms at 115200. */
#define CC_LINK_ACK_ALLOWANCE_BYTES 32u
/* The longest allowance (a line slower than about 1300 baud gets this one),
 * the host's too (LineSpeedEstimate). */
#define CC_LINK_MAX_ACK_ALLOWANCE_US 250000u

/* Bytes of a bulk queue entry's length prefix. */
#define CC_LINK_BULK_LENGTH_BYTES 2u
/* The largest bulk frame on the wire (a body fills at most the bulk queue). */
#define CC_LINK_BULK_WIRE_BYTES CC_FRAME_WIRE_BYTES(CC_TX_BULK_BYTES - CC_LINK_BULK_LENGTH_BYTES + CC_WIRE_CHECK_BYTES)

/* A reliable packet awaiting its ACK, kept as wire bytes in the link's
 * store (store[offset .. offset + wire_len)). */
typedef struct cc_reliable_slot {
    bool used;
    uint8_t tries;          /* transmissions so far (0: still waiting for room in tx) */
    uint16_t sequence;
    uint16_t wire_len;
    uint32_t call_id;
    uint32_t rto_us;        /* current retransmission timeout */
    uint64_t due_us;        /* next transmission */
    uint32_t queued_end;    /* tx_queued_total just after the last copy was queued */
    uint16_t offset;        /* where its wire bytes start in the store */
} cc_reliable_slot_t;

typedef struct cc_link {
    cc_counters_t *counters;
    uint32_t heartbeat_interval_us;
    uint32_t ack_allowance_us;          /* added to every retransmission timeout (0: line speed unknown) */

    /* transmit */
    uint16_t tx_sequence;               /* number of the next new packet */
    bool session;                       /* heartbeats and liveness run */
    bool answer_unsent;                 /* packet 0 (the HandshakeResponse) has not left yet */
    bool heartbeat_waits;               /* the tx buffer's last packet is a heartbeat (no second behind a frame) */
    uint64_t last_tx_us;                /* last packet other than a bulk one (heartbeat timer) */
    uint64_t last_rx_us;
    size_t tx_head;                     /* tx_buf[tx_head .. tx_tail) waits for the UART */
    size_t tx_tail;
    /* what every poll reads first, ahead of the buffers (small offsets: one
     * load each on a Cortex-M0): see the arrays below */
    size_t store_used;
    size_t bulk_head;
    size_t bulk_tail;
    size_t bulk_wire_pos;
    size_t bulk_wire_len;
    /* envelope + payload being built: the payload always starts at
     * CC_WIRE_MAX_ENVELOPE_BYTES, the envelope is written just before it */
    uint8_t body[CC_WIRE_MAX_ENVELOPE_BYTES + CC_LINK_PAYLOAD_CAP];
    uint32_t tx_queued_total;           /* bytes ever appended to tx_buf (wraps) */
    uint32_t tx_taken_total;            /* bytes ever taken from tx_buf by the UART (wraps) */
    uint8_t tx_buf[CC_TX_BUFFER_BYTES];
    cc_reliable_slot_t slots[CC_RELIABLE_SLOTS];
    /* store[0 .. store_used): the slots' wire bytes, packed (a freed slot's
     * bytes are closed up at once) */
    uint8_t store[CC_RELIABLE_STORE_BYTES];
    /* bulk_buf[bulk_head .. bulk_tail): entries of a u16 LE body length and
     * the body (envelope + payload, sequence not yet set) */
    uint8_t bulk_buf[CC_TX_BULK_BYTES];
    /* bulk_wire[bulk_wire_pos .. bulk_wire_len): the bulk frame being written */
    uint8_t bulk_wire[CC_LINK_BULK_WIRE_BYTES];

    /* receive */
    bool rx_seen;                       /* a packet was decoded since reset */
    uint16_t rx_expected;               /* sequence expected next */
    uint16_t rx_window_top;             /* newest sequence in the duplicate window */
    /* bit i of the 64-entry window, rx_window_top - i delivered: bit i of
     * rx_window[0] for i < 32, bit i - 32 of rx_window[1] (two 32-bit words:
     * a Cortex-M0 shifts 64 bits only through libgcc) */
    uint32_t rx_window[2];
    /* the low 32 bits of the time the last byte of a host frame still arriving came, made odd (0: none
     * arriving, or it began after the link had gone quiet for the dead timeout; PROTOCOL.md §8), compared
     * modulo 2^32 as a Cortex-M0 does in a few instructions (a value left 2^32 us old, 71.6 minutes, can
     * delay a death by one dead timeout at most). Last, in the struct's tail padding: no field moves out of
     * reach of a Cortex-M0 load, and no RAM is added */
    uint32_t frame_byte_us;
} cc_link_t;

/* What cc_link_send did. */
typedef enum cc_send_result {
    CC_SEND_OK = 0,        /* queued for the UART (or, reliable, kept until there is room) */
    CC_SEND_TX_FULL        /* best-effort packet dropped: its queue is full (tx_dropped counted) */
} cc_send_result_t;

/* What cc_link_receive says about a received packet. */
typedef enum cc_rx_verdict {
    CC_RX_DELIVER = 0,     /* pass it to the RPC layer */
    CC_RX_CONSUMED,        /* a link packet (ACK, HEARTBEAT) or a dropped duplicate */
    CC_RX_DUPLICATE        /* a duplicate (any flags; re-ACKed if reliable), dropped and counted */
} cc_rx_verdict_t;

void cc_link_init(cc_link_t *link, cc_counters_t *counters, uint32_t heartbeat_interval_ms);

/* The line's speed in bits per second (8N1: 10 bits a byte), 0 when not
 * known (the default: a fast link, a USB CDC port): every retransmission
 * timeout gets the time CC_LINK_ACK_ALLOWANCE_BYTES take on it. */
void cc_link_set_line_speed(cc_link_t *link, uint32_t bits_per_second);

/* Starts a session after a handshake: own sequence back to 0, receive
 * expectation re-seeded with the handshake's sequence, retransmission slots
 * emptied, heartbeats and liveness on. */
void cc_link_start_session(cc_link_t *link, uint16_t handshake_sequence, uint64_t now_us);

/* Ends the session: no heartbeats, no liveness timeout, slots emptied. */
void cc_link_end_session(cc_link_t *link);

bool cc_link_session(const cc_link_t *link);

/* Forgets the receive expectation and the duplicate window (the next packet
 * received is treated as the first). */
void cc_link_reset_receive(cc_link_t *link);

/* Sequence tracking, ACK of reliable packets, duplicate dropping (every
 * packet, whatever its flags: PROTOCOL.md §6, v1.1), ACK and HEARTBEAT
 * handling, liveness. For every valid received envelope. */
cc_rx_verdict_t cc_link_receive(cc_link_t *link, const cc_envelope_t *env, uint64_t now_us);

/* A handshake REQUEST (not checked against the duplicate window, which a
 * new session re-seeds): ACKed if reliable, liveness. */
void cc_link_accept_handshake(cc_link_t *link, const cc_envelope_t *env, uint64_t now_us);

/* Where to write the payload of the next cc_link_send (CC_LINK_PAYLOAD_CAP bytes). */
uint8_t *cc_link_payload(cc_link_t *link);

/* The largest payload a packet of this type and call id can carry within
 * CC_MAX_FRAME_BYTES. */
size_t cc_link_payload_cap(uint8_t type, uint32_t call_id);

/* Sends the packet whose payload_len bytes are in cc_link_payload(). status
 * is used by STREAM_END and ERROR. reliable keeps it for retransmission;
 * with no free slot or no room in the store it goes once WITHOUT the
 * RELIABLE flag (reliable_unprotected counted, PROTOCOL.md §6).
 * payload_len is at most cc_link_payload_cap(type, call_id), which is not
 * checked again here (asserted in the host build): every caller bounds its
 * payload by it (a generated writer made with that capacity and found ok,
 * an ERROR's text cut at it, the extension's answer refused beyond it, an
 * ACK's 2 bytes, an empty heartbeat or stream confirmation). The same for
 * cc_link_send_bulk. */
cc_send_result_t cc_link_send(cc_link_t *link, uint8_t type, bool reliable, uint32_t call_id,
                              uint8_t status, size_t payload_len, uint64_t now_us);

/* Queues the best-effort bulk packet (a raw sample batch) whose payload_len
 * bytes are in cc_link_payload() in the bulk queue: it goes to the UART when
 * nothing else waits, and takes its sequence number then. CC_SEND_TX_FULL
 * (tx_dropped counted) when the bulk queue has no room for it. */
cc_send_result_t cc_link_send_bulk(cc_link_t *link, uint8_t type, uint32_t call_id, size_t payload_len,
                                   uint64_t now_us);

/* Forgets the packets of a call that ended (PROTOCOL.md §7: the device sends
 * nothing more for it): its reliable packets (no more retransmissions) and
 * its bulk packets not yet started (the bulk queue is closed up). A bulk
 * frame already started, and copies already in the tx buffer, still go out
 * whole: they have begun to leave, or hold their place in the line's order
 * (a frame cut short would cost the host the frame after it too). */
void cc_link_forget_call(cc_link_t *link, uint32_t call_id);

/* Retransmissions and heartbeats that are due. Returns true when the link
 * has just been declared dead (the session ended, heartbeat_timeouts counted). */
bool cc_link_poll(cc_link_t *link, uint64_t now_us);

/* cc_link_poll has nothing to do (no session, no reliable packet kept): a
 * poll's fast path, inline so it costs no call. */
static inline bool cc_link_timers_idle(const cc_link_t *link)
{
    return !link->session && link->store_used == 0u;
}

/* cc_link_tx_pending would return NULL (nothing waits for the UART), inline. */
static inline bool cc_link_tx_idle(const cc_link_t *link)
{
    return link->tx_tail == link->tx_head && link->bulk_head == link->bulk_tail
           && link->bulk_wire_pos >= link->bulk_wire_len;
}

/* Bytes from the peer are waiting to be decoded (held back by backpressure):
 * the peer is alive, so the dead-link timer restarts. */
void cc_link_note_rx_pending(cc_link_t *link, uint64_t now_us);

/* After received bytes, at now_us: `open` when a frame is partly assembled (not a whole body, not over the
 * largest frame), `continues` when it may be the frame that was open before those bytes. It keeps the link
 * alive (PROTOCOL.md §8, v1.2) only if it began while the link was: it continues one that did, or it began
 * within the dead timeout of the last valid frame. So garbage cut by delimiters, whose every frame fails,
 * keeps nothing. Inline: it runs at the end of every poll that read bytes, and a call costs the STM32F4's
 * image more flash than its body. */
static inline void cc_link_frame_arriving(cc_link_t *link, bool open, bool continues, uint64_t now_us)
{
    bool counts = (continues && link->frame_byte_us != 0u) ||
                  (uint32_t)now_us - (uint32_t)link->last_rx_us < link->heartbeat_interval_us * CC_WIRE_DEAD_AFTER_HEARTBEATS;
    link->frame_byte_us = open && counts ? ((uint32_t)now_us - 1u) | 1u : 0u;
}

/* The next credit_us of the device's time, from now_us, pass without the device being able to hear the
 * peer (a catch-up after a stall): they do not count toward the dead-link timeout. The peer's silence
 * before now_us still does. */
void cc_link_credit_silence(cc_link_t *link, uint64_t now_us, uint64_t credit_us);

/* Free bytes in the tx buffer. */
size_t cc_link_tx_free(const cc_link_t *link);

/* True when the packet with this sequence number was received and not
 * yet overtaken: it is the newest in the duplicate window. */
bool cc_link_is_newest(const cc_link_t *link, uint16_t sequence);

/* Counts and re-ACKs a duplicate the caller recognised itself (a
 * retransmitted handshake, whose arrival resets the receive state). */
void cc_link_drop_duplicate(cc_link_t *link, const cc_envelope_t *env, uint64_t now_us);

/* Free bytes in the bulk queue. */
size_t cc_link_bulk_free(const cc_link_t *link);

/* The next bytes for the UART, in priority order: the rest of a started
 * bulk frame, else the tx buffer, else the next bulk packet (numbered and
 * framed now). *len set; NULL when nothing waits. Write them, then call
 * cc_link_tx_consume; call again for more. */
const uint8_t *cc_link_tx_pending(cc_link_t *link, size_t *len);

/* The UART took n of the bytes cc_link_tx_pending just returned: n is at
 * most the *len it gave (not checked again here, asserted in the host build;
 * cc_device.c's flush_uart holds a HAL's answer to it). */
void cc_link_tx_consume(cc_link_t *link, size_t n);

/* Reliable packets still awaiting an ACK. */
size_t cc_link_unacked(const cc_link_t *link);

#ifdef __cplusplus
}
#endif

#endif /* CC_LINK_H */
