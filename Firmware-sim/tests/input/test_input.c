/*
 * Unit tests of the input pipeline (core/cc_input.c), no HAL, no simulator.
 *
 * Build and run from Firmware-sim/:
 *   cc -std=c99 -pedantic -Wall -Wextra -Werror -Icore/include -Igenerated/include \
 *      tests/input/test_input.c core/cc_input.c -o /tmp/test_input && /tmp/test_input
 */
#include <stdio.h>
#include <string.h>

#include "cc_input.h"
#include "cc_pb.h"

#define K(k) ((uint32_t)CC_PB_INPUT_EVENT_KIND_##k)
#define S(s) ((uint32_t)CC_PB_INPUT_SOURCE_##s)

static int failures;
#define CHECK(cond) do { if (!(cond)) { failures++; \
    fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); } } while (0)

static cc_input_t in;
static uint64_t now;
static cc_input_event_t ev[256];
static unsigned nev;

/* Runs ms samples at 1 kHz with a fixed reading; collects events. */
static void run(unsigned ms, int32_t force, bool touched, uint16_t pos, uint32_t buttons)
{
    unsigned i;
    cc_sensor_reading_t r;
    r.force_raw_mn = force;
    r.touched = touched;
    r.position = pos;
    r.buttons = buttons;
    r.remote_clicks = 0u;
    for (i = 0; i < ms; i++) {
        cc_input_event_t e;
        now += 1000u;
        cc_input_step(&in, now, &r);
        while (cc_input_pop_event(&in, &e)) {
            if (nev < 256u) {
                ev[nev++] = e;
            }
        }
    }
}

static unsigned count_kind(uint32_t kind)
{
    unsigned i, n = 0;
    for (i = 0; i < nev; i++) {
        n += ev[i].kind == kind;
    }
    return n;
}

static const cc_input_event_t *find(uint32_t kind)
{
    unsigned i;
    for (i = 0; i < nev; i++) {
        if (ev[i].kind == kind) {
            return &ev[i];
        }
    }
    return 0;
}

static void boot(int32_t offset)
{
    cc_input_config_t c;
    cc_input_default_config(&c);
    cc_input_init(&in, &c);
    now = 0;
    nev = 0;
    run(100, offset, false, 0, 0u);
}

static void test_defaults_valid(void)
{
    cc_input_config_t c;
    const char *why = 0;
    cc_input_default_config(&c);
    CHECK(cc_input_validate_config(&c, 10000u, &why) == 0);
    CHECK(why == 0);
}

static void test_validation(void)
{
    cc_input_config_t c;
    const char *why;
    cc_input_default_config(&c); c.light_press_off_mn = 800u;
    CHECK(cc_input_validate_config(&c, 10000u, &why) != 0 && why != 0);
    cc_input_default_config(&c); c.full_press_off_mn = 700u;
    CHECK(cc_input_validate_config(&c, 10000u, &why) != 0 && why != 0);
    cc_input_default_config(&c); c.full_press_on_mn = 1700u; c.full_press_off_mn = 1600u;
    CHECK(cc_input_validate_config(&c, 10000u, &why) != 0 && why != 0);   /* gap 900 < 1000 */
    cc_input_default_config(&c); c.sample_rate_hz = 300u;
    CHECK(cc_input_validate_config(&c, 10000u, &why) != 0 && why != 0);
    cc_input_default_config(&c); c.slide_interval_ms = 0u;
    CHECK(cc_input_validate_config(&c, 10000u, &why) != 0 && why != 0);
    cc_input_default_config(&c); c.slide_interval_ms = 1001u;
    CHECK(cc_input_validate_config(&c, 10000u, &why) != 0 && why != 0);
    cc_input_default_config(&c); c.debounce_ms = 101u;
    CHECK(cc_input_validate_config(&c, 10000u, &why) != 0 && why != 0);
    cc_input_default_config(&c); c.min_stage_gap_mn = 0u;
    CHECK(cc_input_validate_config(&c, 10000u, &why) != 0 && why != 0);
    cc_input_default_config(&c); c.light_press_on_mn = 1500u; c.full_press_off_mn = 1500u;
    CHECK(cc_input_validate_config(&c, 10000u, &why) == 0);   /* light_on == full_off is allowed */
    /* the force range's end: a full press up to it, none above it (PROTOCOL.md §7) */
    cc_input_default_config(&c); c.full_press_on_mn = 10000u;
    CHECK(cc_input_validate_config(&c, 10000u, &why) == 0);
    CHECK(cc_input_validate_config(&c, 9999u, &why) != 0 && why != 0 && strcmp(why, "need full_press_on_mn <= force_max_mn") == 0);
}

