/*
 * STM32F4 port: clocks, the 1 ms SysTick and the interrupt-driven USART2 (board.h).
 */
#include "board.h"

#include "port_ring.h"
#include "stm32f4.h"

#define PIN_UART_TX 2u   /* PA2, AF7 */
#define PIN_UART_RX 3u   /* PA3, AF7 */
#define PIN_LED 5u       /* PA5: LD2 on Nucleo-64 boards */
#define AF_USART2 7u
#define BAUD 115200u
#define HSI_HZ 16000000u
/* PLL from the 16 MHz HSI: /8 = 2 MHz in, x168 = 336 MHz VCO, /4 = 84 MHz core, /7 = 48 MHz (USB). */
#define PLL_M 8u
#define PLL_N 168u
#define PLL_P_DIV4 1u
#define PLL_Q 7u
#define PLLCFGR_84MHZ (PLL_M | (PLL_N << 6) | (PLL_P_DIV4 << 16) | RCC_PLLCFGR_SRC_HSI | (PLL_Q << 24))
/* The fields written (M, N, P, source, Q); the other bits (reserved, or the F446's PLLR) keep their values. */
#define PLLCFGR_FIELDS 0x0F437FFFu
#define WAIT_SPINS 100000u
/* The receive side's catch-up after a stall (rx_catch_up) */
#define STALL_US 20000u
#define SETTLE_US 2000u
#define CATCH_UP_MAX_US 20000u

#if (STM32_UART_RX_BYTES & (STM32_UART_RX_BYTES - 1u)) != 0u || \
    (STM32_UART_TX_BYTES & (STM32_UART_TX_BYTES - 1u)) != 0u
#error "STM32_UART_RX_BYTES and STM32_UART_TX_BYTES must be powers of two"
#endif

static uint8_t g_rx_buf[STM32_UART_RX_BYTES];
static uint8_t g_tx_buf[STM32_UART_TX_BYTES];
static port_ring_t g_rx = {0u, 0u, g_rx_buf, STM32_UART_RX_BYTES};   /* ISR -> main loop */
static port_ring_t g_tx = {0u, 0u, g_tx_buf, STM32_UART_TX_BYTES};   /* main loop -> ISR */
static volatile uint32_t g_rx_overruns;   /* written by the ISR only */
static uint32_t g_rx_overruns_taken;       /* written by the main loop only */

static volatile uint64_t g_ms;        /* SysTick interrupts since board_init */
static uint32_t g_clock_last;         /* TIM2's last count (1 MHz) */
static uint32_t g_clock_high;         /* TIM2's wraps */
static uint64_t g_rx_looked_us;       /* when the main loop last looked for received bytes */
static uint32_t g_core_hz = HSI_HZ;
static uint32_t g_cycles_per_ms;
static bool g_emulated;

void stm32_systick_irq(void);
void stm32_usart2_irq(void);

static void pin_mode(uint32_t port, uint32_t pin, uint32_t mode)
{
    GPIO_MODER(port) = (GPIO_MODER(port) & ~(3u << (2u * pin))) | (mode << (2u * pin));
}

/* 84 MHz from the HSI through the PLL; APB1 42 MHz (its maximum on the F405),
 * APB2 84 MHz. Returns the APB1 clock (USART2's). Every wait is bounded: on a
 * chip whose PLL does not lock the core stays on the HSI and says so. */
