/* Unit tests of the scenario planner (simlib/ccsim_planner.c): a step and the
 * finger's state in, a timed profile out. Steps are built by hand, not parsed. */
#include <string.h>

#include "ccsim_planner.h"
#include "scenario_test.h"

static ccsim_step_t step(uint8_t kind)
{
    ccsim_step_t s;
    memset(&s, 0, sizeof s);
    s.kind = kind;
    s.rise_us = 50000u;
    s.fall_us = 40000u;
    s.count = 1u;
    return s;
}

static ccsim_finger_state_t lifted(void)
{
    ccsim_finger_state_t f;
    f.touching = false;
    f.position = CCSIM_POS_ONE / 2u;
    f.force_mn = 0;
    return f;
}

#define CHECK_FRAME(plan, k, t, force, is_touched) do { \
    CHECK_EQ((plan).frames[k].t_us, (t)); \
    CHECK_EQ((uint32_t)(plan).frames[k].force_mn, (uint32_t)(force)); \
    CHECK((plan).frames[k].touched == (is_touched)); } while (0)

/* full-click on a lifted finger: land 15 ms, rise 50, hold 80, fall 40, lift 10,
 * then off the strip for 10 ms. */
static void test_full_click_from_lifted(void)
{
    ccsim_step_t s = step(CCSIM_STEP_FULL_CLICK);
    ccsim_finger_state_t f = lifted();
    ccsim_plan_t p;
    s.force_mn = 3500u;
    s.hold_us = 80000u;
    ccsim_plan_step(&s, &f, &p);
    CHECK_EQ(p.count, 7);
    CHECK_FRAME(p, 0, 0u, 0, true);
    CHECK_FRAME(p, 1, 15000u, 150, true);
    CHECK_FRAME(p, 2, 65000u, 3500, true);
    CHECK_FRAME(p, 3, 145000u, 3500, true);
    CHECK_FRAME(p, 4, 185000u, 150, true);   /* the lift: still touching while the force falls */
    CHECK_FRAME(p, 5, 195000u, 0, false);    /* lift-off: touched is the segment's value */
    CHECK_FRAME(p, 6, 205000u, 0, false);
    CHECK_EQ(p.duration_us, 205000u);
    CHECK(!f.touching);
    CHECK_EQ(f.force_mn, 0);
    CHECK_EQ(p.button_bits, 0);
    CHECK_EQ(p.remote_clicks, 0);
}

/* A press on a finger that is down starts from its force, comes back to it and stays down. */
static void test_press_on_touching_finger(void)
{
    ccsim_step_t s = step(CCSIM_STEP_LIGHT_PRESS);
    ccsim_finger_state_t f;
    ccsim_plan_t p;
    f.touching = true;
    f.force_mn = 300;
    f.position = 100u;
    s.force_mn = 1200u;
    s.hold_us = 200000u;
    s.has_at = true;
    s.at = 700u;
    ccsim_plan_step(&s, &f, &p);
    CHECK_EQ(p.count, 4);
    CHECK_FRAME(p, 0, 0u, 300, true);
    CHECK_FRAME(p, 1, 50000u, 1200, true);
    CHECK_FRAME(p, 2, 250000u, 1200, true);
    CHECK_FRAME(p, 3, 290000u, 300, true);
    CHECK_EQ(p.frames[0].position, 700u);
    CHECK(f.touching);
    CHECK_EQ(f.force_mn, 300);
    CHECK_EQ(f.position, 700u);
}

static void test_slide_moves_the_finger(void)
{
    ccsim_step_t s = step(CCSIM_STEP_SLIDE);
    ccsim_finger_state_t f = lifted();
    ccsim_plan_t p;
    s.has_at = true;
    s.at = 200u;
    s.to = 800u;
    s.over_us = 300000u;
    ccsim_plan_step(&s, &f, &p);
    /* land at 200 (15 ms), slide to 800 at the resting force (300 ms), lift (10 ms), off (10 ms) */
    CHECK_EQ(p.count, 5);
    CHECK_EQ(p.frames[1].position, 200u);
    CHECK_EQ(p.frames[2].t_us, 315000u);
    CHECK_EQ(p.frames[2].position, 800u);
    CHECK_EQ((uint32_t)p.frames[2].force_mn, 150u);
    CHECK_EQ(p.duration_us, 335000u);
    CHECK_EQ(f.position, 800u);
    CHECK(!f.touching);
}

static void test_button_and_remote(void)
{
    ccsim_step_t b = step(CCSIM_STEP_BUTTON);
    ccsim_step_t r = step(CCSIM_STEP_REMOTE_CLICK);
    ccsim_finger_state_t f = lifted();
    ccsim_plan_t p;
    b.button = 1u;
    b.hold_us = 100000u;
    ccsim_plan_step(&b, &f, &p);
    CHECK_EQ(p.button_bits, 1u << 1);
    CHECK_EQ(p.button_release_us, 100000u);   /* held exactly as long as asked */
    CHECK_EQ(p.duration_us, 120000u);         /* then 20 ms settle */
    r.count = 3u;
    ccsim_plan_step(&r, &f, &p);
    CHECK_EQ(p.remote_clicks, 3u);
    CHECK_EQ(p.duration_us, 20000u);
    CHECK(!f.touching);
}

static void test_touch_force_release(void)
{
    ccsim_step_t t = step(CCSIM_STEP_TOUCH);
    ccsim_step_t fo = step(CCSIM_STEP_FORCE);
    ccsim_step_t re = step(CCSIM_STEP_RELEASE);
    ccsim_finger_state_t f = lifted();
    ccsim_plan_t p;
    t.hold_us = 50000u;
    ccsim_plan_step(&t, &f, &p);
    CHECK_EQ(p.duration_us, 65000u);   /* land 15 ms, then the hold */
    CHECK(f.touching);
    CHECK_EQ(f.force_mn, 150);
    fo.force_mn = 2000u;
    fo.over_us = 50000u;
    ccsim_plan_step(&fo, &f, &p);
    CHECK_EQ(p.duration_us, 50000u);
    CHECK_EQ(f.force_mn, 2000);
    ccsim_plan_step(&re, &f, &p);
    CHECK_EQ(p.duration_us, 50000u);   /* above the resting force: the fall time, then 10 ms off */
    CHECK(!f.touching);
    CHECK_EQ(p.count, 3u);
    CHECK_FRAME(p, 0, 0u, 2000, true);     /* the fall, touching */
    CHECK_FRAME(p, 1, 40000u, 0, false);   /* lift-off, then off the strip */
    CHECK_FRAME(p, 2, 50000u, 0, false);
}

static void test_scenario_duration(void)
{
    ccsim_scenario_t sc;
    ccsim_finger_state_t f = lifted();
    memset(&sc, 0, sizeof sc);
    sc.count = 2u;
    sc.steps[0] = step(CCSIM_STEP_FULL_CLICK);
    sc.steps[0].force_mn = 3500u;
    sc.steps[0].hold_us = 80000u;
    sc.steps[1] = step(CCSIM_STEP_PAUSE);
    sc.steps[1].hold_us = 100000u;
    CHECK_EQ(ccsim_scenario_duration(&sc, &f), 305000u);
    CHECK(!f.touching);   /* the start state is not changed */
}

unsigned test_planner_run(void)
{
    test_full_click_from_lifted();
    test_press_on_touching_finger();
    test_slide_moves_the_finger();
    test_button_and_remote();
    test_touch_force_release();
    test_scenario_duration();
    return 6u;
}
