/*
 * micro:bit port: clock, 1 ms tick and the interrupt-driven UART (board.h).
 */
#include "board.h"

#include "nrf51.h"
#include "port_ring.h"

/* micro:bit v1: the interface chip's UART is on P0.24 (TX) and P0.25 (RX). */
#define PIN_UART_TX 24u
#define PIN_UART_RX 25u
/* TIMER0 runs at 16 MHz; CC[0] is the 1 ms wake-up tick, CC[1] the main
 * loop's capture, CC[2] the tick interrupt's. */
#define TICKS_PER_US 16u
#define TICK_TICKS 16000u

#if (MICROBIT_UART_RX_BYTES & (MICROBIT_UART_RX_BYTES - 1u)) != 0u || \
    (MICROBIT_UART_TX_BYTES & (MICROBIT_UART_TX_BYTES - 1u)) != 0u
#error "MICROBIT_UART_RX_BYTES and MICROBIT_UART_TX_BYTES must be powers of two"
#endif

static uint8_t g_rx_buf[MICROBIT_UART_RX_BYTES];
static uint8_t g_tx_buf[MICROBIT_UART_TX_BYTES];
static port_ring_t g_rx = {0u, 0u, g_rx_buf, MICROBIT_UART_RX_BYTES};   /* ISR -> main loop */
static port_ring_t g_tx = {0u, 0u, g_tx_buf, MICROBIT_UART_TX_BYTES};   /* main loop -> ISR */
static volatile uint32_t g_tx_busy;        /* a byte is on the line (TXDRDY will follow) */
static volatile uint32_t g_rx_overruns;   /* written by the ISR only */
static volatile uint32_t g_rx_paused;     /* the ring was full: RXDRDY's interrupt is off until the main loop reads */
static uint32_t g_rx_overruns_taken;       /* written by the main loop only */

static uint32_t g_clock_last;   /* last captured 32-bit count */
static uint32_t g_clock_high;   /* wraps of the 32-bit count */

void microbit_uart_irq(void);
void microbit_timer0_irq(void);

void board_init(void)
{
    uint32_t spin;

    /* The 16 MHz crystal, so the clock and the baud rate are accurate. Bounded
     * wait: QEMU does not model CLOCK (the event never comes). */
    CLOCK_XTALFREQ = 0xFFu;
    CLOCK_EVENTS_HFCLKSTARTED = 0u;
    CLOCK_TASKS_HFCLKSTART = 1u;
    for (spin = 0u; spin < 100000u && CLOCK_EVENTS_HFCLKSTARTED == 0u; spin++) {
    }

    TIMER0_MODE = 0u;
    TIMER0_BITMODE = 3u;
    TIMER0_PRESCALER = 0u;
    TIMER0_CC(0) = TICK_TICKS;
    TIMER0_EVENTS_COMPARE(0) = 0u;
    TIMER0_INTENSET = 1u << 16;   /* COMPARE[0] */
    TIMER0_TASKS_CLEAR = 1u;
    TIMER0_TASKS_START = 1u;

    UART0_PSELTXD = PIN_UART_TX;
    UART0_PSELRXD = PIN_UART_RX;
    GPIO_OUTSET = 1u << PIN_UART_TX;
    GPIO_DIRSET = 1u << PIN_UART_TX;
    UART0_BAUDRATE = UART_BAUD_115200;
    UART0_ENABLE = 4u;
    UART0_EVENTS_RXDRDY = 0u;
    UART0_EVENTS_TXDRDY = 0u;
    UART0_EVENTS_ERROR = 0u;
    UART0_INTENSET = UART_INT_RXDRDY | UART_INT_TXDRDY | UART_INT_ERROR;
    UART0_TASKS_STARTRX = 1u;
    UART0_TASKS_STARTTX = 1u;

    NVIC_ISER = MICROBIT_IRQS_ENABLED;
    nrf_irq_enable();
}

/* ---------------------------------------------------------------- clock */

static uint32_t capture(void)
{
    TIMER0_TASKS_CAPTURE(1) = 1u;
    return TIMER0_CC(1);
}

uint32_t board_cycles16(void)
{
    return capture();
}

uint64_t board_now_us(void)
{
    /* Called by the main loop at least every tick, far more often than the
     * 32-bit count wraps (268 s): a smaller count than last time is a wrap. */
    uint32_t now = capture();
    if (now < g_clock_last) {
        g_clock_high++;
    }
    g_clock_last = now;
    return (((uint64_t)g_clock_high << 32) | now) / TICKS_PER_US;
}

/* Moves the tick's compare value on. A compare value in the past would match
 * only after the count wraps (268 s), so a late tick re-arms from now.
 * capture_reg: the capture register of the caller (1 main loop, 2 interrupt). */
static void tick_rearm(uint32_t capture_reg, bool due)
{
    uint32_t now, next, cc;
    TIMER0_TASKS_CAPTURE(capture_reg) = 1u;
    now = TIMER0_CC(capture_reg);
    cc = TIMER0_CC(0);
    next = due ? cc + TICK_TICKS : cc;
    if ((int32_t)(next - now) <= 0 || next - now > TICK_TICKS) {
        next = now + TICK_TICKS;
    }
    if (next != cc) {
        TIMER0_CC(0) = next;
    }
}

