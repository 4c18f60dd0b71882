/*
 * CameraControl firmware: the input pipeline.
 *
 * Pure: readings and time in, input events out. No HAL calls, no heap. The
 * device core (cc_device.c) samples the HAL at the configured rate, feeds
 * cc_input_step() and drains cc_input_pop_event() into the event streams.
 */
#ifndef CC_INPUT_H
#define CC_INPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cc_hal.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Events buffered between two drains of the queue. */
#ifndef CC_INPUT_QUEUE_LEN
#define CC_INPUT_QUEUE_LEN 32u
#endif

/* Configuration; mirrors cameracontrol.v1.Config. */
typedef struct cc_input_config {
    uint32_t light_press_on_mn;
    uint32_t light_press_off_mn;
    uint32_t full_press_on_mn;
    uint32_t full_press_off_mn;
    uint32_t min_stage_gap_mn;
    uint32_t sample_rate_hz;
    uint32_t slide_interval_ms;
    uint32_t debounce_ms;
} cc_input_config_t;

/* One input event; field meanings as cameracontrol.v1.InputEvent, kind and
 * source as its enums. */
typedef struct cc_input_event {
    uint64_t timestamp_us;
    uint32_t kind;
    uint32_t source;
    uint32_t force_mn;
    uint32_t position;
    uint32_t peak_force_mn;
    uint32_t event_number;
} cc_input_event_t;

/* One conditioned sample, for the raw sample stream. */
typedef struct cc_raw_sample {
    uint64_t timestamp_us;
    uint16_t force_mn;   /* tared, filtered, saturating */
    uint16_t position;   /* 0 .. 0x7FFF */
    bool touched;
    uint8_t buttons;     /* raw levels, CC_BUTTON_* bits, before debouncing */
} cc_raw_sample_t;

/* All state of the pipeline; the caller owns the storage. */
typedef struct cc_input cc_input_t;

/* The defaults (documented in docs/SIMULATOR.md and docs/GESTURES.md). */
void cc_input_default_config(cc_input_config_t *out);

/* 0 when cfg (never NULL) is valid for a device whose force range ends at force_max_mn (the
 * Capabilities.force_max_mn it announces: a full_press_on_mn above it is refused, PROTOCOL.md §7), else
 * non-zero with *why set to a static message. */
int cc_input_validate_config(const cc_input_config_t *cfg, uint32_t force_max_mn, const char **why);

/* Starts the pipeline with cfg, a valid configuration (cc_input_validate_config; never NULL). */
void cc_input_init(cc_input_t *in, const cc_input_config_t *cfg);

/* Applies a validated configuration (never NULL) without losing press state. */
void cc_input_set_config(cc_input_t *in, const cc_input_config_t *cfg);

/* The settings' gates (config.proto Settings): with camera_control false no
 * event of the Camera Control is produced (the buttons and the remote go on);
 * with adjustments false no touch, slide or light-press event (the full press
 * goes on). A press or touch open when a gate closes still gets its UP, and
 * one that began while closed gets none: events always pair up. Suppressed
 * events take no event number. Both gates are open after cc_input_init. */
void cc_input_set_gates(cc_input_t *in, bool camera_control, bool adjustments);

/* One sample period: a reading with its raw button levels and remote clicks.
 * Returns the number of events now queued (0: nothing to pop). */
uint32_t cc_input_step(cc_input_t *in, uint64_t now_us, const cc_sensor_reading_t *reading);

/* Takes the oldest queued event; false when none. out may be NULL (the
 * event is dropped). */
bool cc_input_pop_event(cc_input_t *in, cc_input_event_t *out);

/* The oldest queued event in place, without taking it; NULL when none. It
 * stays valid until the next cc_input_step or cc_input_pop_event (a poll reads
 * it there and pops it with out NULL: no copy of the event). */
const cc_input_event_t *cc_input_peek_event(const cc_input_t *in);

/* The conditioned sample of the last step; false before the first step. */
bool cc_input_last_sample(const cc_input_t *in, cc_raw_sample_t *out);

/* Events lost because the queue was full (never expected: a bug if non-zero). */
uint32_t cc_input_queue_overflows(const cc_input_t *in);

#ifdef __cplusplus
}
#endif

/* The struct is public so callers can allocate it statically; its fields are
 * private to cc_input.c. */
#include "cc_input_state.h"

#endif /* CC_INPUT_H */
