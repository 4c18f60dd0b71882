/*
 * STM32F4 port: what the board's drivers give the images' main loops.
 *
 * The clock is TIM2 counting microseconds (32 bits, extended to 64); the
 * Cortex-M4's SysTick interrupts every millisecond to wake the main loop;
 * USART2 is interrupt-driven with a receive and a transmit ring: the interrupt
 * only moves bytes between the rings and the USART, the main loop drains and
 * fills them (through the HAL's uart_read/uart_write). The calls every port
 * has are in common/port_board.h; board_init sets the clocks (PLL, flash wait
 * states, bus prescalers), TIM2, the SysTick and USART2 at 115200 8N1 on PA2
 * (TX) and PA3 (RX).
 */
#ifndef STM32F4_BOARD_H
#define STM32F4_BOARD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "port_board.h"

/* Ring sizes (powers of two). RX holds what arrives between two polls of
 * the main loop; TX what the core hands over in one poll. */
#ifndef STM32_UART_RX_BYTES
#define STM32_UART_RX_BYTES 512u
#endif
#ifndef STM32_UART_TX_BYTES
#define STM32_UART_TX_BYTES 1024u
#endif

/* The core clock a real chip runs at after board_init: the 16 MHz internal
 * oscillator through the PLL, 84 MHz, which every STM32F4 reaches at its reset
 * voltage scale (F401's maximum). QEMU's netduinoplus2 has no RCC and clocks
 * its SysTick at a fixed 168 MHz. */
#define STM32_CORE_HZ 84000000u
#define STM32_QEMU_CORE_HZ 168000000u

/* True when board_init found no RCC (it reads back 0: QEMU's netduinoplus2),
 * the core clock then being QEMU's 168 MHz. */
bool board_is_emulated(void);
/* The core's (and the SysTick's) clock in Hz (STM32_CORE_HZ, or STM32_QEMU_CORE_HZ emulated). */
uint32_t board_core_hz(void);

/* Core clock cycles since board_init (for measurements: under QEMU's
 * -icount shift=0 one cycle of its 168 MHz is 1000/168 instructions). */
uint64_t board_cycles(void);

/* The chip's 96-bit unique id as 24 hex digits ("QEMU" and zeros when emulated:
 * QEMU does not map the id's address). */
void board_serial_number(char out[25]);

/* The user LED (LD2 on PA5 of Nucleo-64 boards), on or off. */
void board_led(bool on);

#endif /* STM32F4_BOARD_H */