static uint32_t clocks_init(void)
{
    uint32_t spin;
    FLASH_ACR = FLASH_ACR_LATENCY_2WS | FLASH_ACR_PRFTEN | FLASH_ACR_ICEN | FLASH_ACR_DCEN;
    RCC_PLLCFGR = (RCC_PLLCFGR & ~PLLCFGR_FIELDS) | PLLCFGR_84MHZ;
    if ((RCC_PLLCFGR & PLLCFGR_FIELDS) != PLLCFGR_84MHZ) {
        /* No RCC: QEMU's netduinoplus2, whose clocks are fixed (SysTick at 168 MHz). */
        g_emulated = true;
        g_core_hz = STM32_QEMU_CORE_HZ;
        return g_core_hz / 2u;
    }
    RCC_CR |= RCC_CR_PLLON;
    for (spin = 0u; spin < WAIT_SPINS && (RCC_CR & RCC_CR_PLLRDY) == 0u; spin++) {
    }
    RCC_CFGR = RCC_CFGR_PPRE1_DIV2 | RCC_CFGR_PPRE2_DIV1 | RCC_CFGR_SW_PLL;
    for (spin = 0u; spin < WAIT_SPINS && (RCC_CFGR & RCC_CFGR_SWS_MASK) != RCC_CFGR_SWS_PLL; spin++) {
    }
    g_core_hz = (RCC_CFGR & RCC_CFGR_SWS_MASK) == RCC_CFGR_SWS_PLL ? STM32_CORE_HZ : HSI_HZ;
    return g_core_hz / 2u;
}

void board_init(void)
{
    uint32_t apb1_hz = clocks_init();

    /* The microsecond clock: TIM2 free-running at 1 MHz. Not the SysTick's
     * interrupts: QEMU delivers those late or merged when the host is busy,
     * and the count it keeps from its virtual clock is right. */
    RCC_APB1ENR |= RCC_APB1ENR_TIM2EN;
    (void)RCC_APB1ENR;   /* the clock reaches the peripheral before its first access (F4 errata) */
    TIM2_PSC = (g_emulated ? STM32_QEMU_TIM2_HZ : g_core_hz) / 1000000u - 1u;
    TIM2_ARR = 0xFFFFFFFFu;
    TIM2_EGR = TIM_EGR_UG;   /* loads the prescaler */
    TIM2_CR1 = TIM_CR1_CEN;

    g_cycles_per_ms = g_core_hz / 1000u;
    SYST_RVR = g_cycles_per_ms - 1u;
    SYST_CVR = 0u;
    SYST_CSR = SYST_CSR_ENABLE | SYST_CSR_TICKINT | SYST_CSR_CLKSOURCE_CPU;

    RCC_AHB1ENR |= RCC_AHB1ENR_GPIOAEN | RCC_AHB1ENR_GPIOBEN | RCC_AHB1ENR_GPIOCEN;
    RCC_APB1ENR |= RCC_APB1ENR_USART2EN;
    (void)RCC_APB1ENR;
    GPIO_AFRL(GPIOA_BASE) = (GPIO_AFRL(GPIOA_BASE) & ~(0xFFu << (4u * PIN_UART_TX))) |
                            (AF_USART2 << (4u * PIN_UART_TX)) | (AF_USART2 << (4u * PIN_UART_RX));
    pin_mode(GPIOA_BASE, PIN_UART_TX, GPIO_MODE_AF);
    pin_mode(GPIOA_BASE, PIN_UART_RX, GPIO_MODE_AF);
    pin_mode(GPIOA_BASE, PIN_LED, GPIO_MODE_OUTPUT);

    /* 16x oversampling: BRR is the bus clock over the baud rate (mantissa.fraction/16). */
    USART_BRR(USART2_BASE) = (apb1_hz + BAUD / 2u) / BAUD;
    USART_CR1(USART2_BASE) = USART_CR1_UE | USART_CR1_TE | USART_CR1_RE | USART_CR1_RXNEIE;
    NVIC_ISER(STM32_LAST_IRQ_ENABLED / 32u) = 1u << (STM32_LAST_IRQ_ENABLED % 32u);   /* USART2 */
    stm_irq_enable();
}

bool board_is_emulated(void)
{
    return g_emulated;
}

uint32_t board_core_hz(void)
{
    return g_core_hz;
}

/* ---------------------------------------------------------------- clock */

void stm32_systick_irq(void)
{
    g_ms = g_ms + 1u;
}

