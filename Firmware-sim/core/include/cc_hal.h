/*
 * CameraControl firmware: the hardware abstraction layer.
 *
 * The firmware core touches hardware only through these functions. A board
 * port fills a cc_hal_t (see Firmware-sim/port/template/cc_hal_template.c);
 * the simulator fills one with a virtual clock, a finger model and a pty.
 * Every function must return promptly: none may block.
 */
#ifndef CC_HAL_H
#define CC_HAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One raw reading of the Camera Control's sensors. */
typedef struct cc_sensor_reading {
    /* Force in millinewtons as the sensor reports it: includes the sensor's
     * baseline offset and drift, may be negative. The core tares it. */
    int32_t force_raw_mn;
    /* Position along the slide strip, 0 .. slide_resolution - 1; meaningful
     * only while touched. */
    uint16_t position;
    /* Capacitive touch detected. */
    bool touched;
    /* Raw button levels, CC_BUTTON_* bits (still bouncing: the core
     * debounces). */
    uint32_t buttons;
    /* Remote clicks received since the previous reading (0 if none, or no
     * remote). */
    uint32_t remote_clicks;
} cc_sensor_reading_t;

/* Button bits of cc_sensor_reading_t.buttons (raw, still bouncing). */
#define CC_BUTTON_VOLUME_UP   (1u << 0)
#define CC_BUTTON_VOLUME_DOWN (1u << 1)
#define CC_BUTTON_ACTION      (1u << 2)
/* The full-press tactile switch of the Camera Control, if the board has one;
 * boards without it let the force threshold alone decide the full press. */
#define CC_BUTTON_SHUTTER_SWITCH (1u << 3)

typedef struct cc_hal {
    /* Passed back to every function. */
    void *ctx;
    /* Monotonic microseconds: from 0 at boot on a board; a clock that runs
     * on through a reset of the core (the simulator's) is allowed, and then
     * Counters.uptime_us counts from its value at cc_device_init (see
     * CC_HAL_CLOCK_FROM_BOOT below). */
    uint64_t (*now_us)(void *ctx);
    /* Copies up to cap received bytes into buf; returns how many (0 if none). */
    size_t (*uart_read)(void *ctx, uint8_t *buf, size_t cap);
    /* Queues up to len bytes for transmission; returns how many it took. */
    size_t (*uart_write)(void *ctx, const uint8_t *buf, size_t len);
    /* Reads everything one sample needs now: the force, touch and slide
     * sensors, the buttons' raw levels and the remote clicks since the
     * previous call (one call per sample: each function-pointer call costs a
     * Cortex-M0's sampling poll about 8 instructions). */
    void (*read_sensors)(void *ctx, cc_sensor_reading_t *out);
    /* Starts a haptic waveform (cameracontrol.v1.HapticPattern). May be NULL. */
    void (*haptic_play)(void *ctx, uint32_t pattern, uint32_t intensity_percent);
    /* Starts a sound (cameracontrol.v1.Sound). May be NULL. */
    void (*sound_play)(void *ctx, uint32_t sound);
    /* Sets the indicator LED (cameracontrol.v1.IndicatorMode, 0xRRGGBB). May be NULL. */
    void (*indicator_set)(void *ctx, uint32_t mode, uint32_t rgb);
    /* Received bytes the UART's receive ring (or FIFO) had to drop because
     * it was full, since the previous call (0 if none). The core adds them to
     * the rx_overruns counter (PROTOCOL.md §2, v1.1). May be NULL (a HAL
     * that never drops, e.g. one that holds the line back). */
    uint32_t (*uart_take_overruns)(void *ctx);
    /* The settings store (core/include/cc_settings.h): slots 0 and 1 of len
     * (CC_SETTINGS_SLOT_BYTES) bytes each, kept across a reset (a flash page
     * each, a file). settings_read copies a slot into buf; false when it
     * cannot (the core then counts the slot as blank). settings_write
     * replaces a slot (erase and program); false when it failed. A write cut
     * short by a reset may leave the slot in any state: the core keeps the
     * other slot's copy. settings_write is the one function that may take as
     * long as a flash page erase and write (tens of milliseconds): the core
     * calls it only from SetSettings. Both NULL: the settings live in RAM
     * only (Capabilities.settings_persist false). */
    bool (*settings_read)(void *ctx, uint32_t slot, uint8_t *buf, size_t len);
    bool (*settings_write)(void *ctx, uint32_t slot, const uint8_t *buf, size_t len);
} cc_hal_t;

