/*
 * CameraControl simulator: scenarios (docs/SIMULATOR.md, "Scenarios").
 *
 * A scenario is text, one step per line; the parser fills a fixed-size step
 * array and never allocates. Any input is safe: errors come back with a
 * 1-based line number and a message. The player turns steps into finger
 * commands over time (piecewise-linear force and position profiles).
 */
#ifndef CCSIM_SCENARIO_H
#define CCSIM_SCENARIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ccsim_model.h"

#ifdef __cplusplus
extern "C" {
#endif

#ifndef CCSIM_MAX_STEPS
#define CCSIM_MAX_STEPS 128u
#endif
/* Longest accepted line (characters, without the line break). */
#define CCSIM_MAX_LINE 200u
/* Longest single duration, microseconds (10 minutes). The longest step,
 * a double light press with every duration at this limit, stays below
 * 2^32 us, so a plan's times fit uint32_t. */
#define CCSIM_MAX_STEP_US 600000000u
/* Largest force a step may ask for, millinewtons. */
#define CCSIM_MAX_FORCE_MN 20000u

typedef enum ccsim_step_kind {
    CCSIM_STEP_PAUSE = 1,          /* hold D / pause D / wait D */
    CCSIM_STEP_TOUCH,              /* touch [at=P] [hold=D] */
    CCSIM_STEP_RELEASE,            /* release */
    CCSIM_STEP_FORCE,              /* force F [over=D] [at=P] */
    CCSIM_STEP_LIGHT_PRESS,        /* light-press [force=F] [hold=D] [at=P] [rise=D] [fall=D] */
    CCSIM_STEP_DOUBLE_LIGHT_PRESS, /* double-light-press [force=F] [hold=D] [gap=D] [at=P] */
    CCSIM_STEP_FULL_CLICK,         /* full-click [force=F] [hold=D] [at=P] [rise=D] [fall=D] */
    CCSIM_STEP_CLICK_AND_HOLD,     /* click-and-hold D [force=F] [at=P] */
    CCSIM_STEP_SLIDE,              /* slide [from=P] to=P [over=D] [force=F] */
    CCSIM_STEP_BUTTON,             /* button volume-up|volume-down|action [hold=D] */
    CCSIM_STEP_REMOTE_CLICK,       /* remote-click [count=N] */
    CCSIM_STEP_NOISE               /* noise on|off */
} ccsim_step_kind_t;

/* One parsed step; durations in microseconds, forces in mN, positions 0 .. CCSIM_POS_ONE. */
typedef struct ccsim_step {
    uint8_t kind;          /* ccsim_step_kind_t */
    bool has_at;           /* at= / from= given */
    bool flag;             /* noise on */
    uint8_t button;        /* CC_BUTTON_* bit index for CCSIM_STEP_BUTTON */
    uint32_t force_mn;
    uint32_t hold_us;
    uint32_t gap_us;
    uint32_t rise_us;
    uint32_t fall_us;
    uint32_t over_us;
    uint32_t at;           /* at= or from= */
    uint32_t to;
    uint32_t count;
    uint32_t line;         /* source line */
} ccsim_step_t;

typedef struct ccsim_scenario {
    bool has_seed;
    uint64_t seed;
    uint32_t count;
    ccsim_step_t steps[CCSIM_MAX_STEPS];
} ccsim_scenario_t;

/* Where parsing stopped and why. */
typedef struct ccsim_parse_error {
    uint32_t line;         /* 1-based; 0 when there is no error */
    char message[96];      /* "line N: ..." */
} ccsim_parse_error_t;

/* Parses len bytes of text (need not be NUL-terminated; a NUL byte is an
 * error). Returns 0 and fills *out, or non-zero and fills *err. */
int ccsim_scenario_parse(const char *text, size_t len, ccsim_scenario_t *out,
                         ccsim_parse_error_t *err);

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

/* Plays a scenario over time. */
typedef struct ccsim_player {
    ccsim_scenario_t scenario;
    bool running;
    bool started;                 /* the current step's plan is valid */
    uint32_t step;                /* index of the current step */
    uint64_t step_start_us;
    uint64_t start_us;            /* when the scenario starts */
    ccsim_finger_state_t state;   /* state before the current step / at rest */
    ccsim_plan_t plan;
    ccsim_command_t command;      /* the last command */
    uint32_t pending_remote_clicks;
    uint32_t pending_noise;       /* 0 none, 1 off, 2 on: a noise step just ran */
} ccsim_player_t;

void ccsim_player_init(ccsim_player_t *p);
/* Replaces whatever plays with s, starting at start_us (the finger keeps its state). */
void ccsim_player_start(ccsim_player_t *p, const ccsim_scenario_t *s, uint64_t start_us);
/* Stops playing; the finger lifts. */
void ccsim_player_stop(ccsim_player_t *p);
/* Advances to now_us (non-decreasing) and returns the command in force. */
const ccsim_command_t *ccsim_player_update(ccsim_player_t *p, uint64_t now_us);
/* True while steps remain (also before start_us). */
bool ccsim_player_running(const ccsim_player_t *p);
/* Remote clicks due since the last call. */
uint32_t ccsim_player_take_remote_clicks(ccsim_player_t *p);
/* A `noise` step ran since the last call: 1 = off, 2 = on; 0 = none. */
uint32_t ccsim_player_take_noise(ccsim_player_t *p);

#ifdef __cplusplus
}
#endif

#endif /* CCSIM_SCENARIO_H */
