/*
 * Every board's benchmark image (`camctl-microbit-bench.elf`,
 * `camctl-stm32-bench.elf`): instructions the firmware core spends per poll
 * on the board's CPU, for QEMU's -icount shift=0 (one instruction per
 * nanosecond of virtual time, so a timer's count is a fixed number of
 * instructions per tick: port_bench_tenths, common/port_glue.h;
 * deterministic on any host).
 *
 * The core runs with a HAL of its own here: a clock the benchmark sets, a
 * scripted sensor reading, a UART that takes everything and brings nothing
 * (no host, so no session: samples are conditioned and recognised, events are
 * not sent). It measures, after 300 samples of start-up tare:
 *   idle_tick     a poll with nothing due (no sample, no byte);
 *   sample_rest   a poll that takes one sample of an untouched sensor;
 *   sample_active a poll that takes one sample while a finger presses and slides;
 * each the mean over BENCH_POLLS polls, less the loop's own cost, in
 * instructions (to a tenth), then prints one line and stops:
 *   "bench idle_tick=213.2 sample_rest=743.6 sample_active=838.0 stack=444\n"
 * (stack: the deepest stack use seen, bytes). Then it ends QEMU through
 * semihosting (run it with -semihosting-config enable=on,target=native; on a
 * real board without a debugger that BKPT faults instead).
 */
#include <stdint.h>

#include "board.h"
#include "cc_device.h"
#include "port_glue.h"

#ifndef BENCH_POLLS
#define BENCH_POLLS 4000u
#endif
#define SAMPLE_PERIOD_US 1000u
#define STACK_PAINT 0xA5A5A5A5u

extern uint32_t _bss_end, _stack_top;

static cc_device_t g_device;
static uint64_t g_now;
static cc_sensor_reading_t g_reading;
static uint32_t g_step;

static uint64_t bench_now_us(void *ctx)
{
    (void)ctx;
    return g_now;
}

static size_t bench_uart_read(void *ctx, uint8_t *buf, size_t cap)
{
    (void)ctx;
    (void)buf;
    (void)cap;
    return 0u;
}

static size_t bench_uart_write(void *ctx, const uint8_t *buf, size_t len)
{
    (void)ctx;
    (void)buf;
    return len;
}

/* The sensors, the buttons (none pressed) and the remote (no click) in one
 * call, as the boards' HALs read them (cc_hal.h). */
static void bench_read_sensors(void *ctx, cc_sensor_reading_t *out)
{
    (void)ctx;
    out->force_raw_mn = g_reading.force_raw_mn;
    out->position = g_reading.position;
    out->touched = g_reading.touched;
    out->buttons = 0u;
    out->remote_clicks = 0u;
}

/* A settings store that holds nothing: a read fails (the core counts the slot
 * as blank), so does a write (never asked for: no host). A board core built
 * with a store (the micro:bit's: CC_HAL_WITH_STORE, cc_hal.h) calls both
 * without asking; one built without (CC_HAL_NO_STORE) calls neither. */
static bool bench_settings_read(void *ctx, uint32_t slot, uint8_t *buf, size_t len)
{
    (void)ctx;
    (void)slot;
    (void)buf;
    (void)len;
    return false;
}

static bool bench_settings_write(void *ctx, uint32_t slot, const uint8_t *buf, size_t len)
{
    (void)ctx;
    (void)slot;
    (void)buf;
    (void)len;
    return false;
}

/* An indicator that shows nothing (no host asks for it; a board core built
 * with CC_HAL_WITH_INDICATOR needs the function). */
static void bench_indicator_set(void *ctx, uint32_t mode, uint32_t rgb)
{
    (void)ctx;
    (void)mode;
    (void)rgb;
}

/* Bytes dropped: none (its UART brings nothing, so the core never asks; a
 * board core built with CC_HAL_WITH_OVERRUNS needs the function). */
static uint32_t bench_uart_take_overruns(void *ctx)
{
    (void)ctx;
    return 0u;
}

static const cc_hal_t bench_hal = {
    0, bench_now_us, bench_uart_read, bench_uart_write, CC_HAL_SENSORS(bench_read_sensors),
    0, 0, CC_HAL_INDICATOR(bench_indicator_set), CC_HAL_OVERRUNS(bench_uart_take_overruns),
    CC_HAL_STORE(bench_settings_read, bench_settings_write),   /* 0, 0 under CC_HAL_NO_STORE */
};

