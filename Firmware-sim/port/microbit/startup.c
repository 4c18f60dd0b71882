/*
 * micro:bit port: the vector table, the reset handler (.data copied from
 * flash, .bss zeroed, then main) and a fault handler that reports.
 *
 * A HardFault (on the Cortex-M0 every fault is one) prints
 * "\nFAULT pc=0x........ lr=0x........ psr=0x........ sp=0x........\n" on the
 * UART with the interrupts off (a host sees a frame that does not decode and
 * counts a framing error; a terminal shows the line), shows an X on the LED
 * matrix and resets the chip after about a second.
 */
#include <stdint.h>

#include "board.h"
#include "port_start.h"
#include "board_leds.h"
#include "nrf51.h"

extern uint32_t _stack_top;
extern int main(void);

void microbit_reset(void);
void microbit_fault(void);
void microbit_fault_report(const uint32_t *frame);
void microbit_uart_irq(void);
void microbit_timer0_irq(void);

void microbit_reset(void)
{
    port_start_memory();
    (void)main();
    board_reset();
}

/* frame: the registers the CPU stacked (r0-r3, r12, lr, pc, xpsr). */
void microbit_fault_report(const uint32_t *frame)
{
    char line[PORT_FAULT_LINE_BYTES];
    volatile uint32_t spin;
    nrf_irq_disable();
    port_fault_line(line, frame);
    board_uart_write_blocking(line);
    board_leds_fault();
    for (spin = 0u; spin < 4000000u; spin++) {
    }
    board_reset();
}

/* Picks the stack the fault frame is on (MSP or PSP) and reports it. */
__attribute__((naked)) void microbit_fault(void)
{
    __asm__ volatile(
        "movs r0, #4\n"
        "mov r1, lr\n"
        "tst r0, r1\n"
        "beq 1f\n"
        "mrs r0, psp\n"
        "b 2f\n"
        "1: mrs r0, msp\n"
        "2: bl microbit_fault_report\n");   /* never returns */
}

typedef void (*vector_t)(void);

/* An interrupt the port never enables (SVC, PendSV, SysTick and the
 * peripherals but UART0 and TIMER0) is reported as a fault: the same line,
 * with the interrupted code's pc, and the same reset (52 bytes of flash less
 * than a handler and a text of its own). */

/* 16 system vectors, then the nRF51's peripheral interrupts up to TIMER0
 * (8), the last one the port enables: an interrupt that is never enabled in
 * the NVIC is never taken, so the 23 entries of interrupts 9 to 31 would never
 * be read (92 bytes of flash). Enabling a later one needs a longer table: the
 * check below stops the build. */
#define VECTOR_IRQS (TIMER0_IRQN + 1u)
typedef char vector_irqs_cover_enabled[(MICROBIT_IRQS_ENABLED >> VECTOR_IRQS) == 0u ? 1 : -1];
__attribute__((section(".vectors"), used)) static const vector_t vectors[16u + VECTOR_IRQS] = {
    (vector_t)(uintptr_t)&_stack_top,
    microbit_reset,
    microbit_fault,          /* NMI */
    microbit_fault,          /* HardFault */
    0, 0, 0, 0, 0, 0, 0,
    microbit_fault,          /* SVC */
    0, 0,
    microbit_fault,          /* PendSV */
    microbit_fault,          /* SysTick */
    /* 0 POWER_CLOCK, 1 RADIO, 2 UART0, 3 SPI0/TWI0, 4 SPI1/TWI1, 5 -, 6 GPIOTE, 7 ADC, 8 TIMER0 */
    microbit_fault, microbit_fault, microbit_uart_irq, microbit_fault, microbit_fault,
    microbit_fault, microbit_fault, microbit_fault, microbit_timer0_irq,
};