/*
 * A board's own image may be built without the code for parts its board
 * lacks: with CC_HAL_NO_HAPTIC (no haptic actuator) or CC_HAL_NO_SOUND (no
 * speaker) defined, the core acts as if haptic_play or sound_play were NULL,
 * whatever the HAL holds: PlayHaptic answers "no haptic actuator", PlaySound
 * "no speaker", Capabilities announces no haptic pattern and no speaker, a
 * full press plays nothing. With CC_HAL_NO_REMOTE (no remote) the input
 * pipeline ignores cc_sensor_reading_t.remote_clicks and Capabilities lists
 * no REMOTE input source, whatever cc_device_info_t.has_remote says, with
 * CC_HAL_NO_SHUTTER_SWITCH (no shutter switch) the CC_BUTTON_SHUTTER_SWITCH
 * bit of its buttons: a press is the force sensor's alone. None of the code
 * behind them is linked (the micro:bit's and the STM32F4's board images,
 * BOARD_CORE_DEFS in their Makefiles). An image whose HAL has the part (the
 * simulator's) is built without the switch.
 *
 * The settings store both ways: with CC_HAL_NO_STORE the core acts as if
 * settings_read and settings_write were NULL (the settings in RAM only, the
 * STM32F4's); with CC_HAL_WITH_STORE it takes the HAL to have both (the
 * micro:bit's flash pages), calls them without asking and links no code for
 * a device without a store. A HAL without them must not be built so (the
 * check below: CC_HAL_STORE_NONE).
 *
 * Functions a board's HAL may be known to have: with CC_HAL_WITH_SENSORS the
 * core calls read_sensors, with CC_HAL_WITH_OVERRUNS uart_take_overruns, with
 * CC_HAL_WITH_INDICATOR indicator_set, without asking whether they are set (a
 * HAL without them must not be built so: the checks below,
 * CC_HAL_OVERRUNS_NONE, CC_HAL_INDICATOR_NONE). Without the switches a NULL
 * one reads nothing (a reading of zeros), counts no dropped bytes, or makes
 * the device one without an indicator LED.
 *
 * With CC_HAL_CLOCK_FROM_BOOT the HAL's clock is known to start at 0 when the
 * board resets (a timer the reset clears): Counters.uptime_us (the time since
 * boot, which a host reads to tell a device that restarted) is now_us itself,
 * and the core keeps no boot time (8 bytes of RAM, 16 of flash on the
 * micro:bit). Without it the core notes the clock at cc_device_init.
 */
#if defined(CC_HAL_CLOCK_FROM_BOOT)
#define CC_UPTIME_US(dev, now_us) ((void)(dev), (now_us))
#else
#define CC_UPTIME_US(dev, now_us) ((now_us) - (dev)->boot_us)
#endif
#if defined(CC_HAL_NO_HAPTIC)
#define CC_HAL_HAS_HAPTIC(hal) ((void)(hal), false)
#else
#define CC_HAL_HAS_HAPTIC(hal) ((hal)->haptic_play != NULL)
#endif
#if defined(CC_HAL_NO_SOUND)
#define CC_HAL_HAS_SOUND(hal) ((void)(hal), false)
#else
#define CC_HAL_HAS_SOUND(hal) ((hal)->sound_play != NULL)
#endif
#if defined(CC_HAL_WITH_STORE) && defined(CC_HAL_NO_STORE)
#error "CC_HAL_WITH_STORE or CC_HAL_NO_STORE, not both"
#elif defined(CC_HAL_WITH_STORE)
#define CC_HAL_HAS_STORE(hal) ((void)(hal), true)
#elif defined(CC_HAL_NO_STORE)
#define CC_HAL_HAS_STORE(hal) ((void)(hal), false)
#else
#define CC_HAL_HAS_STORE(hal) ((hal)->settings_read != NULL && (hal)->settings_write != NULL)
#endif
#if defined(CC_HAL_WITH_SENSORS)
#define CC_HAL_HAS_SENSORS(hal) ((void)(hal), true)
#else
#define CC_HAL_HAS_SENSORS(hal) ((hal)->read_sensors != NULL)
#endif
#if defined(CC_HAL_WITH_OVERRUNS)
#define CC_HAL_HAS_OVERRUNS(hal) ((void)(hal), true)
#else
#define CC_HAL_HAS_OVERRUNS(hal) ((hal)->uart_take_overruns != NULL)
#endif
#if defined(CC_HAL_WITH_INDICATOR)
#define CC_HAL_HAS_INDICATOR(hal) ((void)(hal), true)
#else
#define CC_HAL_HAS_INDICATOR(hal) ((hal)->indicator_set != NULL)
#endif
#if defined(CC_HAL_NO_REMOTE)
#define CC_HAL_REMOTE_CLICKS(reading) ((void)(reading), 0u)
#else
#define CC_HAL_REMOTE_CLICKS(reading) ((reading)->remote_clicks)
#endif