/* Milliseconds and the SysTick's count (board_cycles: the benchmark's measure under
 * QEMU's -icount, where every interrupt comes on time), consistent: read with the interrupts
 * off; a wrap whose interrupt has not run yet (pending) counts as its millisecond. */
static uint64_t now_parts(uint32_t *cycles_in_ms)
{
    uint32_t primask, value;
    uint64_t ms;
    __asm__ volatile("mrs %0, primask" : "=r"(primask));
    stm_irq_disable();
    ms = g_ms;
    value = SYST_CVR;
    if ((SCB_ICSR & SCB_ICSR_PENDSTSET) != 0u) {
        ms++;
        value = SYST_CVR;
    }
    if (primask == 0u) {
        stm_irq_enable();
    }
    *cycles_in_ms = g_cycles_per_ms - 1u - value;
    return ms;
}

uint64_t board_now_us(void)
{
    /* Called by the main loop at least every millisecond, far more often than
     * the 32-bit count wraps (71 minutes): a smaller count than last time is a wrap. */
    uint32_t now = TIM2_CNT;
    if (now < g_clock_last) {
        g_clock_high++;
    }
    g_clock_last = now;
    return ((uint64_t)g_clock_high << 32) | now;
}

uint64_t board_cycles(void)
{
    uint32_t cycles;
    uint64_t ms = now_parts(&cycles);
    return ms * g_cycles_per_ms + cycles;
}

/* ----------------------------------------------------------------- UART */

/* Moves bytes from the TX ring into the USART while it takes them (TXE). On a
 * chip that is one or two bytes (the holding register, then the shift
 * register): the TXE interrupt sends the rest. QEMU 7.2's USART raises no TXE
 * interrupt at all but sends each byte at once and keeps TXE set, so there
 * this call sends the whole ring. Called with the interrupts off, from the
 * main loop (after queueing, and before sleeping). */
static void tx_kick_locked(void)
{
    while (port_ring_used(&g_tx) != 0u && (USART_SR(USART2_BASE) & USART_SR_TXE) != 0u) {
        USART_DR(USART2_BASE) = port_ring_pop(&g_tx);
    }
}

/* Takes every byte the USART holds into the RX ring (reading SR then DR
 * clears RXNE and an overrun). It reads SR again after each byte: QEMU 7.2
 * hands over its next byte while DR is read and then lowers the interrupt
 * line anyway, so a byte can wait with RXNE set and no interrupt. Returns
 * the last SR read. */
static uint32_t rx_drain(void)
{
    uint32_t sr = USART_SR(USART2_BASE);
    while ((sr & (USART_SR_RXNE | USART_SR_ORE)) != 0u) {
        uint8_t byte = (uint8_t)USART_DR(USART2_BASE);
        if ((sr & USART_SR_ORE) != 0u) {
            g_rx_overruns++;
        }
        if ((sr & USART_SR_RXNE) != 0u && !port_ring_push(&g_rx, byte)) {
            g_rx_overruns++;
        }
        sr = USART_SR(USART2_BASE);
    }
    return sr;
}

/* Queues only: received bytes into the RX ring, the next TX byte from the ring. */
void stm32_usart2_irq(void)
{
    uint32_t sr = rx_drain();
    if ((sr & USART_SR_TXE) != 0u && (USART_CR1(USART2_BASE) & USART_CR1_TXEIE) != 0u) {
        if (port_ring_used(&g_tx) != 0u) {
            USART_DR(USART2_BASE) = port_ring_pop(&g_tx);
        } else {
            USART_CR1(USART2_BASE) &= ~USART_CR1_TXEIE;   /* the ring is empty: the line rests */
        }
    }
}