/* The tick only wakes the main loop (and re-arms itself). The new compare
 * value is written before the event is cleared: QEMU's model re-raises an
 * event cleared while the count still equals the old compare value. */
void microbit_timer0_irq(void)
{
    if (TIMER0_EVENTS_COMPARE(0) != 0u) {
        tick_rearm(2u, true);
        TIMER0_EVENTS_COMPARE(0) = 0u;
    }
}

/* ----------------------------------------------------------------- UART */

static void tx_next_locked(void)
{
    if (port_ring_used(&g_tx) != 0u) {
        g_tx_busy = 1u;
        UART0_TXD = port_ring_pop(&g_tx);
    } else {
        g_tx_busy = 0u;
    }
}

/* Queues only: received bytes into the RX ring, the next TX byte from the ring.
 *
 * With the ring full, a byte is left in the UART and RXDRDY's interrupt goes
 * off until the main loop has read from the ring (board_uart_read): the
 * UART's 6-byte FIFO holds what comes meanwhile, and a byte past those is the
 * UART's overrun (ERRORSRC), counted in rx_overruns. On a real line at 115200
 * baud the ring (11 ms of line) never fills while the main loop polls every
 * millisecond. Under QEMU, whose UART takes bytes from the pty as fast as the
 * firmware reads them, not at the baud rate, a host's burst would otherwise
 * overflow the ring; leaving the byte makes QEMU hold the rest back. */
void microbit_uart_irq(void)
{
    while (UART0_EVENTS_RXDRDY != 0u) {
        if (port_ring_room(&g_rx) == 0u) {
            UART0_INTENCLR = UART_INT_RXDRDY;
            g_rx_paused = 1u;
            break;
        }
        UART0_EVENTS_RXDRDY = 0u;   /* clear before reading RXD (the next byte sets it again) */
        (void)port_ring_push(&g_rx, (uint8_t)UART0_RXD);
    }
    if (UART0_EVENTS_ERROR != 0u) {
        uint32_t errors = UART0_ERRORSRC;
        UART0_EVENTS_ERROR = 0u;
        if ((errors & UART_ERRORSRC_OVERRUN) != 0u) {
            g_rx_overruns++;
        }
        UART0_ERRORSRC = errors;   /* write 1s to clear what was read (and counted) */
    }
    if (UART0_EVENTS_TXDRDY != 0u) {
        UART0_EVENTS_TXDRDY = 0u;
        tx_next_locked();
    }
}

size_t board_uart_read(uint8_t *buf, size_t cap)
{
    size_t n = port_ring_read(&g_rx, buf, cap);
    if (g_rx_paused != 0u && n > 0u) {
        /* room again: the byte left in the UART raises RXDRDY's interrupt at once */
        g_rx_paused = 0u;
        UART0_INTENSET = UART_INT_RXDRDY;
    }
    return n;
}

size_t board_uart_rx_pending(void)
{
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
        /* Starts the line if it is idle; the interrupt keeps it going. */
        nrf_irq_disable();
        if (g_tx_busy == 0u) {
            tx_next_locked();
        }
        nrf_irq_enable();
    }
    return n;
}

void board_uart_write_blocking(const char *text)
{
    uint32_t spin;
    NRF_REG(UART0_BASE + 0x308u) = UART_INT_TXDRDY | UART_INT_RXDRDY;   /* INTENCLR */
    UART0_TASKS_STARTTX = 1u;
    for (; *text != '\0'; text++) {
        UART0_EVENTS_TXDRDY = 0u;
        UART0_TXD = (uint8_t)*text;
        for (spin = 0u; spin < 100000u && UART0_EVENTS_TXDRDY == 0u; spin++) {
        }
    }
}

/* ----------------------------------------------------------------- misc */

void board_idle(void)
{
    /* With the interrupts masked, a byte that arrives between the check and
     * the wfi still wakes it (a pending interrupt ends wfi). The tick is
     * checked first: a compare value missed (an interrupt held off for a
     * whole tick) would otherwise leave the loop asleep until the next byte. */
    nrf_irq_disable();
    tick_rearm(1u, false);
    if (port_ring_used(&g_rx) == 0u) {
        nrf_wfi();
    }
    nrf_irq_enable();
}

void board_serial_number(char out[17])
{
    uint32_t words[2];
    int i;
    words[0] = FICR_DEVICEID(1);
    words[1] = FICR_DEVICEID(0);
    for (i = 0; i < 16; i++) {
        uint32_t d = (words[i / 8] >> (28 - 4 * (i % 8))) & 0xFu;
        out[i] = (char)(d < 10u ? '0' + d : 'A' - 10u + d);
    }
    out[16] = '\0';
}

void board_reset(void)
{
    SCB_AIRCR = SCB_AIRCR_SYSRESET;
    for (;;) {
    }
}

uint32_t board_uart_take_overruns(void)
{
    return port_take_count(&g_rx_overruns, &g_rx_overruns_taken);
}
