/*
 * micro:bit port: what the board's drivers give the images' main loops.
 *
 * One TIMER0 (1 MHz, 32 bits, extended to 64) is the clock and wakes the CPU
 * every millisecond; UART0 is interrupt-driven with a receive and a transmit
 * ring: the interrupt only moves bytes between the rings and the UART, the
 * main loop drains and fills them (through the HAL's uart_read/uart_write).
 */
#ifndef MICROBIT_BOARD_H
#define MICROBIT_BOARD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Ring sizes (powers of two). RX holds what arrives between two polls of
 * the main loop; TX what the core hands over in one poll. */
#ifndef MICROBIT_UART_RX_BYTES
#define MICROBIT_UART_RX_BYTES 256u
#endif
#ifndef MICROBIT_UART_TX_BYTES
#define MICROBIT_UART_TX_BYTES 256u
#endif

/* Clock, timer tick and UART (115200 8N1 on the USB interface chip's pins). */
void board_init(void);

/* Monotonic microseconds since board_init. */
uint64_t board_now_us(void);

/* Raw 16 MHz ticks of TIMER1 (for measurements: under QEMU's -icount
 * shift=0 one tick is 62.5 instructions). */
uint32_t board_cycles16(void);
/* Bytes the UART's receive ring had to drop since the last call (PROTOCOL.md: rx_overruns). */
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

/* The chip's 64-bit unique id as 16 hex digits (FICR.DEVICEID). */
void board_serial_number(char out[17]);

/* Resets the chip. */
void board_reset(void);

#endif /* MICROBIT_BOARD_H */
