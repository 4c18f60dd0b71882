/*
 * CameraControl firmware: the input pipeline (see cc_input.h).
 *
 * Pure C99: readings and time in, events out; no heap, no HAL, no floating
 * point. One call of cc_input_step() is one sample period.
 *
 * Force conditioning, per sample:
 *
 *   raw ──▶ − baseline ──▶ single-pole IIR ──▶ hysteresis stages ──▶ events
 *              ▲                                   ▲
 *   tare (mean of the first CC_INPUT_TARE_MS of      shutter switch (OR-ed)
 *   untouched samples), then a very slow low-pass
 *   of the raw value while untouched and unpressed
 *
 * Fixed point: forces are kept in Q12 millinewtons (value * 4096) in int32;
 * raw readings are clamped to +-CC_INPUT_RAW_LIMIT_MN so nothing overflows.
 * The filter and the drift tracker divide by powers of two chosen from the
 * sample rate so that their time constants are the same at every rate:
 * the force filter ~8 ms (2^shift samples), the drift tracker ~4-5 s.
 *
 * Cost on a Cortex-M0 (no divider, no 64-bit arithmetic; docs/FIRMWARE.md):
 * those divisions are shifts that round toward zero exactly as C's signed
 * division does (div_pow2), the debounce and slide intervals are kept in
 * microseconds from the configuration (no multiplication per sample), and
 * buttons whose levels match their debounced state are not visited at all.
 *
 * Default thresholds (docs/SIMULATOR.md, "Thresholds"): light press on at
 * 800 mN, off at 500 mN; full press on at 2500 mN, off at 1800 mN; at least
 * 1000 mN between the two "on" thresholds. Apple publishes no force figures;
 * the shape follows libinput's touch-pressure hysteresis (down at 12 % of the
 * range, up at 10 %: release well below press so noise and tremor near a
 * threshold cannot chatter) and the two-stage camera shutter (a half press
 * must be clearly separable from the full press, otherwise people shoot by
 * accident); both summarised in docs/APPLE-SEMANTICS.md.
 */
#include "cc_input.h"

#include "cc_assert.h"
#include "cc_pb.h"
#include "cc_udiv.h"

#define CC_INPUT_FRAC_BITS 12
#define CC_INPUT_ONE_Q ((int32_t)1 << CC_INPUT_FRAC_BITS)

/* Raw readings beyond this are clamped (keeps Q12 values inside int32). */
#ifndef CC_INPUT_RAW_LIMIT_MN
#define CC_INPUT_RAW_LIMIT_MN 100000
#endif
/* The start-up tare averages this long of untouched samples (32 samples at
 * 1 kHz, 4 at 100 Hz: never fewer than CC_INPUT_TARE_MIN_SAMPLES). */
#ifndef CC_INPUT_TARE_MS
#define CC_INPUT_TARE_MS 32u
#endif
#define CC_INPUT_TARE_MIN_SAMPLES 4u
/* The tare sums its readings in 32 bits: at most CC_INPUT_TARE_MS samples
 * (1 kHz) of +-CC_INPUT_RAW_LIMIT_MN each. */
#if CC_INPUT_TARE_MS > 20000u || CC_INPUT_RAW_LIMIT_MN > 100000
#error "CC_INPUT_TARE_MS * CC_INPUT_RAW_LIMIT_MN must fit the tare's 32-bit sum"
#endif
/* After this long without a complete tare (a finger resting on the control
 * since power-up), the pipeline tares with what it has (or zero) and starts
 * detecting presses; drift tracking corrects it later. */
#ifndef CC_INPUT_TARE_GIVE_UP_MS
#define CC_INPUT_TARE_GIVE_UP_MS 2000u
#endif
/* A SLIDE is reported only when the position moved at least this many
 * counts from the last reported one (sensor jitter of a resting finger
 * would otherwise stream SLIDE events). */
#ifndef CC_INPUT_SLIDE_DEADBAND
#define CC_INPUT_SLIDE_DEADBAND 3u
#endif

/* The buttons the pipeline debounces, CC_BUTTON_* bits: the shutter switch
 * unless the board has none (cc_hal.h: CC_HAL_NO_SHUTTER_SWITCH). */
