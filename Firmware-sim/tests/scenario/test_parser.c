/* Unit tests of the scenario parser (simlib/ccsim_parser.c): text in, steps out. */
#include <string.h>

#include "ccsim_parser.h"
#include "scenario_test.h"

static ccsim_scenario_t sc;
static ccsim_parse_error_t err;

static int parse(const char *text)
{
    return ccsim_scenario_parse(text, strlen(text), &sc, &err);
}

static void test_defaults(void)
{
    CHECK_EQ(parse("full-click\nlight-press\ndouble-light-press\nclick-and-hold\nslide to=1\nbutton action"), 0);
    CHECK_EQ(sc.count, 6);
    CHECK_EQ(sc.steps[0].kind, CCSIM_STEP_FULL_CLICK);
    CHECK_EQ(sc.steps[0].force_mn, 3500);
    CHECK_EQ(sc.steps[0].hold_us, 80000);
    CHECK_EQ(sc.steps[0].rise_us, 50000);
    CHECK_EQ(sc.steps[0].fall_us, 40000);
    CHECK_EQ(sc.steps[0].line, 1);
    CHECK(!sc.steps[0].has_at);
    CHECK_EQ(sc.steps[1].force_mn, 1200);
    CHECK_EQ(sc.steps[1].hold_us, 200000);
    CHECK_EQ(sc.steps[2].hold_us, 80000);
    CHECK_EQ(sc.steps[2].gap_us, 150000);
    CHECK_EQ(sc.steps[2].rise_us, 40000);
    CHECK_EQ(sc.steps[2].fall_us, 30000);
    CHECK_EQ(sc.steps[3].hold_us, 800000);
    CHECK_EQ(sc.steps[4].over_us, 300000);
    CHECK_EQ(sc.steps[4].force_mn, 0);   /* the resting force */
    CHECK_EQ(sc.steps[4].to, CCSIM_POS_ONE);
    CHECK_EQ(sc.steps[5].button, 2);
    CHECK_EQ(sc.steps[5].hold_us, 100000);
    CHECK_EQ(sc.steps[5].line, 6);
    CHECK_EQ(err.line, 0);
    CHECK_EQ(err.column, 0);
    CHECK(err.reason == NULL);
}

static void test_units_and_values(void)
{
    CHECK_EQ(parse("light-press force=1.2N hold=0.2s at=0.25 rise=10ms fall=500us\n"
                   "click-and-hold 2s force=4000mN\n"
                   "remote-click count=3\nnoise off\npause 7"), 0);
    CHECK_EQ(sc.count, 5);
    CHECK_EQ(sc.steps[0].force_mn, 1200);
    CHECK_EQ(sc.steps[0].hold_us, 200000);
    CHECK(sc.steps[0].has_at);
    CHECK_EQ(sc.steps[0].at, (CCSIM_POS_ONE + 2u) / 4u);   /* rounded to the nearest count */
    CHECK_EQ(sc.steps[0].rise_us, 10000);
    CHECK_EQ(sc.steps[0].fall_us, 500);
    CHECK_EQ(sc.steps[1].hold_us, 2000000);
    CHECK_EQ(sc.steps[1].force_mn, 4000);
    CHECK_EQ(sc.steps[2].count, 3);
    CHECK_EQ(sc.steps[3].kind, CCSIM_STEP_NOISE);
    CHECK(!sc.steps[3].flag);
    CHECK_EQ(sc.steps[4].hold_us, 7000);   /* a bare number is ms */
}

static void test_comments_crlf_seed(void)
{
    CHECK_EQ(parse("# a comment\r\n\r\nseed 42\r\n\tpause 5ms # trailing\r\n"), 0);
    CHECK(sc.has_seed);
    CHECK_EQ(sc.seed, 42);
    CHECK_EQ(sc.count, 1);
    CHECK_EQ(sc.steps[0].line, 4);
    CHECK_EQ(sc.steps[0].hold_us, 5000);
}

