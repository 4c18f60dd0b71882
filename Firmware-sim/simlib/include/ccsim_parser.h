/*
 * CameraControl simulator: the scenario parser (docs/SIMULATOR.md, "Scenarios").
 *
 * Text in, steps out: one step per line, into a fixed-size step array; never
 * allocates. Any input is safe: errors come back with a 1-based line and
 * column and a reason. Timing is the planner's (ccsim_planner.h).
 */
#ifndef CCSIM_PARSER_H
#define CCSIM_PARSER_H

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
    CCSIM_STEP_NOISE,              /* noise on|off */
    CCSIM_STEP_SETTINGS            /* settings [light-press-force=lighter|default|firmer]
                                      [double-light-press-speed=default|slower|slowest]
                                      [camera-control=on|off] [camera-adjustments=on|off] */
} ccsim_step_kind_t;

/* CCSIM_STEP_SETTINGS: the index of each setting in ccsim_step_t.settings. */
enum {
    CCSIM_SETTING_LIGHT_PRESS_FORCE = 0,
    CCSIM_SETTING_DOUBLE_LIGHT_PRESS_SPEED = 1,
    CCSIM_SETTING_CAMERA_CONTROL = 2,
    CCSIM_SETTING_CAMERA_ADJUSTMENTS = 3,
    CCSIM_SETTINGS_COUNT = 4
};

/* One parsed step; durations in microseconds, forces in mN, positions 0 .. CCSIM_POS_ONE. */
typedef struct ccsim_step {
    uint8_t kind;          /* ccsim_step_kind_t */
    bool has_at;           /* at= / from= given */
    bool flag;             /* noise on */
    uint8_t button;        /* CC_BUTTON_* bit index for CCSIM_STEP_BUTTON */
    uint8_t settings[CCSIM_SETTINGS_COUNT]; /* CCSIM_STEP_SETTINGS: the wire's enum value of each
                                               setting (config.proto), 0 when the step leaves it */
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
    uint32_t column;       /* 1-based byte in the line where the fault starts; 0 when none */
    const char *reason;    /* static text without the position ("unknown step"); NULL when none */
    char message[96];      /* "line N: <reason>" (what RunScenario answers) */
} ccsim_parse_error_t;

/* Parses len bytes of text (need not be NUL-terminated; a NUL byte is an
 * error). Returns 0 and fills *out, or non-zero and fills *err: the line,
 * the column (of the word or character at fault; of the step's first word
 * when something is missing) and the reason. A tool reading FILE prints
 * "FILE:line:column: reason". */
int ccsim_scenario_parse(const char *text, size_t len, ccsim_scenario_t *out,
                         ccsim_parse_error_t *err);

#ifdef __cplusplus
}
#endif

#endif /* CCSIM_PARSER_H */