/* After the main loop was held up for longer than STALL_US, the bytes the host
 * sent meanwhile may still wait outside the chip: QEMU hands them over one at
 * a time, each when the last one was read, and on a busy host it can be
 * descheduled for longer than the link's dead time (200 ms). Then this takes
 * what arrives until nothing came for SETTLE_US (at most CATCH_UP_MAX_US), so
 * the core does not judge the host silent while its heartbeats are on the way.
 * A chip's loop is never held up that long: there it returns at once. */
static void rx_catch_up(void)
{
    uint64_t now = board_now_us();
    if (g_rx_looked_us != 0u && now - g_rx_looked_us > STALL_US) {
        uint64_t start = now, last_byte = now;
        uint32_t seen = port_ring_used(&g_rx);
        while (now - last_byte < SETTLE_US && now - start < CATCH_UP_MAX_US) {
            stm_irq_disable();
            (void)rx_drain();
            stm_irq_enable();
            if (port_ring_used(&g_rx) != seen) {
                seen = port_ring_used(&g_rx);
                last_byte = now;
            }
            now = board_now_us();
        }
    }
    g_rx_looked_us = now;
}

size_t board_uart_read(uint8_t *buf, size_t cap)
{
    rx_catch_up();
    return port_ring_read(&g_rx, buf, cap);
}

size_t board_uart_rx_pending(void)
{
    rx_catch_up();
    return (size_t)port_ring_used(&g_rx);
}

size_t board_uart_tx_room(void)
{
    return (size_t)port_ring_room(&g_tx);
}

size_t board_uart_write(const uint8_t *buf, size_t len)
{
    size_t n = port_ring_write(&g_tx, buf, len);
    if (n > 0u) {
        /* TXE interrupts move the ring out; the ISR turns them off when it is empty. */
        stm_irq_disable();
        tx_kick_locked();
        USART_CR1(USART2_BASE) |= USART_CR1_TXEIE;
        stm_irq_enable();
    }
    return n;
}

void board_uart_write_blocking(const char *text)
{
    uint32_t spin;
    USART_CR1(USART2_BASE) &= ~(USART_CR1_TXEIE | USART_CR1_RXNEIE);
    for (; *text != '\0'; text++) {
        for (spin = 0u; spin < WAIT_SPINS && (USART_SR(USART2_BASE) & USART_SR_TXE) == 0u; spin++) {
        }
        USART_DR(USART2_BASE) = (uint8_t)*text;
    }
    for (spin = 0u; spin < WAIT_SPINS && (USART_SR(USART2_BASE) & USART_SR_TC) == 0u; spin++) {
    }
}

uint32_t board_uart_take_overruns(void)
{
    return port_take_count(&g_rx_overruns, &g_rx_overruns_taken);
}

/* ----------------------------------------------------------------- misc */

void board_idle(void)
{
    /* With the interrupts masked, a byte that arrives between the check and
     * the wfi still wakes it (a pending interrupt ends wfi); SysTick wakes it
     * every millisecond. */
    stm_irq_disable();
    tx_kick_locked();
    (void)rx_drain();   /* a byte QEMU left without an interrupt */
    if (port_ring_used(&g_rx) == 0u) {
        stm_wfi();
    }
    stm_irq_enable();
}

void board_serial_number(char out[25])
{
    static const char digits[] = "0123456789ABCDEF";
    uint32_t words[3] = {0x51454D55u, 0u, 0u};   /* "QEMU" */
    int i;
    if (!g_emulated) {
        words[0] = UID_WORD(2);
        words[1] = UID_WORD(1);
        words[2] = UID_WORD(0);
    }
    for (i = 0; i < 24; i++) {
        out[i] = digits[(words[i / 8] >> (28 - 4 * (i % 8))) & 0xFu];
    }
    out[24] = '\0';
}

void board_led(bool on)
{
    GPIO_BSRR(GPIOA_BASE) = on ? (1u << PIN_LED) : (1u << (PIN_LED + 16u));
}

void board_reset(void)
{
    SCB_AIRCR = SCB_AIRCR_SYSRESET;
    for (;;) {
    }
}
