/*
 * CameraControl firmware: a template board port.
 *
 * Copy this file into your board's project, fill in every TODO, and run:
 *
 *     static cc_device_t device;          // all state, no heap
 *     int main(void) {
 *         board_init();                     // clocks, pins, UART/USB, sensors
 *         cc_device_init(&device, &cc_board_hal, &cc_board_info);
 *         cc_device_set_line_speed(&device, 9600);   // on a UART, its speed: retransmission
 *                                                    // timeouts allow for the ACK's time on it
 *         for (;;) {
 *             cc_device_poll(&device);      // at least once per sample period (1 ms at 1 kHz)
 *             // optionally sleep until the next UART byte or timer tick
 *         }
 *     }
 *
 * Rules for every HAL function (cc_hal.h): it must return promptly and never
 * block; it is called from the main loop only, never from an interrupt. Do the
 * real-time work in interrupts (UART receive, ADC conversion done, button
 * edges) and let them fill small ring buffers that these functions drain.
 *
 * This file compiles as is (scripts/check-firmware builds it for Cortex-M0+):
 * every function is a harmless stub until you replace its body.
 */
#include <stddef.h>
#include <stdint.h>

#include "cc_device.h"
#include "cc_hal.h"

/* Board-wide state the HAL functions share; passed back to them as ctx. */
typedef struct board_state {
    uint32_t unused;   /* TODO: UART ring buffers, sensor driver handles, ... */
} board_state_t;

static board_state_t board;

static uint64_t board_now_us(void *ctx)
{
    (void)ctx;
    /* TODO: return a monotonic microsecond clock since boot that never goes
     * backwards and does not wrap in practice (64 bits). A typical port
     * extends a 32-bit hardware timer to 64 bits in its overflow interrupt,
     * or reads a free-running 1 MHz timer (RP2040: time_us_64()). */
    return 0u;
}

static size_t board_uart_read(void *ctx, uint8_t *buf, size_t cap)
{
    (void)ctx;
    (void)buf;
    (void)cap;
    /* TODO: copy up to cap bytes that the UART (or USB CDC-ACM) received
     * since the last call into buf and return how many. The receive
     * interrupt (or DMA) should fill a ring buffer large enough for the
     * bytes that arrive between two polls: at 1 Mbaud and a 1 ms loop, at
     * least 128 bytes. Return 0 when nothing arrived; never wait. */
    return 0u;
}

static size_t board_uart_write(void *ctx, const uint8_t *buf, size_t len)
{
    (void)ctx;
    (void)buf;
    /* TODO: queue up to len bytes for transmission (a TX ring buffer drained
     * by the UART interrupt or DMA, or the USB CDC endpoint) and return how
     * many were taken. Taking fewer than len is fine: the core keeps the rest
     * and offers it again at the next poll. Never wait for the line. */
    return len;
}

static void board_read_sensors(void *ctx, cc_sensor_reading_t *out)
{
    (void)ctx;
    /* TODO: the latest force, touch and position readings.
     * - force_raw_mn: the force sensor (load cell via an HX711-class ADC,
     *   piezo-resistive film, strain gauge) converted to millinewtons,
     *   baseline offset included: the core tares and tracks drift itself.
     * - touched: the capacitive touch controller's "finger present".
     * - position: the slide strip position 0 .. slide_resolution - 1.
     * Return the most recent converted values; start the next conversion
     * here or let a timer do it, but do not wait for it. */
    out->force_raw_mn = 0;
    out->position = 0u;
    out->touched = false;
    /* TODO: the raw levels of the buttons present, as CC_BUTTON_* bits
     * (1 = pressed). Do not debounce: the core does (Config.debounce_ms).
     * CC_HAL_SHUTTER_SWITCH (CC_BUTTON_SHUTTER_SWITCH, checked against the
     * core's switches: cc_hal.h) is the Camera Control's full-press tactile
     * switch, if the board has one. */
    out->buttons = 0u;
    /* TODO: the number of remote clicks (e.g. a Bluetooth remote's button)
     * received since the last call, as CC_HAL_REMOTE(count) (checked
     * against the core's switches: cc_hal.h), then reset that count to 0.
     * 0 on boards without a remote. */
    out->remote_clicks = 0u;
}