/* `expect` lines are the host's: skipped like comments, whatever they hold
 * (non-ASCII such as the tolerance sign, more words than a step takes); a
 * step that merely starts with the letters is still a step (and an error). */
static void test_expect_lines_skipped(void)
{
    CHECK_EQ(parse("full-click\nexpect capture ended primary camera-control within 30ms\n"
                   "  expect overlay value zoom 2.0\xc2\xb1" "0.1 a b c d e f g h i j k l\r\n"
                   "\texpect\npause 5ms\n"), 0);
    CHECK_EQ(sc.count, 2);
    CHECK_EQ(sc.steps[1].line, 5);
    CHECK_EQ(parse("expected 3"), 1);
    CHECK_EQ(err.line, 1);
    CHECK(strcmp(err.reason, "unknown step") == 0);
}

/* Each error names its line, the column of the word (or value) at fault and the reason. */
static void test_errors_line_and_column(void)
{
    static const struct {
        const char *text;
        unsigned line, column;
        const char *reason;
    } cases[] = {
        {"jump", 1, 1, "unknown step"},
        {"# c\n\nlight-press force=abc", 3, 19, "expected a force such as 1200mN"},
        {"light-press hold=20parsecs", 1, 18, "unknown duration unit (use us, ms or s)"},
        {"light-press colour=red", 1, 13, "unknown parameter for this step"},
        {"light-press force=1N force=2N", 1, 22, "parameter given twice"},
        {"slide from=0.2 over=100ms", 1, 1, "slide needs to="},
        {"slide to=0.5 over=0", 1, 14, "over= must be above zero"},
        {"full-click force=0", 1, 12, "force must be above zero"},
        {"hold", 1, 1, "missing duration"},
        {"pause 100ms\n  button shutter", 2, 10, "unknown button (use volume-up, volume-down or action)"},
        {"pause 1ms 2ms", 1, 11, "too many values"},
        {"seed 1\nseed 2", 2, 1, "seed given twice"},
        {"seed -3", 1, 6, "expected a whole number"},
        {"seed 1 2", 1, 8, "seed takes one number"},
        {"touch\a", 1, 6, "unexpected character"},
        {"remote-click count=0", 1, 20, "count must be 1..100"},
        {"noise maybe", 1, 7, "expected on or off"},
        {"settings", 1, 1, "settings needs a setting, such as camera-adjustments=off"},
        {"settings camera-control=maybe", 1, 25, "expected on or off"},
        {"settings light-press-force=heavy", 1, 28, "expected lighter, default or firmer"},
        {"settings double-light-press-speed=fast", 1, 35, "expected default, slower or slowest"},
        {"settings camera-adjustments=on camera-adjustments=off", 1, 32, "parameter given twice"},
        {"settings force=1N", 1, 10, "unknown parameter for this step"},
        {"settings off", 1, 10, "unexpected value (parameters are key=value)"},
        {"a b c d e f g h i j k", 1, 21, "too many words"},
    };
    size_t i;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char prefix[32];
        CHECK(parse(cases[i].text) != 0);
        CHECK_EQ(err.line, cases[i].line);
        CHECK_EQ(err.column, cases[i].column);
        CHECK(err.reason != NULL && strcmp(err.reason, cases[i].reason) == 0);
        (void)snprintf(prefix, sizeof prefix, "line %u: ", cases[i].line);
        CHECK(strncmp(err.message, prefix, strlen(prefix)) == 0);
        CHECK(strstr(err.message, cases[i].reason) != NULL);
        if (err.column != cases[i].column) {
            fprintf(stderr, "  case %u: %s\n", (unsigned)i, cases[i].text);
        }
    }
}

/* `settings` (SIMULATOR.md §3): the wire's enum value of each setting given
 * (config.proto), 0 for each one left alone. */