#if defined(CC_HAL_NO_SHUTTER_SWITCH)
#define CC_INPUT_BUTTON_MASK ((uint32_t)(CC_BUTTON_VOLUME_UP | CC_BUTTON_VOLUME_DOWN | CC_BUTTON_ACTION))
#else
#define CC_INPUT_BUTTON_MASK \
    ((uint32_t)(CC_BUTTON_VOLUME_UP | CC_BUTTON_VOLUME_DOWN | CC_BUTTON_ACTION | CC_BUTTON_SHUTTER_SWITCH))
#endif

#define KIND(k) ((uint32_t)CC_PB_INPUT_EVENT_KIND_##k)
#define SOURCE(s) ((uint32_t)CC_PB_INPUT_SOURCE_##s)

enum { STAGE_NONE = 0, STAGE_LIGHT = 1, STAGE_FULL = 2 };
enum { BTN_VOLUME_UP = 0, BTN_VOLUME_DOWN = 1, BTN_ACTION = 2, BTN_SHUTTER = 3 };

void cc_input_default_config(cc_input_config_t *out)
{
    out->light_press_on_mn = 800u;
    out->light_press_off_mn = 500u;
    out->full_press_on_mn = 2500u;
    out->full_press_off_mn = 1800u;
    out->min_stage_gap_mn = 1000u;
    out->sample_rate_hz = 1000u;
    out->slide_interval_ms = 16u;   /* ~60 Hz: one SLIDE per display frame */
    out->debounce_ms = 5u;          /* tactile switches bounce for 1-5 ms */
}

int cc_input_validate_config(const cc_input_config_t *cfg, uint32_t force_max_mn, const char **why)
{
    const char *msg = 0;
    if (cfg->light_press_on_mn == 0u || cfg->light_press_off_mn == 0u ||
               cfg->full_press_on_mn == 0u || cfg->full_press_off_mn == 0u ||
               cfg->min_stage_gap_mn == 0u) {
        msg = "thresholds must be non-zero";
    } else if (!(cfg->light_press_off_mn < cfg->light_press_on_mn)) {
        msg = "need light_press_off_mn < light_press_on_mn";
    } else if (!(cfg->light_press_on_mn <= cfg->full_press_off_mn)) {
        msg = "need full_press_off_mn >= light_press_on_mn";
    } else if (!(cfg->full_press_off_mn < cfg->full_press_on_mn)) {
        msg = "need full_press_off_mn < full_press_on_mn";
    } else if (cfg->full_press_on_mn > force_max_mn) {
        msg = "need full_press_on_mn <= force_max_mn";
    } else if (cfg->full_press_on_mn - cfg->light_press_on_mn < cfg->min_stage_gap_mn) {
        msg = "need full_press_on_mn - light_press_on_mn >= min_stage_gap_mn";
    } else if (cfg->sample_rate_hz != 100u && cfg->sample_rate_hz != 250u &&
               cfg->sample_rate_hz != 500u && cfg->sample_rate_hz != 1000u) {
        msg = "sample_rate_hz must be 100/250/500/1000";
    } else if (cfg->slide_interval_ms < 1u || cfg->slide_interval_ms > 1000u) {
        msg = "slide_interval_ms must be 1..1000";
    } else if (cfg->debounce_ms < 1u || cfg->debounce_ms > 100u) {
        msg = "debounce_ms must be 1..100";
    }
    if (why != 0) {
        *why = msg;
    }
    return msg == 0 ? 0 : 1;
}

