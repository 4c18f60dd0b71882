/*
 * Host-build benchmark harness: the firmware core's polls, for counting
 * instructions under valgrind's callgrind (`camctl-bench firmware`).
 *
 *   build/cc_host_bench [POLLS]        (make host-bench; POLLS defaults to 4000)
 *
 * The core is built as camctl-sim builds it (this Makefile's host flags,
 * -O2) and runs with a HAL of its own, as the micro:bit benchmark image
 * (port/common/bench.c) does under QEMU: a clock the harness sets, a
 * scripted sensor reading, a UART that takes everything and brings nothing
 * (no host, so no session: samples are conditioned and recognised, events
 * are queued but not sent). After 300 samples of start-up tare, three
 * functions each call cc_device_poll POLLS times:
 *
 *   bench_idle_ticks       a poll with nothing due (no sample, no byte);
 *   bench_samples_at_rest  a poll that takes one sample of an untouched sensor;
 *   bench_samples_pressed  a poll that takes one sample while a finger presses
 *                          and slides (after one unmeasured lap of the finger).
 *
 * Under `valgrind --tool=callgrind` the cost callgrind records for the calls
 * from each of them to cc_device_poll, divided by the calls, is the
 * instructions per poll; the loop around the calls is not in it. Callgrind's
 * counts are deterministic: the same binary gives the same figures every run.
 * Run alone, it prints how many polls each function made.
 */
#include <stdio.h>
#include <stdlib.h>

#include "cc_device.h"

#define SAMPLE_PERIOD_US 1000u
#define WARM_UP_SAMPLES 300u

static cc_device_t g_device;
static uint64_t g_now;
static cc_sensor_reading_t g_reading;
static unsigned long g_step;

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

/* The sensors, the buttons (none pressed) and the remote (no click), as the
 * boards' HALs read them (port/common/bench.c). */
static void bench_read_sensors(void *ctx, cc_sensor_reading_t *out)
{
    (void)ctx;
    out->force_raw_mn = g_reading.force_raw_mn;
    out->position = g_reading.position;
    out->touched = g_reading.touched;
    out->buttons = 0u;
    out->remote_clicks = 0u;
}

static const cc_hal_t bench_hal = {
    NULL, bench_now_us, bench_uart_read, bench_uart_write, bench_read_sensors,
    NULL, NULL, NULL, NULL,
    NULL, NULL, /* settings in RAM only */
};

/* A board like the micro:bit's: force, touch and a slide strip, three buttons. */
static const cc_device_info_t bench_info = {
    "CameraControl",    /* vendor */
    "host benchmark",   /* model */
    "0000",             /* serial_number */
    "1.0.0",            /* firmware_version */
    0u,                 /* usb_vendor_id */
    0u,                 /* usb_product_id */
    true,               /* has_force_sensor */
    true,               /* has_touch_sensor */
    true,               /* has_slide_strip */
    CC_BUTTON_VOLUME_UP | CC_BUTTON_VOLUME_DOWN | CC_BUTTON_ACTION, /* buttons */
    false,              /* has_remote */
    10230u,             /* force_max_mn */
    1024u,              /* slide_resolution */
    50000u,             /* slide_length_um */
    6u,                 /* max_controls */
    0u,                 /* haptic_patterns */
    false,              /* has_speaker */
    true,               /* has_indicator_led */
};

/* The finger of port/common/bench.c: a press to 1.5 N over 200 ms, a slide
 * back and forth, a lift every 1.6 s; the sensor's own offset is 150 mN. */
static void move_finger(void)
{
    unsigned long phase = g_step % 1600u;
    g_step++;
    g_reading.touched = phase < 1400u;
    g_reading.force_raw_mn = 150 + (phase < 200u ? (int32_t)phase * 7 : phase < 1400u ? 1400 : 0);
    g_reading.position = (uint16_t)(200u + (phase < 700u ? phase : 1400u - phase) % 700u);
}

/* Not inlined: callgrind attributes the calls to cc_device_poll to these by name. */
__attribute__((noinline)) static unsigned long bench_idle_ticks(unsigned long polls)
{
    unsigned long i;
    for (i = 0u; i < polls; i++) {
        cc_device_poll(&g_device);
    }
    return i;
}

__attribute__((noinline)) static unsigned long bench_samples_at_rest(unsigned long polls)
{
    unsigned long i;
    for (i = 0u; i < polls; i++) {
        g_now += SAMPLE_PERIOD_US;
        cc_device_poll(&g_device);
    }
    return i;
}

__attribute__((noinline)) static unsigned long bench_samples_pressed(unsigned long polls)
{
    unsigned long i;
    for (i = 0u; i < polls; i++) {
        g_now += SAMPLE_PERIOD_US;
        move_finger();
        cc_device_poll(&g_device);
    }
    return i;
}

int main(int argc, char **argv)
{
    unsigned long polls = 4000u;
    unsigned long idle, rest, pressed, i;
    char *end = NULL;

    if (argc > 2 || (argc == 2 && ((polls = strtoul(argv[1], &end, 10)) == 0u || *end != '\0'))) {
        fprintf(stderr, "usage: cc_host_bench [POLLS]\n");
        return 2;
    }
    g_now = 1000000u;
    g_reading.force_raw_mn = 150;
    g_reading.position = 512u;
    cc_device_init(&g_device, &bench_hal, &bench_info);
    for (i = 0u; i < WARM_UP_SAMPLES; i++) {
        g_now += SAMPLE_PERIOD_US;
        cc_device_poll(&g_device);
    }
    idle = bench_idle_ticks(polls);
    rest = bench_samples_at_rest(polls);
    for (i = 0u; i < 1600u; i++) {   /* the finger's first lap, in main: not measured */
        g_now += SAMPLE_PERIOD_US;
        move_finger();
        cc_device_poll(&g_device);
    }
    pressed = bench_samples_pressed(polls);
    printf("host-bench idle_ticks=%lu samples_at_rest=%lu samples_pressed=%lu\n", idle, rest, pressed);
    return 0;
}