static void test_tare_and_light_press(void)
{
    const cc_input_event_t *down, *up;
    boot(400);                              /* sensor reads 400 mN unloaded */
    CHECK(nev == 0u);
    run(20, 400 + 150, true, 300, 0u);      /* resting finger */
    run(200, 400 + 1200, true, 300, 0u);    /* light press */
    run(100, 400 + 150, true, 300, 0u);
    run(20, 400, false, 0, 0u);
    CHECK(count_kind(K(TOUCH_DOWN)) == 1u);
    CHECK(count_kind(K(LIGHT_PRESS_DOWN)) == 1u);
    CHECK(count_kind(K(LIGHT_PRESS_UP)) == 1u);
    CHECK(count_kind(K(FULL_PRESS_DOWN)) == 0u);
    CHECK(count_kind(K(TOUCH_UP)) == 1u);
    down = find(K(LIGHT_PRESS_DOWN));
    up = find(K(LIGHT_PRESS_UP));
    CHECK(down != 0 && down->force_mn >= 800u && down->force_mn < 1200u);
    CHECK(up != 0 && up->peak_force_mn >= 1190u && up->peak_force_mn <= 1200u);
    CHECK(down != 0 && down->source == S(CAMERA_CONTROL) && down->position == 300u);
    CHECK(ev[0].kind == K(TOUCH_DOWN) && ev[nev - 1u].kind == K(TOUCH_UP));
    CHECK(ev[0].event_number == 1u && ev[nev - 1u].event_number == nev);
}

static void test_full_click_order_and_peaks(void)
{
    unsigned i;
    boot(0);
    run(10, 150, true, 10, 0u);
    run(50, 3500, true, 10, 0u);
    run(50, 150, true, 10, 0u);
    run(10, 0, false, 10, 0u);
    {
        static const uint32_t want[] = { K(TOUCH_DOWN), K(LIGHT_PRESS_DOWN), K(FULL_PRESS_DOWN),
                                         K(FULL_PRESS_UP), K(LIGHT_PRESS_UP), K(TOUCH_UP) };
        CHECK(nev == 6u);
        for (i = 0; i < 6u && i < nev; i++) {
            CHECK(ev[i].kind == want[i]);
        }
    }
    CHECK(find(K(FULL_PRESS_UP))->peak_force_mn >= 3490u);
    CHECK(find(K(LIGHT_PRESS_UP))->peak_force_mn >= 3490u);
}

static void test_hysteresis(void)
{
    boot(0);
    run(10, 150, true, 0, 0u);
    run(50, 700, true, 0, 0u);       /* between off and on: nothing */
    CHECK(count_kind(K(LIGHT_PRESS_DOWN)) == 0u);
    run(50, 900, true, 0, 0u);       /* on */
    run(50, 600, true, 0, 0u);       /* above off: still pressed */
    run(50, 900, true, 0, 0u);
    run(50, 2400, true, 0, 0u);      /* below full on */
    CHECK(count_kind(K(FULL_PRESS_DOWN)) == 0u);
    run(50, 2600, true, 0, 0u);      /* full */
    run(50, 1900, true, 0, 0u);      /* above full off: still full */
    run(50, 2600, true, 0, 0u);
    CHECK(count_kind(K(LIGHT_PRESS_DOWN)) == 1u);
    CHECK(count_kind(K(FULL_PRESS_DOWN)) == 1u);
    CHECK(count_kind(K(FULL_PRESS_UP)) == 0u);
    run(50, 1000, true, 0, 0u);      /* below full off, above light off */
    CHECK(count_kind(K(FULL_PRESS_UP)) == 1u);
    CHECK(count_kind(K(LIGHT_PRESS_UP)) == 0u);
    run(50, 100, true, 0, 0u);
    CHECK(count_kind(K(LIGHT_PRESS_UP)) == 1u);
}

static void test_slide_coalescing(void)
{
    unsigned i, slides;
    cc_sensor_reading_t r;
    boot(0);
    r.force_raw_mn = 150; r.touched = true; r.buttons = 0u; r.remote_clicks = 0u;
    for (i = 0; i < 500u; i++) {         /* 500 ms from 100 to 600: one count per ms */
        cc_input_event_t e;
        r.position = (uint16_t)(100u + i);
        now += 1000u;
        cc_input_step(&in, now, &r);
        while (cc_input_pop_event(&in, &e)) {
            ev[nev++] = e;
        }
    }
    slides = count_kind(K(SLIDE));
    CHECK(slides >= 28u && slides <= 32u);   /* 500 ms / 16 ms */
    for (i = 1; i < nev; i++) {
        if (ev[i].kind == K(SLIDE) && ev[i - 1u].kind == K(SLIDE)) {
            CHECK(ev[i].timestamp_us - ev[i - 1u].timestamp_us >= 16000u);
            CHECK(ev[i].position > ev[i - 1u].position);
        }
    }
    nev = 0;
    run(200, 150, true, 599, 0u);           /* resting: no slides */
    CHECK(count_kind(K(SLIDE)) <= 1u);
    nev = 0;
    run(200, 150, true, 599, 0u);
    CHECK(count_kind(K(SLIDE)) == 0u);
}