static void apply_rate(cc_input_t *in)
{
    /* validated: debounce <= 100 ms, slide interval <= 1000 ms, both fit 32 bits in us */
    in->debounce_us = in->config.debounce_ms * 1000u;
    in->slide_interval_us = in->config.slide_interval_ms * 1000u;
    /* Force filter ~8 ms and drift tracker ~4 s (2^shift samples). */
    switch (in->config.sample_rate_hz) {
    case 100u:  in->filter_shift = 0u; in->drift_shift = 9u;  break;
    case 250u:  in->filter_shift = 1u; in->drift_shift = 10u; break;
    case 500u:  in->filter_shift = 2u; in->drift_shift = 11u; break;
    default:    in->filter_shift = 3u; in->drift_shift = 12u; break;
    }
    in->tare_target = CC_UDIV32(CC_INPUT_TARE_MS * in->config.sample_rate_hz, 1000u);
    if (in->tare_target < CC_INPUT_TARE_MIN_SAMPLES) {
        in->tare_target = CC_INPUT_TARE_MIN_SAMPLES;
    }
    in->tare_give_up = CC_UDIV32(CC_INPUT_TARE_GIVE_UP_MS * in->config.sample_rate_hz, 1000u);
}

void cc_input_init(cc_input_t *in, const cc_input_config_t *cfg)
{
    unsigned i;
    char *p = (char *)in;
    size_t n;
    for (n = 0; n < sizeof(*in); n++) {
        p[n] = 0;
    }
    /* validated by the caller (cc_device_init passes the defaults): asserted in the host build only */
    CC_ASSERT(cfg != 0 && cc_input_validate_config(cfg, CC_INPUT_RAW_LIMIT_MN, 0) == 0);
    in->config = *cfg;
    apply_rate(in);
    for (i = 0; i < CC_INPUT_DEBOUNCED_BUTTONS; i++) {
        in->buttons[i].stable = false;
        in->buttons[i].candidate = false;
        in->buttons[i].candidate_since_us = 0u;
    }
    in->button_candidates = 0u;
    in->buttons_unsettled = 0u;
    in->gate_camera_control = true;
    in->gate_adjustments = true;
}

void cc_input_set_config(cc_input_t *in, const cc_input_config_t *cfg)
{
    /* validated by the caller against the device's force range (ConfigService): asserted in the host build */
    CC_ASSERT(cfg != 0 && cc_input_validate_config(cfg, CC_INPUT_RAW_LIMIT_MN, 0) == 0);
    in->config = *cfg;
    apply_rate(in);
}

void cc_input_set_gates(cc_input_t *in, bool camera_control, bool adjustments)
{
    in->gate_camera_control = camera_control;
    in->gate_adjustments = adjustments;
}

/* gate_reported bits: the DOWN of the open touch, light press, full press was reported. */
#define GATE_TOUCH 1u
#define GATE_LIGHT 2u
#define GATE_FULL 4u

/* Whether the settings let a Camera Control event through (cc_input_set_gates). */
static bool gate_passes(cc_input_t *in, uint32_t kind)
{
    bool allowed = in->gate_camera_control && in->gate_adjustments;
    uint8_t bit;
    bool down;
    switch (kind) {
    case KIND(TOUCH_DOWN): bit = GATE_TOUCH; down = true; break;
    case KIND(TOUCH_UP): bit = GATE_TOUCH; down = false; break;
    case KIND(LIGHT_PRESS_DOWN): bit = GATE_LIGHT; down = true; break;
    case KIND(LIGHT_PRESS_UP): bit = GATE_LIGHT; down = false; break;
    case KIND(FULL_PRESS_DOWN): bit = GATE_FULL; down = true; allowed = in->gate_camera_control; break;
    case KIND(FULL_PRESS_UP): bit = GATE_FULL; down = false; break;
    case KIND(SLIDE): return allowed && (in->gate_reported & GATE_TOUCH) != 0u;
    default: return true;
    }
    if (down) {
        if (allowed) {
            in->gate_reported = (uint8_t)(in->gate_reported | bit);
        } else {
            in->gate_reported = (uint8_t)(in->gate_reported & ~bit);
        }
        return allowed;
    }
    if ((in->gate_reported & bit) == 0u) {
        return false;
    }
    in->gate_reported = (uint8_t)(in->gate_reported & ~bit);
    return true;
}

