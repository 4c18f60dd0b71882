/*
 * STM32F4 port: the vector table, the reset handler (.data copied from
 * flash, .bss zeroed, then main) and a fault handler that reports.
 *
 * Every fault (HardFault, MemManage, BusFault, UsageFault: the last three
 * escalate to HardFault as they are not enabled) prints
 * "\nFAULT pc=0x........ lr=0x........ psr=0x........ sp=0x........\n" on the
 * UART with the interrupts off (a host sees a frame that does not decode and
 * counts a framing error; a terminal shows the line), lights the user LED
 * and resets the chip after about a second. The FPU stays off: the firmware
 * is integer code (built -mfloat-abi=soft), and exception frames stay 8 words.
 */
#include <stdint.h>

#include "board.h"
#include "port_start.h"
#include "stm32f4.h"


extern uint32_t _stack_top;
extern int main(void);

void stm32_reset(void);
void stm32_fault(void);
void stm32_fault_report(const uint32_t *frame);
void stm32_systick_irq(void);
void stm32_usart2_irq(void);
static void unexpected_irq(void);

void stm32_reset(void)
{
    port_start_memory();
    (void)main();
    board_reset();
}

/* frame: the registers the CPU stacked (r0-r3, r12, lr, pc, xpsr). */
void stm32_fault_report(const uint32_t *frame)
{
    char line[PORT_FAULT_LINE_BYTES];
    volatile uint32_t spin;
    stm_irq_disable();
    port_fault_line(line, frame);
    board_uart_write_blocking(line);
    board_led(true);
    for (spin = 0u; spin < 20000000u; spin++) {
    }
    board_reset();
}

/* Picks the stack the fault frame is on (MSP or PSP) and reports it. */
__attribute__((naked)) void stm32_fault(void)
{
    __asm__ volatile(
        "tst lr, #4\n"
        "ite eq\n"
        "mrseq r0, msp\n"
        "mrsne r0, psp\n"
        "b stm32_fault_report\n");   /* never returns */
}

static void unexpected_irq(void)
{
    board_uart_write_blocking("\nFAULT unexpected interrupt\n");
    board_reset();
}

typedef void (*vector_t)(void);

#define U1 unexpected_irq
#define U2 U1, U1
#define U5 U2, U2, U1
#define U10 U5, U5

/* 16 system vectors, then the STM32F405/407's peripheral interrupts up to
 * USART2 (38), the only one the port enables (STM32_LAST_IRQ_ENABLED): an
 * interrupt that is never enabled in the NVIC is never taken, so the 43
 * entries of interrupts 39 to 81 would never be read (172 bytes of flash).
 * Enabling a later one needs a longer table: the check below stops the build. */
#define VECTOR_IRQS 39u
typedef char vector_irqs_cover_enabled[STM32_LAST_IRQ_ENABLED < VECTOR_IRQS ? 1 : -1];
__attribute__((section(".vectors"), used)) static const vector_t vectors[16u + VECTOR_IRQS] = {
    (vector_t)(uintptr_t)&_stack_top,
    stm32_reset,
    stm32_fault,          /* NMI */
    stm32_fault,          /* HardFault */
    stm32_fault,          /* MemManage */
    stm32_fault,          /* BusFault */
    stm32_fault,          /* UsageFault */
    0, 0, 0, 0,
    unexpected_irq,       /* SVCall */
    unexpected_irq,       /* DebugMonitor */
    0,
    unexpected_irq,       /* PendSV */
    stm32_systick_irq,    /* SysTick */
    U10, U10, U10, U5, U2, U1,        /* IRQ 0-37 */
    stm32_usart2_irq,                 /* IRQ 38: USART2 */
};