static void board_haptic_play(void *ctx, uint32_t pattern, uint32_t intensity_percent)
{
    (void)ctx;
    (void)pattern;
    (void)intensity_percent;
    /* TODO: start the waveform for cameracontrol.v1.HapticPattern `pattern`
     * on the actuator (LRA driver such as a DRV2605 library effect, or a
     * short PWM burst) at intensity_percent (1..100) and return at once.
     * The core calls this itself with CLICK at full press and RELEASE when
     * it ends. Announce the playable patterns in cc_device_info_t.haptic_patterns.
     * Boards without an actuator set haptic_play to NULL instead. */
}

static void board_sound_play(void *ctx, uint32_t sound)
{
    (void)ctx;
    (void)sound;
    /* TODO: start the cameracontrol.v1.Sound `sound` (shutter, begin/end
     * recording) on the speaker or buzzer and return at once. Boards without
     * a speaker set sound_play to NULL and has_speaker to false. */
}

static void board_indicator_set(void *ctx, uint32_t mode, uint32_t rgb)
{
    (void)ctx;
    (void)mode;
    (void)rgb;
    /* TODO: set the indicator LED: mode is cameracontrol.v1.IndicatorMode
     * (OFF, ON, BLINK; blink from a timer, not here), rgb is 0xRRGGBB
     * (a single-colour LED may use any non-zero colour as "on"). Boards
     * without an LED set indicator_set to NULL and has_indicator_led false. */
}

/* The HAL the core uses. Optional functions may be NULL. */
const cc_hal_t cc_board_hal = {
    &board,
    board_now_us,
    board_uart_read,
    board_uart_write,
    CC_HAL_SENSORS(board_read_sensors),   /* BOARD_CORE_DEFS may then have CC_HAL_WITH_SENSORS (cc_hal.h) */
    board_haptic_play,
    board_sound_play,
    board_indicator_set,   /* CC_HAL_INDICATOR(board_indicator_set) or CC_HAL_INDICATOR_NONE (cc_hal.h) */
    /* uart_take_overruns: TODO return the bytes your rx ring/FIFO dropped (overrun flag), then
     * CC_HAL_OVERRUNS(board_uart_take_overruns) and CC_HAL_WITH_OVERRUNS in BOARD_CORE_DEFS */
    CC_HAL_OVERRUNS_NONE,
    /* settings_read and settings_write: TODO read a settings slot from flash (cc_settings.h), erase and
     * program one, then CC_HAL_STORE(board_settings_read, board_settings_write); CC_HAL_STORE_NONE: RAM
     * only (cc_hal.h: the macros check them against the core's switches, BOARD_CORE_DEFS) */
    CC_HAL_STORE_NONE,
};

/* What the device announces in the handshake. TODO: describe your board. */
const cc_device_info_t cc_board_info = {
    "Example Vendor",            /* vendor */
    "CameraControl board",       /* model */
    "0000000001",                /* serial_number: TODO read a unique id from the chip */
    "1.0.0",                     /* firmware_version */
    0u,                          /* usb_vendor_id: TODO your USB VID, 0 if not USB */
    0u,                          /* usb_product_id */
    true,                        /* has_force_sensor */
    true,                        /* has_touch_sensor */
    true,                        /* has_slide_strip */
    CC_BUTTON_VOLUME_UP | CC_BUTTON_VOLUME_DOWN, /* buttons */
    false,                       /* has_remote */
    10000u,                      /* force_max_mn */
    1024u,                       /* slide_resolution */
    20000u,                      /* slide_length_um */
    6u,                          /* max_controls */
    (1u << 1) | (1u << 2) | (1u << 3) | (1u << 4), /* haptic_patterns: DETENT, CLICK, RELEASE, LIMIT */
    false,                       /* has_speaker */
    false,                       /* has_indicator_led */
};
