/*
 * CameraControl simulator: the scenario planner (see ccsim_planner.h and
 * docs/SIMULATOR.md): one step and the finger's state before it in, a
 * piecewise-linear profile out.
 */
#include "ccsim_planner.h"

#include <string.h>

/* Finger constants of the planner. */
#define REST_MN 150        /* a resting fingertip: touch without pressing */
#define LAND_US 15000u     /* from first contact to resting force */
#define LIFT_US 10000u     /* from resting force to lift-off */
#define OFF_US 10000u      /* off the strip after a lift, before the next step: one
                              sample at the slowest rate (100 Hz), so the firmware
                              sees the touch end before a next gesture lands */
#define BUTTON_SETTLE_US 20000u

static void kf(ccsim_plan_t *p, uint32_t dt_us, int32_t force, uint32_t pos, bool touched)
{
    ccsim_keyframe_t *k;
    uint32_t t = p->count == 0u ? 0u : p->frames[p->count - 1u].t_us + dt_us;
    if (p->count >= CCSIM_MAX_KEYFRAMES) {
        return; /* the planner never needs more; see ccsim_plan_step */
    }
    k = &p->frames[p->count++];
    k->t_us = t;
    k->force_mn = force;
    k->position = pos;
    k->touched = touched;
    p->duration_us = t;
}

/* Lands the finger when it is lifted; returns the force to come back to. */
static int32_t land(ccsim_plan_t *p, const ccsim_finger_state_t *s, uint32_t pos)
{
    if (s->touching) {
        kf(p, 0u, s->force_mn, pos, true);
        return s->force_mn;
    }
    kf(p, 0u, 0, pos, true);
    kf(p, LAND_US, REST_MN, pos, true);
    return REST_MN;
}

/* Lifts the finger off the strip: the force falls to 0 over lift_us while it
 * still touches, then it stays off for OFF_US (touched is the segment's value,
 * so the frame that ends the fall is the first untouched one, and a step that
 * follows at once lands a finger the firmware saw leave). */
static void lift(ccsim_plan_t *p, uint32_t lift_us, uint32_t pos)
{
    kf(p, lift_us, 0, pos, false);
    kf(p, OFF_US, 0, pos, false);
}

/* Ends a gesture: lifts the finger if it was lifted before. */
static void finish(ccsim_plan_t *p, ccsim_finger_state_t *s, uint32_t pos)
{
    if (!s->touching) {
        lift(p, LIFT_US, pos);
        s->force_mn = 0;
    }
    s->position = pos;
}

void ccsim_plan_step(const ccsim_step_t *step, ccsim_finger_state_t *s, ccsim_plan_t *p)
{
    uint32_t pos = step->has_at ? step->at : s->position;
    int32_t base;
    memset(p, 0, sizeof(*p));

    switch (step->kind) {
    case CCSIM_STEP_PAUSE:
        kf(p, 0u, s->force_mn, s->position, s->touching);
        kf(p, step->hold_us, s->force_mn, s->position, s->touching);
        break;
    case CCSIM_STEP_TOUCH:
        (void)land(p, s, pos);
        kf(p, step->hold_us, s->touching ? s->force_mn : REST_MN, pos, true);
        if (!s->touching) {
            s->force_mn = REST_MN;
        }
        s->touching = true;
        s->position = pos;
        break;
    case CCSIM_STEP_RELEASE:
        kf(p, 0u, s->force_mn, s->position, s->touching);
        if (s->touching) {
            lift(p, s->force_mn > REST_MN ? step->fall_us : LIFT_US, s->position);
        }
        s->touching = false;
        s->force_mn = 0;
        break;
    case CCSIM_STEP_FORCE:
        kf(p, 0u, s->touching ? s->force_mn : 0, pos, true);
        kf(p, step->over_us, (int32_t)step->force_mn, pos, true);
        s->touching = true;
        s->force_mn = (int32_t)step->force_mn;
        s->position = pos;
        break;
    case CCSIM_STEP_LIGHT_PRESS:
    case CCSIM_STEP_FULL_CLICK:
    case CCSIM_STEP_CLICK_AND_HOLD:
        base = land(p, s, pos);
        kf(p, step->rise_us, (int32_t)step->force_mn, pos, true);
        kf(p, step->hold_us, (int32_t)step->force_mn, pos, true);
        kf(p, step->fall_us, base, pos, true);
        finish(p, s, pos);
        break;
    case CCSIM_STEP_DOUBLE_LIGHT_PRESS:
        base = land(p, s, pos);
        kf(p, step->rise_us, (int32_t)step->force_mn, pos, true);
        kf(p, step->hold_us, (int32_t)step->force_mn, pos, true);
        kf(p, step->fall_us, base, pos, true);
        kf(p, step->gap_us, base, pos, true);
        kf(p, step->rise_us, (int32_t)step->force_mn, pos, true);
        kf(p, step->hold_us, (int32_t)step->force_mn, pos, true);
        kf(p, step->fall_us, base, pos, true);
        finish(p, s, pos);
        break;
    case CCSIM_STEP_SLIDE: {
        int32_t f;
        base = land(p, s, pos);
        f = step->force_mn != 0u ? (int32_t)step->force_mn : base;
        if (f != base) {
            kf(p, step->rise_us, f, pos, true);
        }
        kf(p, step->over_us, f, step->to, true);
        if (f != base) {
            kf(p, step->fall_us, base, step->to, true);
        }
        finish(p, s, step->to);
        break;
    }
    case CCSIM_STEP_BUTTON:
        kf(p, 0u, s->force_mn, s->position, s->touching);
        kf(p, step->hold_us + BUTTON_SETTLE_US, s->force_mn, s->position, s->touching);
        p->button_bits = 1u << step->button;
        p->button_release_us = step->hold_us;
        break;
    case CCSIM_STEP_REMOTE_CLICK:
        kf(p, 0u, s->force_mn, s->position, s->touching);
        kf(p, BUTTON_SETTLE_US, s->force_mn, s->position, s->touching);
        p->remote_clicks = step->count;
        break;
    default: /* CCSIM_STEP_NOISE, CCSIM_STEP_SETTINGS: instantaneous */
        kf(p, 0u, s->force_mn, s->position, s->touching);
        break;
    }
}

uint64_t ccsim_scenario_duration(const ccsim_scenario_t *sc, const ccsim_finger_state_t *start)
{
    ccsim_finger_state_t s = *start;
    ccsim_plan_t plan;
    uint64_t total = 0;
    uint32_t i;
    for (i = 0; i < sc->count && i < CCSIM_MAX_STEPS; i++) {
        ccsim_plan_step(&sc->steps[i], &s, &plan);
        total += plan.duration_us;
    }
    return total;
}