static void test_settings_step(void)
{
    CHECK_EQ(parse("settings camera-adjustments=off\n"
                   "settings light-press-force=firmer double-light-press-speed=slowest camera-control=on\n"
                   "settings light-press-force=lighter"), 0);
    CHECK_EQ(sc.count, 3);
    CHECK_EQ(sc.steps[0].kind, CCSIM_STEP_SETTINGS);
    CHECK_EQ(sc.steps[0].settings[CCSIM_SETTING_LIGHT_PRESS_FORCE], 0);
    CHECK_EQ(sc.steps[0].settings[CCSIM_SETTING_DOUBLE_LIGHT_PRESS_SPEED], 0);
    CHECK_EQ(sc.steps[0].settings[CCSIM_SETTING_CAMERA_CONTROL], 0);
    CHECK_EQ(sc.steps[0].settings[CCSIM_SETTING_CAMERA_ADJUSTMENTS], 2);   /* SETTING_SWITCH_OFF */
    CHECK_EQ(sc.steps[1].settings[CCSIM_SETTING_LIGHT_PRESS_FORCE], 3);    /* LIGHT_PRESS_FORCE_FIRMER */
    CHECK_EQ(sc.steps[1].settings[CCSIM_SETTING_DOUBLE_LIGHT_PRESS_SPEED], 3);   /* _SLOWEST */
    CHECK_EQ(sc.steps[1].settings[CCSIM_SETTING_CAMERA_CONTROL], 1);       /* SETTING_SWITCH_ON */
    CHECK_EQ(sc.steps[1].settings[CCSIM_SETTING_CAMERA_ADJUSTMENTS], 0);
    CHECK_EQ(sc.steps[2].settings[CCSIM_SETTING_LIGHT_PRESS_FORCE], 1);    /* LIGHT_PRESS_FORCE_LIGHTER */
}

static void test_limits(void)
{
    static char text[CCSIM_MAX_STEPS * 10u + 64u];
    size_t i, pos = 0;
    char nul[] = "pause 1ms\nto\0uch";

    for (i = 0; i < CCSIM_MAX_STEPS; i++) {
        memcpy(text + pos, "pause 1ms\n", 10);
        pos += 10;
    }
    CHECK_EQ(ccsim_scenario_parse(text, pos, &sc, &err), 0);
    CHECK_EQ(sc.count, CCSIM_MAX_STEPS);
    memcpy(text + pos, "pause 1ms", 9);
    CHECK(ccsim_scenario_parse(text, pos + 9, &sc, &err) != 0);
    CHECK_EQ(err.line, CCSIM_MAX_STEPS + 1u);
    CHECK_EQ(err.column, 1);
    {   /* the message names this build's limit, not another's (PROTOCOL.md v1.2) */
        char expected[96];
        (void)snprintf(expected, sizeof expected, "line %u: too many steps (this device takes at most %u)",
                       (unsigned)(CCSIM_MAX_STEPS + 1u), (unsigned)CCSIM_MAX_STEPS);
        CHECK(strcmp(err.message, expected) == 0);
    }

    memset(text, 'x', CCSIM_MAX_LINE + 1u);
    CHECK(ccsim_scenario_parse(text, CCSIM_MAX_LINE + 1u, &sc, &err) != 0);
    CHECK_EQ(err.column, CCSIM_MAX_LINE + 1u);
    CHECK(strcmp(err.reason, "line too long") == 0);

    CHECK(ccsim_scenario_parse(nul, sizeof nul - 1u, &sc, &err) != 0);
    CHECK_EQ(err.line, 2);
    CHECK_EQ(err.column, 3);
    CHECK(strcmp(err.reason, "unexpected NUL byte") == 0);

    CHECK_EQ(parse("hold 600s"), 0);
    CHECK(parse("hold 600.001s") != 0);
    CHECK(parse("force 20001mN") != 0);
    CHECK_EQ(ccsim_scenario_parse(NULL, 5, &sc, &err), 0);   /* no text: an empty scenario */
    CHECK_EQ(sc.count, 0);
}

unsigned test_parser_run(void)
{
    test_defaults();
    test_units_and_values();
    test_comments_crlf_seed();
    test_expect_lines_skipped();
    test_errors_line_and_column();
    test_settings_step();
    test_limits();
    return 7u;
}
