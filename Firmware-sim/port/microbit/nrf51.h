/*
 * micro:bit port: the few nRF51822 registers this port uses (nRF51 Series
 * Reference Manual v3.0), as plain addresses. QEMU's `-M microbit` models
 * UART0, TIMER0, GPIO and FICR; the rest (CLOCK, ADC) read as 0 there.
 */
#ifndef MICROBIT_NRF51_H
#define MICROBIT_NRF51_H

#include <stdint.h>

#define NRF_REG(addr) (*(volatile uint32_t *)(uintptr_t)(addr))

/* CLOCK */
#define CLOCK_BASE 0x40000000u
#define CLOCK_TASKS_HFCLKSTART NRF_REG(CLOCK_BASE + 0x000u)
#define CLOCK_EVENTS_HFCLKSTARTED NRF_REG(CLOCK_BASE + 0x100u)
#define CLOCK_XTALFREQ NRF_REG(CLOCK_BASE + 0x550u)   /* 0xFF: 16 MHz crystal (micro:bit) */

/* UART0 (peripheral id 2) */
#define UART0_BASE 0x40002000u
#define UART0_IRQN 2u
#define UART0_TASKS_STARTRX NRF_REG(UART0_BASE + 0x000u)
#define UART0_TASKS_STARTTX NRF_REG(UART0_BASE + 0x008u)
#define UART0_EVENTS_RXDRDY NRF_REG(UART0_BASE + 0x108u)
#define UART0_EVENTS_TXDRDY NRF_REG(UART0_BASE + 0x11Cu)
#define UART0_EVENTS_ERROR NRF_REG(UART0_BASE + 0x124u)
#define UART0_INTENSET NRF_REG(UART0_BASE + 0x304u)
#define UART0_INTENCLR NRF_REG(UART0_BASE + 0x308u)
#define UART0_ERRORSRC NRF_REG(UART0_BASE + 0x480u)
#define UART0_ENABLE NRF_REG(UART0_BASE + 0x500u)     /* 4: enabled */
#define UART0_PSELTXD NRF_REG(UART0_BASE + 0x50Cu)
#define UART0_PSELRXD NRF_REG(UART0_BASE + 0x514u)
#define UART0_RXD NRF_REG(UART0_BASE + 0x518u)
#define UART0_TXD NRF_REG(UART0_BASE + 0x51Cu)
#define UART0_BAUDRATE NRF_REG(UART0_BASE + 0x524u)
#define UART_INT_RXDRDY (1u << 2)
#define UART_INT_TXDRDY (1u << 7)
#define UART_INT_ERROR (1u << 9)
#define UART_ERRORSRC_OVERRUN (1u << 0)   /* a byte arrived with RXD and the FIFO full: it is lost */
#define UART_BAUD_115200 0x01D7E000u

/* ADC (peripheral id 7) */
#define ADC_BASE 0x40007000u
#define ADC_TASKS_START NRF_REG(ADC_BASE + 0x000u)
#define ADC_EVENTS_END NRF_REG(ADC_BASE + 0x100u)
#define ADC_ENABLE NRF_REG(ADC_BASE + 0x500u)
#define ADC_CONFIG NRF_REG(ADC_BASE + 0x504u)
#define ADC_RESULT NRF_REG(ADC_BASE + 0x508u)
/* CONFIG: 10-bit, input with 1/3 prescaling, 1.2 V band gap: full scale 3.6 V */
#define ADC_CONFIG_10BIT_THIRD_VBG(ain) (2u | (2u << 2) | (0u << 5) | ((1u << (ain)) << 8))

/* TIMER0 (peripheral id 8, 32 bits) */
#define TIMER0_BASE 0x40008000u
#define TIMER0_IRQN 8u
#define TIMER0_TASKS_START NRF_REG(TIMER0_BASE + 0x000u)
#define TIMER0_TASKS_CLEAR NRF_REG(TIMER0_BASE + 0x00Cu)
#define TIMER0_TASKS_CAPTURE(n) NRF_REG(TIMER0_BASE + 0x040u + 4u * (n))
#define TIMER0_EVENTS_COMPARE(n) NRF_REG(TIMER0_BASE + 0x140u + 4u * (n))
#define TIMER0_INTENSET NRF_REG(TIMER0_BASE + 0x304u)
#define TIMER0_MODE NRF_REG(TIMER0_BASE + 0x504u)
#define TIMER0_BITMODE NRF_REG(TIMER0_BASE + 0x508u)  /* 3: 32 bits */
#define TIMER0_PRESCALER NRF_REG(TIMER0_BASE + 0x510u)
#define TIMER0_CC(n) NRF_REG(TIMER0_BASE + 0x540u + 4u * (n))

/* GPIO */
#define GPIO_BASE 0x50000000u
#define GPIO_OUT NRF_REG(GPIO_BASE + 0x504u)
#define GPIO_OUTSET NRF_REG(GPIO_BASE + 0x508u)
#define GPIO_OUTCLR NRF_REG(GPIO_BASE + 0x50Cu)
#define GPIO_IN NRF_REG(GPIO_BASE + 0x510u)
#define GPIO_DIRSET NRF_REG(GPIO_BASE + 0x518u)
#define GPIO_PIN_CNF(n) NRF_REG(GPIO_BASE + 0x700u + 4u * (n))
#define GPIO_CNF_INPUT_PULLUP ((0u << 0) | (0u << 1) | (3u << 2))   /* input, buffer connected, pull-up */
#define GPIO_CNF_INPUT_NOPULL 0u

/* FICR: the chip's unique id */
#define FICR_DEVICEID(n) NRF_REG(0x10000060u + 4u * (n))

/* Cortex-M0 system control */
#define NVIC_ISER NRF_REG(0xE000E100u)
/* The only interrupts this port enables (board.c): startup.c's vector table
 * ends with the last of them. */
#define MICROBIT_IRQS_ENABLED ((1u << UART0_IRQN) | (1u << TIMER0_IRQN))
#define SCB_AIRCR NRF_REG(0xE000ED0Cu)
#define SCB_AIRCR_SYSRESET 0x05FA0004u

static inline void nrf_irq_disable(void) { __asm__ volatile("cpsid i" ::: "memory"); }
static inline void nrf_irq_enable(void) { __asm__ volatile("cpsie i" ::: "memory"); }
static inline void nrf_wfi(void) { __asm__ volatile("wfi" ::: "memory"); }
static inline void nrf_barrier(void) { __asm__ volatile("" ::: "memory"); }

/* NVMC: flash erase and write (nRF51 Reference Manual, NVMC). The CPU halts
 * while the flash is busy; READY reads 1 when it is done. */
#define NVMC_BASE 0x4001E000u
#define NVMC_READY NRF_REG(NVMC_BASE + 0x400u)
#define NVMC_CONFIG NRF_REG(NVMC_BASE + 0x504u)      /* 0 read only, 1 write enable, 2 erase enable */
#define NVMC_ERASEPAGE NRF_REG(NVMC_BASE + 0x508u)   /* write a page's address to erase it */
#define NVMC_CONFIG_REN 0u
#define NVMC_CONFIG_WEN 1u
#define NVMC_CONFIG_EEN 2u
#define NRF51_FLASH_PAGE_BYTES 1024u

#endif /* MICROBIT_NRF51_H */