static void test_debounce(void)
{
    unsigned i;
    boot(0);
    /* bouncing contact: 3 ms of chatter, then closed for 50 ms */
    for (i = 0; i < 6u; i++) {
        run(1, 0, false, 0, (i & 1u) ? CC_BUTTON_VOLUME_UP : 0u);
    }
    CHECK(count_kind(K(BUTTON_DOWN)) == 0u);
    run(50, 0, false, 0, CC_BUTTON_VOLUME_UP);
    for (i = 0; i < 6u; i++) {
        run(1, 0, false, 0, (i & 1u) ? CC_BUTTON_VOLUME_UP : 0u);
    }
    run(50, 0, false, 0, 0u);
    CHECK(count_kind(K(BUTTON_DOWN)) == 1u);
    CHECK(count_kind(K(BUTTON_UP)) == 1u);
    CHECK(find(K(BUTTON_DOWN))->source == S(VOLUME_UP));
    /* a 2 ms glitch is shorter than the 5 ms debounce */
    nev = 0;
    run(2, 0, false, 0, CC_BUTTON_ACTION);
    run(20, 0, false, 0, 0u);
    CHECK(nev == 0u);
}

static void test_shutter_switch_or(void)
{
    boot(0);
    run(10, 150, true, 0, 0u);
    run(30, 3000, true, 0, CC_BUTTON_SHUTTER_SWITCH);   /* force and switch */
    run(30, 150, true, 0, 0u);
    CHECK(count_kind(K(FULL_PRESS_DOWN)) == 1u);
    CHECK(count_kind(K(FULL_PRESS_UP)) == 1u);
    nev = 0;
    run(30, 150, true, 0, CC_BUTTON_SHUTTER_SWITCH);    /* switch alone */
    run(30, 150, true, 0, 0u);
    CHECK(count_kind(K(LIGHT_PRESS_DOWN)) == 1u);
    CHECK(count_kind(K(FULL_PRESS_DOWN)) == 1u);
    CHECK(count_kind(K(FULL_PRESS_UP)) == 1u);
    CHECK(count_kind(K(BUTTON_DOWN)) == 0u);
}

static void test_remote_and_overflow(void)
{
    cc_sensor_reading_t r = { 0, 0u, false, 0u, 0u };
    cc_input_event_t e;
    unsigned n = 0;
    boot(0);
    now += 1000u;
    r.remote_clicks = 2u;
    cc_input_step(&in, now, &r);
    while (cc_input_pop_event(&in, &e)) {
        CHECK(e.kind == K(REMOTE_CLICK) && e.source == S(REMOTE));
        n++;
    }
    CHECK(n == 2u);
    now += 1000u;
    r.remote_clicks = CC_INPUT_QUEUE_LEN + 5u;
    cc_input_step(&in, now, &r);
    CHECK(cc_input_queue_overflows(&in) == 5u);
    n = 0;
    while (cc_input_pop_event(&in, &e)) {
        n++;
    }
    CHECK(n == CC_INPUT_QUEUE_LEN);
    CHECK(e.event_number == 2u + CC_INPUT_QUEUE_LEN + 5u);
}

/* Peek reads the oldest event in place (what pop would copy), takes nothing;
 * pop with NULL then drops it. */
static void test_peek_event(void)
{
    cc_sensor_reading_t r = { 0, 0u, false, 0u, 0u };
    const cc_input_event_t *p;
    cc_input_event_t e;
    boot(0);
    CHECK(cc_input_peek_event(&in) == 0);
    now += 1000u;
    r.remote_clicks = 2u;
    CHECK(cc_input_step(&in, now, &r) == 2u);
    p = cc_input_peek_event(&in);
    CHECK(p != 0 && p->kind == K(REMOTE_CLICK) && p->timestamp_us == now);
    CHECK(cc_input_peek_event(&in) == p);
    CHECK(cc_input_pop_event(&in, &e) && e.event_number == p->event_number);
    p = cc_input_peek_event(&in);
    CHECK(p != 0 && p->event_number == e.event_number + 1u);
    CHECK(cc_input_pop_event(&in, 0));
    CHECK(cc_input_peek_event(&in) == 0 && !cc_input_pop_event(&in, 0));
}

static void test_drift_tracking(void)
{
    unsigned i;
    boot(0);
    /* the unloaded sensor drifts by +600 mN over 6 s: no press */
    for (i = 0; i < 6000u; i++) {
        run(1, (int32_t)(i / 10u), false, 0, 0u);
    }
    CHECK(nev == 0u);
    run(20000, 600, false, 0, 0u);       /* ~5 time constants */
    run(10, 600 + 150, true, 0, 0u);
    run(100, 600 + 1200, true, 0, 0u);
    CHECK(count_kind(K(LIGHT_PRESS_DOWN)) == 1u);
    {
        cc_raw_sample_t s;
        CHECK(cc_input_last_sample(&in, &s));
        CHECK(s.force_mn >= 1170u && s.force_mn <= 1230u);
    }
}

int main(void)
{
    test_defaults_valid();
    test_validation();
    test_tare_and_light_press();
    test_full_click_order_and_peaks();
    test_hysteresis();
    test_slide_coalescing();
    test_debounce();
    test_shutter_switch_or();
    test_remote_and_overflow();
    test_peek_event();
    test_drift_tracking();
    if (failures != 0) {
        fprintf(stderr, "test_input: %d failure(s)\n", failures);
        return 1;
    }
    printf("test_input: all passed\n");
    return 0;
}