static void push_event(cc_input_t *in, uint64_t now_us, uint32_t kind, uint32_t source,
                       uint32_t force_mn, uint32_t peak_mn)
{
    cc_input_event_t *e;
    if (source == SOURCE(CAMERA_CONTROL) && !gate_passes(in, kind)) {
        return;
    }
    in->event_number++;
    if (in->count >= CC_INPUT_QUEUE_LEN) {
        in->overflows++;
        return;
    }
    e = &in->queue[(in->head + in->count) % CC_INPUT_QUEUE_LEN];
    in->count++;
    e->timestamp_us = now_us;
    e->kind = kind;
    e->source = source;
    e->force_mn = force_mn;
    e->position = in->position;
    e->peak_force_mn = peak_mn;
    e->event_number = in->event_number;
}

static int32_t clamp_raw(int32_t raw)
{
    if (raw > CC_INPUT_RAW_LIMIT_MN) {
        return CC_INPUT_RAW_LIMIT_MN;
    }
    if (raw < -CC_INPUT_RAW_LIMIT_MN) {
        return -CC_INPUT_RAW_LIMIT_MN;
    }
    return raw;
}

/* x / 2^shift, rounded toward zero as C's signed division rounds (so both
 * signs behave alike), without a division: |x| < 2^31 here (clamped raw
 * readings in Q12). */
static int32_t div_pow2(int32_t x, uint8_t shift)
{
    return x >= 0 ? (int32_t)((uint32_t)x >> shift) : -(int32_t)((uint32_t)-x >> shift);
}

/* The conditioned force in whole millinewtons, never negative. */
static uint32_t conditioned_mn(const cc_input_t *in)
{
    if (!in->tared || in->filtered_q <= 0) {
        return 0u;
    }
    return (uint32_t)((in->filtered_q + CC_INPUT_ONE_Q / 2) / CC_INPUT_ONE_Q);
}

static void condition_force(cc_input_t *in, const cc_sensor_reading_t *r)
{
    int32_t raw = clamp_raw(r->force_raw_mn);
    int32_t raw_q = raw * CC_INPUT_ONE_Q;

    if (!in->tared) {
        in->samples_seen++;   /* counted until the tare only (at most tare_give_up) */
        if (!r->touched) {
            in->tare_sum_mn += raw;
            in->tare_count++;
        }
        if (in->tare_count >= in->tare_target || in->samples_seen >= in->tare_give_up) {
            /* the mean, rounded toward zero like a signed division, from an
             * unsigned one (which the core needs anyway: no signed divider
             * linked on small cores) */
            int32_t mean = 0;
            if (in->tare_count > 0u) {
                uint32_t magnitude = in->tare_sum_mn >= 0 ? (uint32_t)in->tare_sum_mn : (uint32_t)-in->tare_sum_mn;
                mean = (int32_t)CC_UDIV32(magnitude, in->tare_count);
                mean = in->tare_sum_mn >= 0 ? mean : -mean;
            }
            in->baseline_q = mean * CC_INPUT_ONE_Q;
            in->filtered_q = 0;
            in->tared = true;
        }
        return;
    }

    /* Single-pole IIR: y += (x - y) / 2^shift (rounded toward zero, so
     * negative values round the same way as positive ones). */
    {
        int32_t x = raw_q - in->baseline_q;
        in->filtered_q += div_pow2(x - in->filtered_q, in->filter_shift);
    }

    /* Drift: follow the unloaded sensor very slowly while nobody touches it
     * and no press is in progress (a force level condition would lock the
     * tracker out for good once the drift outran it). */
    if (!r->touched && in->stage == STAGE_NONE && in->force_stage == STAGE_NONE) {
        in->baseline_q += div_pow2(raw_q - in->baseline_q, in->drift_shift);
    }
}

static void update_force_stage(cc_input_t *in, uint32_t f)
{
    const cc_input_config_t *c = &in->config;
    switch (in->force_stage) {
    case STAGE_NONE:
        if (f >= c->full_press_on_mn) {
            in->force_stage = STAGE_FULL;
        } else if (f >= c->light_press_on_mn) {
            in->force_stage = STAGE_LIGHT;
        }
        break;
    case STAGE_LIGHT:
        if (f >= c->full_press_on_mn) {
            in->force_stage = STAGE_FULL;
        } else if (f < c->light_press_off_mn) {
            in->force_stage = STAGE_NONE;
        }
        break;
    default:
        if (f < c->full_press_off_mn) {
            in->force_stage = f < c->light_press_off_mn ? STAGE_NONE : STAGE_LIGHT;
        }
        break;
    }
}