/* The finger: a press to 1.5 N over 200 ms, a slide back and forth, a lift
 * every 1.6 s; the sensor's own offset is 150 mN. No division: a division's
 * cost on a Cortex-M0 (libgcc's __udivsi3) grows with its operand, so the
 * loop measured alone would cost less than the same loop around the polls
 * and the difference would be counted as the firmware's. The phase repeats
 * every 1600 steps: the loop measured alone and the polls with a finger both
 * start at phase 0 (4000 steps, then the unmeasured lap's 4000). */
static void move_finger(void)
{
    uint32_t phase = g_step;
    g_step = phase + 1u == 1600u ? 0u : phase + 1u;
    g_reading.touched = phase < 1400u;
    g_reading.force_raw_mn = 150 + (phase < 200u ? (int32_t)phase * 7 : phase < 1400u ? 1400 : 0);
    /* 200 .. 899 and back while touched (the position is not read after the lift) */
    g_reading.position = (uint16_t)(200u + (phase < 700u ? phase : phase == 700u || phase >= 1400u ? 0u : 1400u - phase));
}

static void poll_nothing(cc_device_t *dev) { __asm__ volatile("" : : "r"(dev) : "memory"); }

/* Semihosting SYS_EXIT (0x18) with ADP_Stopped_ApplicationExit: QEMU exits 0. */
static void semihosting_exit(void)
{
    __asm__ volatile("movs r0, #0x18\n"
                     "ldr r1, =0x20026\n"
                     "bkpt #0xab\n" ::: "r0", "r1", "memory");
}

/* Mean instructions x10 per call of what (with or without time passing):
 * cc_device_poll itself, called as the board's main loop calls it. */
static uint32_t measure(void (*what)(cc_device_t *), uint32_t advance_us, int finger)
{
    uint32_t i, t0, t1;
    t0 = port_bench_ticks();
    for (i = 0u; i < BENCH_POLLS; i++) {
        g_now += advance_us;
        if (finger) {
            move_finger();
        }
        what(&g_device);
    }
    t1 = port_bench_ticks();
    return port_bench_tenths(t1 - t0, BENCH_POLLS);
}

static char *put_tenths(char *p, const char *name, uint32_t x10)
{
    char digits[12];
    int n = 0;
    uint32_t whole = x10 / 10u;
    while (*name != '\0') {
        *p++ = *name++;
    }
    do {
        digits[n++] = (char)('0' + whole % 10u);
        whole /= 10u;
    } while (whole != 0u);
    while (n > 0) {
        *p++ = digits[--n];
    }
    *p++ = '.';
    *p++ = (char)('0' + x10 % 10u);
    return p;
}

static void paint_stack(void)
{
    uint32_t *p = &_bss_end;
    uint32_t *sp = (uint32_t *)__builtin_frame_address(0) - 32;
    while (p < sp) {
        *p++ = STACK_PAINT;
    }
}

static uint32_t stack_used(void)
{
    uint32_t *p = &_bss_end;
    while (p < &_stack_top && *p == STACK_PAINT) {
        p++;
    }
    return (uint32_t)((uintptr_t)&_stack_top - (uintptr_t)p);
}

int main(void)
{
    char line[96];
    char *p = line;
    uint32_t loop, loop_finger, idle, rest, active, i;

    board_init();
    paint_stack();
    g_now = 1000000u;
    g_reading.force_raw_mn = 150;
    g_reading.position = 512u;
    cc_device_init(&g_device, &bench_hal, port_bench_info());
    for (i = 0u; i < 300u; i++) {
        g_now += SAMPLE_PERIOD_US;
        cc_device_poll(&g_device);
    }

    loop = measure(poll_nothing, SAMPLE_PERIOD_US, 0);
    loop_finger = measure(poll_nothing, SAMPLE_PERIOD_US, 1);
    idle = measure(cc_device_poll, 0u, 0);
    rest = measure(cc_device_poll, SAMPLE_PERIOD_US, 0);
    (void)measure(cc_device_poll, SAMPLE_PERIOD_US, 1);   /* the finger's first lap */
    active = measure(cc_device_poll, SAMPLE_PERIOD_US, 1);
    idle = idle > loop ? idle - loop : 0u;
    rest = rest > loop ? rest - loop : 0u;
    active = active > loop_finger ? active - loop_finger : 0u;

    p = put_tenths(p, "bench idle_tick=", idle);
    p = put_tenths(p, " sample_rest=", rest);
    p = put_tenths(p, " sample_active=", active);
    p = put_tenths(p, " stack=", stack_used() * 10u);
    p -= 2;   /* stack in whole bytes */
    *p++ = '\n';
    *p = '\0';
    board_uart_write_blocking(line);
    semihosting_exit();
    for (;;) {
        board_idle();
    }
}
