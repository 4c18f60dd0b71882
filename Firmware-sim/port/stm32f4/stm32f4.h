/*
 * STM32F4 port: the few registers this port uses (RM0090 for the
 * STM32F405/407, RM0368 F401, RM0383 F411, RM0390 F446: the same addresses and
 * bits on all of them), as plain addresses, and the Cortex-M4's own (SysTick,
 * NVIC, SCB).
 *
 * QEMU's `-M netduinoplus2` (STM32F405) models the USARTs, the ADCs (without
 * their common register and without the end-of-conversion flag), TIM2-5, EXTI
 * and SYSCFG; RCC, the flash interface and GPIO are "unimplemented devices"
 * there: they read as 0 and ignore writes. Memory it does not map (the unique
 * id at 0x1FFF7A10) faults when touched; the ADCs' common register is not modelled.
 */
#ifndef STM32F4_H
#define STM32F4_H

#include <stdint.h>

#define STM_REG(addr) (*(volatile uint32_t *)(uintptr_t)(addr))

/* RCC */
#define RCC_BASE 0x40023800u
#define RCC_CR STM_REG(RCC_BASE + 0x00u)
#define RCC_PLLCFGR STM_REG(RCC_BASE + 0x04u)
#define RCC_CFGR STM_REG(RCC_BASE + 0x08u)
#define RCC_AHB1ENR STM_REG(RCC_BASE + 0x30u)
#define RCC_APB1ENR STM_REG(RCC_BASE + 0x40u)
#define RCC_APB2ENR STM_REG(RCC_BASE + 0x44u)
#define RCC_CR_HSION (1u << 0)
#define RCC_CR_HSIRDY (1u << 1)
#define RCC_CR_PLLON (1u << 24)
#define RCC_CR_PLLRDY (1u << 25)
#define RCC_PLLCFGR_SRC_HSI 0u
#define RCC_CFGR_SW_PLL 2u
#define RCC_CFGR_SWS_MASK (3u << 2)
#define RCC_CFGR_SWS_PLL (2u << 2)
#define RCC_CFGR_PPRE1_DIV2 (4u << 10)
#define RCC_CFGR_PPRE2_DIV1 (0u << 13)
#define RCC_AHB1ENR_GPIOAEN (1u << 0)
#define RCC_AHB1ENR_GPIOBEN (1u << 1)
#define RCC_AHB1ENR_GPIOCEN (1u << 2)
#define RCC_APB1ENR_TIM2EN (1u << 0)
#define RCC_APB1ENR_USART2EN (1u << 17)
#define RCC_APB2ENR_ADC1EN (1u << 8)
#define RCC_APB2ENR_ADC2EN (1u << 9)

/* Flash interface */
#define FLASH_ACR STM_REG(0x40023C00u)
#define FLASH_ACR_LATENCY_2WS 2u
#define FLASH_ACR_PRFTEN (1u << 8)
#define FLASH_ACR_ICEN (1u << 9)
#define FLASH_ACR_DCEN (1u << 10)

/* GPIO ports A, B, C */
#define GPIOA_BASE 0x40020000u
#define GPIOB_BASE 0x40020400u
#define GPIOC_BASE 0x40020800u
#define GPIO_MODER(port) STM_REG((port) + 0x00u)
#define GPIO_PUPDR(port) STM_REG((port) + 0x0Cu)
#define GPIO_IDR(port) STM_REG((port) + 0x10u)
#define GPIO_BSRR(port) STM_REG((port) + 0x18u)
#define GPIO_AFRL(port) STM_REG((port) + 0x20u)
#define GPIO_MODE_INPUT 0u
#define GPIO_MODE_OUTPUT 1u
#define GPIO_MODE_AF 2u
#define GPIO_MODE_ANALOG 3u
#define GPIO_PULL_DOWN 2u

/* USART2 (APB1): the ST-LINK virtual COM port on Nucleo-64 boards; QEMU's serial1 */
#define USART2_BASE 0x40004400u
#define USART2_IRQN 38u
/* The last (and only) peripheral interrupt the port enables in the NVIC
 * (board.c): the vector table ends with it (startup.c). */