static void update_stage(cc_input_t *in, uint64_t now_us, uint32_t f, bool shutter)
{
    uint8_t target = shutter ? (uint8_t)STAGE_FULL : in->force_stage;

    if (in->stage >= STAGE_LIGHT && f > in->light_peak_mn) {
        in->light_peak_mn = f;
    }
    if (in->stage >= STAGE_FULL && f > in->full_peak_mn) {
        in->full_peak_mn = f;
    }
    while (in->stage < target) {
        in->stage++;
        if (in->stage == STAGE_LIGHT) {
            in->light_peak_mn = f;
            push_event(in, now_us, KIND(LIGHT_PRESS_DOWN), SOURCE(CAMERA_CONTROL), f, 0u);
        } else {
            in->full_peak_mn = f;
            if (f > in->light_peak_mn) {
                in->light_peak_mn = f;
            }
            push_event(in, now_us, KIND(FULL_PRESS_DOWN), SOURCE(CAMERA_CONTROL), f, 0u);
        }
    }
    while (in->stage > target) {
        if (in->stage == STAGE_FULL) {
            push_event(in, now_us, KIND(FULL_PRESS_UP), SOURCE(CAMERA_CONTROL), f,
                       in->full_peak_mn);
        } else {
            push_event(in, now_us, KIND(LIGHT_PRESS_UP), SOURCE(CAMERA_CONTROL), f,
                       in->light_peak_mn);
        }
        in->stage--;
    }
}

/* Debounces one button (bit: its CC_BUTTON_* bit); returns +1 when it went
 * down, -1 up, 0 otherwise. Keeps button_candidates and buttons_unsettled
 * (the bits whose candidate differs from the stable level) up to date. */
static int debounce(cc_input_t *in, unsigned index, uint32_t bit, bool level, uint64_t now_us)
{
    cc_input_button_state_t *b = &in->buttons[index];
    if (level != b->candidate) {
        b->candidate = level;
        b->candidate_since_us = now_us;
        if (level) {
            in->button_candidates |= bit;
        } else {
            in->button_candidates &= ~bit;
        }
        if (b->candidate != b->stable) {
            in->buttons_unsettled |= bit;
        } else {
            in->buttons_unsettled &= ~bit;
        }
    }
    if (b->candidate != b->stable && now_us - b->candidate_since_us >= (uint64_t)in->debounce_us) {
        b->stable = b->candidate;
        in->buttons_unsettled &= ~bit;
        return b->stable ? 1 : -1;
    }
    return 0;
}

