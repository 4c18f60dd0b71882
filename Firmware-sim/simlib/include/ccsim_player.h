/*
 * CameraControl simulator: the scenario player.
 *
 * Steps a scenario's plans (ccsim_planner.h) in device time and gives the
 * finger command in force (ccsim_model.h) at each instant.
 */
#ifndef CCSIM_PLAYER_H
#define CCSIM_PLAYER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ccsim_model.h"
#include "ccsim_parser.h"
#include "ccsim_planner.h"

#ifdef __cplusplus
extern "C" {
#endif

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
    uint8_t pending_settings[CCSIM_SETTINGS_COUNT]; /* `settings` steps just run: each setting's new
                                                       value, 0 when none changed it */
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
/* The settings that `settings` steps changed since the last call (the wire's
 * enum value of each, 0 when unchanged; the last step wins); false when no
 * such step ran. */
bool ccsim_player_take_settings(ccsim_player_t *p, uint8_t out[CCSIM_SETTINGS_COUNT]);

#ifdef __cplusplus
}
#endif

#endif /* CCSIM_PLAYER_H */
