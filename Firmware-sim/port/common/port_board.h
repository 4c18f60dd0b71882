/*
 * Every board port: the calls each port's board.h provides under the same
 * names, for its own main loops and for the images every board shares
 * (common/main_sim.c, common/bench.c). The UART is interrupt-driven with a
 * receive and a transmit ring (common/port_ring.h): the interrupt only moves
 * bytes between the rings and the UART, the main loop drains and fills them.
 */
#ifndef PORT_BOARD_H
#define PORT_BOARD_H

#include <stddef.h>
#include <stdint.h>

/* Clocks, the timer tick and the UART (115200 8N1). */
void board_init(void);

/* Monotonic microseconds since board_init. */
uint64_t board_now_us(void);

/* Bytes the UART's receive ring (or the UART itself) had to drop since the last call (PROTOCOL.md: rx_overruns). */
uint32_t board_uart_take_overruns(void);
/* Bytes received and not yet taken; copies up to cap into buf. */
size_t board_uart_read(uint8_t *buf, size_t cap);
/* Queues up to len bytes for transmission; returns how many fit. */
size_t board_uart_write(const uint8_t *buf, size_t len);
/* Room left in the transmit ring. */
size_t board_uart_tx_room(void);
/* Bytes received and waiting in the ring. */
size_t board_uart_rx_pending(void);
/* Writes text with the interrupts off, waiting for the line (fault reports). */
void board_uart_write_blocking(const char *text);

/* Sleeps until an interrupt (a received byte or the next 1 ms tick) unless
 * received bytes already wait. */
void board_idle(void);

/* Resets the chip. */
void board_reset(void);

#endif /* PORT_BOARD_H */