#define STM32_LAST_IRQ_ENABLED USART2_IRQN
#define USART_SR(base) STM_REG((base) + 0x00u)
#define USART_DR(base) STM_REG((base) + 0x04u)
#define USART_BRR(base) STM_REG((base) + 0x08u)
#define USART_CR1(base) STM_REG((base) + 0x0Cu)
#define USART_SR_ORE (1u << 3)
#define USART_SR_RXNE (1u << 5)
#define USART_SR_TC (1u << 6)
#define USART_SR_TXE (1u << 7)
#define USART_CR1_RE (1u << 2)
#define USART_CR1_TE (1u << 3)
#define USART_CR1_RXNEIE (1u << 5)
#define USART_CR1_TXEIE (1u << 7)
#define USART_CR1_UE (1u << 13)

/* TIM2 (APB1, 32 bits): on a chip its clock is twice APB1's, the core clock here;
 * QEMU 7.2 clocks it at a fixed 1 GHz */
#define TIM2_BASE 0x40000000u
#define TIM2_CR1 STM_REG(TIM2_BASE + 0x00u)
#define TIM2_EGR STM_REG(TIM2_BASE + 0x14u)
#define TIM2_CNT STM_REG(TIM2_BASE + 0x24u)
#define TIM2_PSC STM_REG(TIM2_BASE + 0x28u)
#define TIM2_ARR STM_REG(TIM2_BASE + 0x2Cu)
#define TIM_CR1_CEN (1u << 0)
#define TIM_EGR_UG (1u << 0)
#define STM32_QEMU_TIM2_HZ 1000000000u

/* ADC1 and ADC2 (APB2), and their common register */
#define ADC1_BASE 0x40012000u
#define ADC2_BASE 0x40012100u
#define ADC_SR(base) STM_REG((base) + 0x00u)
#define ADC_CR1(base) STM_REG((base) + 0x04u)
#define ADC_CR2(base) STM_REG((base) + 0x08u)
#define ADC_SMPR2(base) STM_REG((base) + 0x10u)
#define ADC_SQR1(base) STM_REG((base) + 0x2Cu)
#define ADC_SQR3(base) STM_REG((base) + 0x34u)
#define ADC_DR(base) STM_REG((base) + 0x4Cu)
#define ADC_CCR STM_REG(0x40012304u)
#define ADC_SR_EOC (1u << 1)
#define ADC_CR2_ADON (1u << 0)
#define ADC_CR2_SWSTART (1u << 30)
#define ADC_CCR_ADCPRE_DIV4 (1u << 16)
#define ADC_SMP_480_CYCLES 7u

/* Cortex-M4 system registers */
#define SYST_CSR STM_REG(0xE000E010u)
#define SYST_RVR STM_REG(0xE000E014u)
#define SYST_CVR STM_REG(0xE000E018u)
#define SYST_CSR_ENABLE (1u << 0)
#define SYST_CSR_TICKINT (1u << 1)
#define SYST_CSR_CLKSOURCE_CPU (1u << 2)
#define NVIC_ISER(n) STM_REG(0xE000E100u + 4u * (n))
#define SCB_ICSR STM_REG(0xE000ED04u)
#define SCB_ICSR_PENDSTSET (1u << 26)
#define SCB_AIRCR STM_REG(0xE000ED0Cu)
#define SCB_AIRCR_SYSRESET 0x05FA0004u

/* The 96-bit unique device id (not mapped by QEMU) */
#define UID_WORD(i) STM_REG(0x1FFF7A10u + 4u * (i))

static inline void stm_irq_disable(void) { __asm__ volatile("cpsid i" ::: "memory"); }
static inline void stm_irq_enable(void) { __asm__ volatile("cpsie i" ::: "memory"); }
static inline void stm_wfi(void) { __asm__ volatile("dsb\n wfi" ::: "memory"); }

#endif /* STM32F4_H */
