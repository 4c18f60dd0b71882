/* Unit tests of the scenario player (simlib/ccsim_player.c) on the planner's
 * profiles: what the finger model is told at each sample, as the simulated
 * device samples it (at its sample period, from any start). Steps are built by
 * hand, not parsed. */
#include <string.h>

#include "ccsim_player.h"
#include "scenario_test.h"

static ccsim_step_t step(uint8_t kind)
{
    ccsim_step_t s;
    memset(&s, 0, sizeof s);
    s.kind = kind;
    s.rise_us = 50000u;
    s.fall_us = 40000u;
    s.force_mn = 3500u;
    s.hold_us = 80000u;
    s.count = 1u;
    return s;
}

/* What the touch flag did while the scenario played: its rises and falls, and
 * whether it fell before the last rise (the touch ended between two touches). */
typedef struct touches {
    unsigned downs;
    unsigned ups;
    unsigned ups_before_last_down;
} touches_t;

static ccsim_player_t player;   /* a scenario is too big for the stack */

static touches_t play(const ccsim_scenario_t *sc, uint64_t start_us, uint64_t period_us)
{
    touches_t n;
    bool touched = false;
    uint64_t t = 0;
    memset(&n, 0, sizeof n);
    ccsim_player_init(&player);
    ccsim_player_start(&player, sc, start_us);
    while (ccsim_player_running(&player) && t < 10000000u) {
        const ccsim_command_t *c = ccsim_player_update(&player, t);
        if (c->touched && !touched) {
            n.downs++;
            n.ups_before_last_down = n.ups;
        } else if (!c->touched && touched) {
            n.ups++;
        }
        touched = c->touched;
        t += period_us;
    }
    if (touched && !ccsim_player_update(&player, t)->touched) {
        n.ups++;   /* the finger at rest after the last step */
    }
    return n;
}

/* The sample periods of every rate the firmware takes (1000, 500, 250, 100 Hz),
 * from a start on the sample grid and from one off it. */
static const uint64_t periods[] = {1000u, 2000u, 4000u, 10000u};
static const uint64_t starts[] = {0u, 3700u};

/* Plays `sc` at every sample period, from the first `start_count` starts, and checks the touches' rises and
 * falls; `ups_before_last_down` too unless it is negative. */
static void check_touches(const ccsim_scenario_t *sc, size_t start_count, unsigned downs, unsigned ups,
                          int ups_before_last_down)
{
    size_t i, j;
    for (i = 0; i < sizeof periods / sizeof periods[0]; i++) {
        for (j = 0; j < start_count; j++) {
            touches_t n = play(sc, starts[j], periods[i]);
            CHECK_EQ(n.downs, downs);
            CHECK_EQ(n.ups, ups);
            if (ups_before_last_down >= 0) {
                CHECK_EQ(n.ups_before_last_down, (unsigned)ups_before_last_down);
            }
        }
    }
}

/* Two full clicks on a lifted finger, one right after the other: the finger
 * leaves the strip between them (docs/SIMULATOR.md: a gesture on a lifted
 * finger lands it and lifts it again), so the firmware sees the touch end and
 * a new one begin, at every sample rate. */
static void test_consecutive_clicks_lift_between(void)
{
    ccsim_scenario_t sc;
    memset(&sc, 0, sizeof sc);
    sc.count = 2u;
    sc.steps[0] = step(CCSIM_STEP_FULL_CLICK);
    sc.steps[1] = step(CCSIM_STEP_FULL_CLICK);
    check_touches(&sc, sizeof starts / sizeof starts[0], 2u, 2u, 1);
}

/* A release and a touch right after it: the touch ends, then a new one begins. */
static void test_release_then_touch(void)
{
    ccsim_scenario_t sc;
    memset(&sc, 0, sizeof sc);
    sc.count = 4u;
    sc.steps[0] = step(CCSIM_STEP_TOUCH);
    sc.steps[0].hold_us = 50000u;
    sc.steps[1] = step(CCSIM_STEP_RELEASE);
    sc.steps[2] = sc.steps[0];
    sc.steps[3] = sc.steps[1];
    check_touches(&sc, 1u, 2u, 2u, 1);
}

/* Gestures on a finger that is already down leave it down: one touch. */
static void test_clicks_on_a_touching_finger_keep_it_down(void)
{
    ccsim_scenario_t sc;
    memset(&sc, 0, sizeof sc);
    sc.count = 4u;
    sc.steps[0] = step(CCSIM_STEP_TOUCH);
    sc.steps[0].hold_us = 50000u;
    sc.steps[1] = step(CCSIM_STEP_FULL_CLICK);
    sc.steps[2] = step(CCSIM_STEP_FULL_CLICK);
    sc.steps[3] = step(CCSIM_STEP_RELEASE);
    check_touches(&sc, 1u, 1u, 1u, -1);
}

unsigned test_player_run(void)
{
    test_consecutive_clicks_lift_between();
    test_release_then_touch();
    test_clicks_on_a_touching_finger_keep_it_down();
    return 3u;
}
