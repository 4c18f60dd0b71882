/*
 * CameraControl simulator: the scenario player (see ccsim_player.h): plans
 * each step when it starts (ccsim_planner.h) and interpolates its profile at
 * the device's time.
 */
#include "ccsim_player.h"

#include <string.h>

static void rest_command(ccsim_player_t *p)
{
    p->command.touched = p->state.touching;
    p->command.force_mn = p->state.force_mn;
    p->command.position = p->state.position;
    p->command.buttons = 0u;
}

void ccsim_player_init(ccsim_player_t *p)
{
    memset(p, 0, sizeof(*p));
    p->state.position = CCSIM_POS_ONE / 2u;
    rest_command(p);
}

void ccsim_player_start(ccsim_player_t *p, const ccsim_scenario_t *s, uint64_t start_us)
{
    if (s != &p->scenario) {
        p->scenario = *s;
    }
    /* A gesture cut short leaves the finger where its plan was heading. */
    if (p->running && p->started) {
        p->state.touching = p->command.touched;
        p->state.force_mn = p->command.touched ? p->command.force_mn : 0;
        p->state.position = p->command.position;
    }
    p->running = true;
    p->started = false;
    p->step = 0;
    p->start_us = start_us;
    p->step_start_us = start_us;
}

void ccsim_player_stop(ccsim_player_t *p)
{
    p->running = false;
    p->started = false;
    p->state.touching = false;
    p->state.force_mn = 0;
    rest_command(p);
}

static void command_at(ccsim_player_t *p, uint32_t t)
{
    const ccsim_plan_t *pl = &p->plan;
    uint32_t k = 0;
    const ccsim_keyframe_t *a, *b;
    while (k + 1u < pl->count && pl->frames[k + 1u].t_us <= t) {
        k++;
    }
    a = &pl->frames[k];
    if (k + 1u >= pl->count) {
        p->command.force_mn = a->force_mn;
        p->command.position = a->position;
        p->command.touched = a->touched;
    } else {
        uint32_t span;
        uint32_t dt = t - a->t_us;
        b = &pl->frames[k + 1u];
        span = b->t_us - a->t_us;
        p->command.touched = a->touched;
        p->command.force_mn =
            a->force_mn + (int32_t)(((int64_t)(b->force_mn - a->force_mn) * dt) / span);
        p->command.position = (uint32_t)((int64_t)a->position +
            (((int64_t)b->position - (int64_t)a->position) * (int64_t)dt) / (int64_t)span);
    }
    p->command.buttons = (pl->button_bits != 0u && t < pl->button_release_us) ? pl->button_bits
                                                                             : 0u;
}

const ccsim_command_t *ccsim_player_update(ccsim_player_t *p, uint64_t now_us)
{
    if (!p->running || now_us < p->start_us) {
        if (!p->running) {
            rest_command(p);
        }
        return &p->command;
    }
    for (;;) {
        if (!p->started) {
            const ccsim_step_t *st;
            if (p->step >= p->scenario.count) {
                p->running = false;
                rest_command(p);
                break;
            }
            st = &p->scenario.steps[p->step];
            ccsim_plan_step(st, &p->state, &p->plan);
            p->pending_remote_clicks += p->plan.remote_clicks;
            if (st->kind == CCSIM_STEP_NOISE) {
                p->pending_noise = st->flag ? 2u : 1u;
            } else if (st->kind == CCSIM_STEP_SETTINGS) {
                uint32_t i;
                for (i = 0; i < CCSIM_SETTINGS_COUNT; i++) {
                    if (st->settings[i] != 0u) {
                        p->pending_settings[i] = st->settings[i];
                    }
                }
            }
            p->started = true;
        }
        if (now_us - p->step_start_us >= p->plan.duration_us) {
            p->step_start_us += p->plan.duration_us;
            p->step++;
            p->started = false;
            continue;
        }
        command_at(p, (uint32_t)(now_us - p->step_start_us));
        break;
    }
    return &p->command;
}

bool ccsim_player_running(const ccsim_player_t *p)
{
    return p->running;
}

uint32_t ccsim_player_take_remote_clicks(ccsim_player_t *p)
{
    uint32_t n = p->pending_remote_clicks;
    p->pending_remote_clicks = 0u;
    return n;
}

uint32_t ccsim_player_take_noise(ccsim_player_t *p)
{
    uint32_t n = p->pending_noise;
    p->pending_noise = 0u;
    return n;
}

bool ccsim_player_take_settings(ccsim_player_t *p, uint8_t out[CCSIM_SETTINGS_COUNT])
{
    bool any = false;
    uint32_t i;
    for (i = 0; i < CCSIM_SETTINGS_COUNT; i++) {
        out[i] = p->pending_settings[i];
        any = any || out[i] != 0u;
        p->pending_settings[i] = 0u;
    }
    return any;
}
