/*
 * CameraControl simulator: the scenario planner.
 *
 * Steps in (ccsim_parser.h), timed finger and button actions out: each step
 * becomes a piecewise-linear force and position profile from the finger's
 * state before it. Pure: no clock, no device.
 */
#ifndef CCSIM_PLANNER_H
#define CCSIM_PLANNER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ccsim_parser.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The finger's state between steps. */
typedef struct ccsim_finger_state {
    bool touching;
    uint32_t position;     /* 0 .. CCSIM_POS_ONE */
    int32_t force_mn;      /* force applied at the end of the step */
} ccsim_finger_state_t;

/* One planned step: a piecewise-linear profile. Keyframe k holds from t_us[k]
 * to t_us[k+1] with force and position interpolated linearly; touched is the
 * segment's value. */
#define CCSIM_MAX_KEYFRAMES 16u
typedef struct ccsim_keyframe {
    uint32_t t_us;
    int32_t force_mn;
    uint32_t position;
    bool touched;
} ccsim_keyframe_t;

typedef struct ccsim_plan {
    uint32_t duration_us;
    uint32_t count;
    ccsim_keyframe_t frames[CCSIM_MAX_KEYFRAMES];
    uint32_t button_bits;        /* held during [0, button_release_us) */
    uint32_t button_release_us;
    uint32_t remote_clicks;      /* delivered at the step's start */
} ccsim_plan_t;

/* Plans one step from the state before it; *state becomes the state after it. */
void ccsim_plan_step(const ccsim_step_t *step, ccsim_finger_state_t *state, ccsim_plan_t *out);

/* Total duration of a scenario started from a state, microseconds. */
uint64_t ccsim_scenario_duration(const ccsim_scenario_t *s, const ccsim_finger_state_t *start);

#ifdef __cplusplus
}
#endif

#endif /* CCSIM_PLANNER_H */
