/*
 * micro:bit port: what the board's drivers give the images' main loops.
 *
 * One TIMER0 (1 MHz, 32 bits, extended to 64) is the clock and wakes the CPU
 * every millisecond; UART0 is interrupt-driven with a receive and a transmit
 * ring: the interrupt only moves bytes between the rings and the UART, the
 * main loop drains and fills them (through the HAL's uart_read/uart_write).
 * The calls every port has are in common/port_board.h; UART0 runs at 115200
 * 8N1 on the USB interface chip's pins.
 */
#ifndef MICROBIT_BOARD_H
#define MICROBIT_BOARD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "port_board.h"

/* Ring sizes (powers of two). RX holds what arrives between two polls of
 * the main loop; TX what the core hands over in one poll. */
#ifndef MICROBIT_UART_RX_BYTES
#define MICROBIT_UART_RX_BYTES 256u
#endif
#ifndef MICROBIT_UART_TX_BYTES
#define MICROBIT_UART_TX_BYTES 256u
#endif

/* Raw 16 MHz ticks of TIMER1 (for measurements: under QEMU's -icount
 * shift=0 one tick is 62.5 instructions). */
uint32_t board_cycles16(void);

/* The chip's 64-bit unique id as 16 hex digits (FICR.DEVICEID). */
void board_serial_number(char out[17]);

#endif /* MICROBIT_BOARD_H */