uint32_t cc_input_step(cc_input_t *in, uint64_t now_us, const cc_sensor_reading_t *reading)
{
    static const uint32_t button_bits[3] = {
        CC_BUTTON_VOLUME_UP, CC_BUTTON_VOLUME_DOWN, CC_BUTTON_ACTION
    };
    static const uint32_t button_sources[3] = {
        SOURCE(VOLUME_UP), SOURCE(VOLUME_DOWN), SOURCE(ACTION_BUTTON)
    };
    static const cc_sensor_reading_t none = { 0, 0u, false, 0u, 0u };
    const cc_sensor_reading_t *r = reading != 0 ? reading : &none;
    uint32_t buttons = r->buttons;
    uint32_t remote_clicks = CC_HAL_REMOTE_CLICKS(r);   /* 0 on a board without a remote (cc_hal.h) */
    uint32_t f;
    unsigned i;
    /* every button already at its debounced level, none changing: nothing to debounce */
    bool buttons_quiet = (buttons & CC_INPUT_BUTTON_MASK) == in->button_candidates && in->buttons_unsettled == 0u;
    uint16_t pos = r->position > 0x7FFFu ? (uint16_t)0x7FFFu : r->position;

    condition_force(in, r);
    f = conditioned_mn(in);

    /* Touch down first, so a press that starts with it follows it. */
    if (r->touched) {
        in->position = pos;
    }
    if (r->touched && !in->touched) {
        in->touched = true;
        in->slide_reported = pos;
        in->slide_last_us = now_us;
        push_event(in, now_us, KIND(TOUCH_DOWN), SOURCE(CAMERA_CONTROL), f, 0u);
    }

    /* Press stages (force, OR-ed with the shutter switch when fitted). */
    if (in->tared) {
        update_force_stage(in, f);
    }
#if defined(CC_HAL_NO_SHUTTER_SWITCH)
    update_stage(in, now_us, f, false);   /* the force sensor's alone (cc_hal.h) */
#else
    if (!buttons_quiet) {
        (void)debounce(in, BTN_SHUTTER, CC_BUTTON_SHUTTER_SWITCH, (buttons & CC_BUTTON_SHUTTER_SWITCH) != 0u, now_us);
    }
    update_stage(in, now_us, f, in->buttons[BTN_SHUTTER].stable);
#endif

    /* Slide: latest position, at most one per interval, only when it moved. */
    if (r->touched && in->touched) {
        uint16_t d = pos > in->slide_reported ? (uint16_t)(pos - in->slide_reported)
                                              : (uint16_t)(in->slide_reported - pos);
        if (d >= CC_INPUT_SLIDE_DEADBAND &&
            now_us - in->slide_last_us >= (uint64_t)in->slide_interval_us) {
            in->slide_reported = pos;
            in->slide_last_us = now_us;
            push_event(in, now_us, KIND(SLIDE), SOURCE(CAMERA_CONTROL), f, 0u);
        }
    }

    /* Buttons. */
    for (i = 0; i < 3u && !buttons_quiet; i++) {
        int edge = debounce(in, i, button_bits[i], (buttons & button_bits[i]) != 0u, now_us);
        if (edge > 0) {
            push_event(in, now_us, KIND(BUTTON_DOWN), button_sources[i], 0u, 0u);
        } else if (edge < 0) {
            push_event(in, now_us, KIND(BUTTON_UP), button_sources[i], 0u, 0u);
        }
    }

    /* Remote clicks: one event each (beyond the queue length they only count). */
    if (remote_clicks > CC_INPUT_QUEUE_LEN) {
        in->event_number += remote_clicks - CC_INPUT_QUEUE_LEN;
        in->overflows += remote_clicks - CC_INPUT_QUEUE_LEN;
        remote_clicks = CC_INPUT_QUEUE_LEN;
    }
    for (i = 0; i < remote_clicks; i++) {
        push_event(in, now_us, KIND(REMOTE_CLICK), SOURCE(REMOTE), 0u, 0u);
    }

    /* Touch up last, after the press it ended. */
    if (!r->touched && in->touched) {
        in->touched = false;
        push_event(in, now_us, KIND(TOUCH_UP), SOURCE(CAMERA_CONTROL), f, 0u);
    }

    /* The last sample: its time and force (its position and touch are in->position and
     * in->touched, which now follow r->touched). */
    in->have_sample = true;
    in->last_us = now_us;
    in->last_force_mn = f > 0xFFFFu ? (uint16_t)0xFFFFu : (uint16_t)f;
    return in->count;
}

bool cc_input_pop_event(cc_input_t *in, cc_input_event_t *out)
{
    if (in->count == 0u) {
        return false;
    }
    if (out != 0) {
        *out = in->queue[in->head];
    }
    in->head = (in->head + 1u) % CC_INPUT_QUEUE_LEN;
    in->count--;
    return true;
}

const cc_input_event_t *cc_input_peek_event(const cc_input_t *in)
{
    return in->count == 0u ? 0 : &in->queue[in->head];
}

bool cc_input_last_sample(const cc_input_t *in, cc_raw_sample_t *out)
{
    if (!in->have_sample) {
        return false;
    }
    if (out != 0) {   /* field by field: a struct copy is a memcpy call on small cores */
        out->timestamp_us = in->last_us;
        out->force_mn = in->last_force_mn;
        out->position = in->position;
        out->touched = in->touched;
        out->buttons = (uint8_t)in->button_candidates;   /* the last reading's levels (debounce keeps them) */
    }
    return true;
}

uint32_t cc_input_queue_overflows(const cc_input_t *in)
{
    return in->overflows;
}