/*
 * The switches and the HAL must agree: a core built with CC_HAL_WITH_STORE
 * calls settings_read and settings_write without asking, and one built with
 * CC_HAL_NO_REMOTE or CC_HAL_NO_SHUTTER_SWITCH drops what the HAL reports of
 * them. So a port compiles its own files (board_hal.c) with the same switches
 * (port/firmware.mk: BOARD_CORE_DEFS) and writes what its HAL has with these
 * macros, which fail to compile where the two disagree (the error names an
 * undeclared identifier that says how) and cost no flash:
 *
 *   CC_HAL_STORE(read, write)  settings_read and settings_write of a HAL with
 *                              a store (two functions: a null pointer does not
 *                              compile); 0, 0 under CC_HAL_NO_STORE (the
 *                              functions are then named but not linked)
 *   CC_HAL_STORE_NONE          the same of a HAL without one: 0, 0; does not
 *                              compile under CC_HAL_WITH_STORE
 *   CC_HAL_SENSORS(read)       read_sensors (a function: a null pointer does
 *                              not compile); a HAL without one writes 0 and
 *                              must not be built with CC_HAL_WITH_SENSORS
 *   CC_HAL_OVERRUNS(take)      uart_take_overruns of a HAL that has it (a
 *                              function, as above)
 *   CC_HAL_OVERRUNS_NONE       the same of a HAL without one: 0; does not
 *                              compile under CC_HAL_WITH_OVERRUNS
 *   CC_HAL_INDICATOR(set)      indicator_set of a HAL that has it (a function)
 *   CC_HAL_INDICATOR_NONE      the same of a HAL without one: 0; does not
 *                              compile under CC_HAL_WITH_INDICATOR
 *   CC_HAL_REMOTE(clicks)      the remote_clicks a HAL with a remote reports;
 *                              does not compile under CC_HAL_NO_REMOTE
 *   CC_HAL_SHUTTER_SWITCH      the buttons' bit a HAL with a shutter switch
 *                              reports (CC_BUTTON_SHUTTER_SWITCH); does not
 *                              compile under CC_HAL_NO_SHUTTER_SWITCH
 *
 * A HAL without a remote reports 0 clicks, one without a shutter switch never
 * its bit; with none of the switches the macros are the plain values.
 */
#if defined(CC_HAL_NO_STORE)
#define CC_HAL_STORE(read, write) (0 ? &(read) : 0), (0 ? &(write) : 0)
#else
#define CC_HAL_STORE(read, write) &(read), &(write)
#endif
#if defined(CC_HAL_WITH_STORE)
#define CC_HAL_STORE_NONE CC_HAL_WITH_STORE_but_this_HAL_has_no_settings_store
#else
#define CC_HAL_STORE_NONE 0, 0
#endif
#define CC_HAL_SENSORS(read) &(read)
#define CC_HAL_OVERRUNS(take) &(take)
#if defined(CC_HAL_WITH_OVERRUNS)
#define CC_HAL_OVERRUNS_NONE CC_HAL_WITH_OVERRUNS_but_this_HAL_counts_no_dropped_bytes
#else
#define CC_HAL_OVERRUNS_NONE 0
#endif
#define CC_HAL_INDICATOR(set) &(set)
#if defined(CC_HAL_WITH_INDICATOR)
#define CC_HAL_INDICATOR_NONE CC_HAL_WITH_INDICATOR_but_this_HAL_has_no_indicator_LED
#else
#define CC_HAL_INDICATOR_NONE 0
#endif
#if defined(CC_HAL_NO_REMOTE)
#define CC_HAL_REMOTE(clicks) CC_HAL_NO_REMOTE_but_this_HAL_reports_remote_clicks
#else
#define CC_HAL_REMOTE(clicks) (clicks)
#endif
#if defined(CC_HAL_NO_SHUTTER_SWITCH)
#define CC_HAL_SHUTTER_SWITCH CC_HAL_NO_SHUTTER_SWITCH_but_this_HAL_reports_the_shutter_switch
#else
#define CC_HAL_SHUTTER_SWITCH CC_BUTTON_SHUTTER_SWITCH
#endif

#ifdef __cplusplus
}
#endif

#endif /* CC_HAL_H */
