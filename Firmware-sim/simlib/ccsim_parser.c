/*
 * CameraControl simulator: the scenario parser (see ccsim_parser.h and
 * docs/SIMULATOR.md): text in, steps with their defaults out.
 */
#include "ccsim_parser.h"

#include <stdio.h>
#include <string.h>

typedef struct token {
    const char *p;
    size_t n;
} token_t;

#define MAX_TOKENS 10u

static bool tok_is(token_t t, const char *word)
{
    size_t n = strlen(word);
    return t.n == n && memcmp(t.p, word, n) == 0;
}

/* Parses a non-negative decimal ("12", "0.25", ".5") into value * 10^6.
 * *rest gets the suffix. Returns false on no digits or overflow. */
static bool parse_decimal(token_t t, uint64_t *value6, token_t *rest)
{
    size_t i = 0;
    uint64_t ip = 0, fp = 0, scale = 100000u;
    bool digits = false;
    while (i < t.n && t.p[i] >= '0' && t.p[i] <= '9') {
        ip = ip * 10u + (uint64_t)(t.p[i] - '0');
        if (ip > 1000000000u) {
            return false;
        }
        digits = true;
        i++;
    }
    if (i < t.n && t.p[i] == '.') {
        i++;
        while (i < t.n && t.p[i] >= '0' && t.p[i] <= '9') {
            fp += (uint64_t)(t.p[i] - '0') * scale;
            scale /= 10u;
            digits = true;
            i++;
        }
    }
    if (!digits) {
        return false;
    }
    *value6 = ip * 1000000u + fp;
    rest->p = t.p + i;
    rest->n = t.n - i;
    return true;
}

static const char *parse_duration(token_t t, uint32_t *us)
{
    uint64_t v6, r;
    token_t unit;
    if (!parse_decimal(t, &v6, &unit)) {
        return "expected a duration such as 200ms";
    }
    if (unit.n == 0u || tok_is(unit, "ms")) {
        r = v6 / 1000u;
    } else if (tok_is(unit, "s")) {
        r = v6;
    } else if (tok_is(unit, "us")) {
        r = v6 / 1000000u;
    } else {
        return "unknown duration unit (use us, ms or s)";
    }
    if (r > CCSIM_MAX_STEP_US) {
        return "duration longer than 600s";
    }
    *us = (uint32_t)r;
    return 0;
}

static const char *parse_force(token_t t, uint32_t *mn)
{
    uint64_t v6, r;
    token_t unit;
    if (!parse_decimal(t, &v6, &unit)) {
        return "expected a force such as 1200mN";
    }
    if (unit.n == 0u || tok_is(unit, "mN") || tok_is(unit, "mn")) {
        r = v6 / 1000000u;
    } else if (tok_is(unit, "N")) {
        r = v6 / 1000u;
    } else {
        return "unknown force unit (use mN or N)";
    }
    if (r > CCSIM_MAX_FORCE_MN) {
        return "force above 20000mN";
    }
    *mn = (uint32_t)r;
    return 0;
}

static const char *parse_position(token_t t, uint32_t *pos)
{
    uint64_t v6;
    token_t unit;
    if (!parse_decimal(t, &v6, &unit) || unit.n != 0u) {
        return "expected a position 0..1 such as 0.25";
    }
    if (v6 > 1000000u) {
        return "position must be 0..1";
    }
    *pos = (uint32_t)((v6 * CCSIM_POS_ONE + 500000u) / 1000000u);
    return 0;
}

static const char *parse_count(token_t t, uint64_t max, uint64_t *out)
{
    size_t i;
    uint64_t v = 0;
    if (t.n == 0u) {
        return "expected a number";
    }
    for (i = 0; i < t.n; i++) {
        if (t.p[i] < '0' || t.p[i] > '9') {
            return "expected a whole number";
        }
        v = v * 10u + (uint64_t)(t.p[i] - '0');
        if (v > max) {
            return "number too large";
        }
    }
    *out = v;
    return 0;
}

/* Parameter keys; each step kind allows a subset. */
enum {
    K_FORCE = 1u << 0, K_HOLD = 1u << 1, K_GAP = 1u << 2, K_AT = 1u << 3, K_FROM = 1u << 4,
    K_TO = 1u << 5, K_OVER = 1u << 6, K_RISE = 1u << 7, K_FALL = 1u << 8, K_COUNT = 1u << 9,
    K_LIGHT_PRESS_FORCE = 1u << 10, K_DOUBLE_LIGHT_PRESS_SPEED = 1u << 11, K_CAMERA_CONTROL = 1u << 12,
    K_CAMERA_ADJUSTMENTS = 1u << 13,
    K_SETTINGS = K_LIGHT_PRESS_FORCE | K_DOUBLE_LIGHT_PRESS_SPEED | K_CAMERA_CONTROL | K_CAMERA_ADJUSTMENTS
};

static const struct {
    const char *name;
    uint32_t key;
} key_names[] = {
    {"force", K_FORCE}, {"hold", K_HOLD}, {"gap", K_GAP}, {"at", K_AT}, {"from", K_FROM},
    {"to", K_TO}, {"over", K_OVER}, {"rise", K_RISE}, {"fall", K_FALL}, {"count", K_COUNT},
    {"light-press-force", K_LIGHT_PRESS_FORCE}, {"double-light-press-speed", K_DOUBLE_LIGHT_PRESS_SPEED},
    {"camera-control", K_CAMERA_CONTROL}, {"camera-adjustments", K_CAMERA_ADJUSTMENTS},
};

/* The values of a setting, in the order of its wire enum (config.proto): the
 * first is 1. NULL ends a list. */
static const char *const light_press_forces[] = {"lighter", "default", "firmer", 0};
static const char *const double_light_press_speeds[] = {"default", "slower", "slowest", 0};
static const char *const switches[] = {"on", "off", 0};

/* The wire enum value (1..) of word in names, or 0 when it is none of them. */
static uint8_t setting_value(token_t word, const char *const *names)
{
    uint8_t i;
    for (i = 0; names[i] != 0; i++) {
        if (tok_is(word, names[i])) {
            return (uint8_t)(i + 1u);
        }
    }
    return 0u;
}

static const struct {
    const char *word;
    uint8_t kind;
    uint32_t keys;
} step_words[] = {
    {"hold", CCSIM_STEP_PAUSE, 0u},
    {"pause", CCSIM_STEP_PAUSE, 0u},
    {"wait", CCSIM_STEP_PAUSE, 0u},
    {"touch", CCSIM_STEP_TOUCH, K_AT | K_HOLD},
    {"release", CCSIM_STEP_RELEASE, 0u},
    {"force", CCSIM_STEP_FORCE, K_OVER | K_AT},
    {"light-press", CCSIM_STEP_LIGHT_PRESS, K_FORCE | K_HOLD | K_AT | K_RISE | K_FALL},
    {"double-light-press", CCSIM_STEP_DOUBLE_LIGHT_PRESS,
     K_FORCE | K_HOLD | K_GAP | K_AT | K_RISE | K_FALL},
    {"full-click", CCSIM_STEP_FULL_CLICK, K_FORCE | K_HOLD | K_AT | K_RISE | K_FALL},
    {"click-and-hold", CCSIM_STEP_CLICK_AND_HOLD, K_FORCE | K_HOLD | K_AT | K_RISE | K_FALL},
    {"slide", CCSIM_STEP_SLIDE, K_FROM | K_TO | K_OVER | K_FORCE},
    {"button", CCSIM_STEP_BUTTON, K_HOLD},
    {"remote-click", CCSIM_STEP_REMOTE_CLICK, K_COUNT},
    {"noise", CCSIM_STEP_NOISE, 0u},
    {"settings", CCSIM_STEP_SETTINGS, K_SETTINGS},
};

static void set_defaults(ccsim_step_t *s)
{
    s->rise_us = 50000u;
    s->fall_us = 40000u;
    s->count = 1u;
    switch (s->kind) {
    case CCSIM_STEP_LIGHT_PRESS:
        s->force_mn = 1200u;
        s->hold_us = 200000u;
        break;
    case CCSIM_STEP_DOUBLE_LIGHT_PRESS:
        s->force_mn = 1200u;
        s->hold_us = 80000u;
        s->gap_us = 150000u;
        s->rise_us = 40000u;
        s->fall_us = 30000u;
        break;
    case CCSIM_STEP_FULL_CLICK:
        s->force_mn = 3500u;
        s->hold_us = 80000u;
        break;
    case CCSIM_STEP_CLICK_AND_HOLD:
        s->force_mn = 3500u;
        s->hold_us = 800000u;
        break;
    case CCSIM_STEP_SLIDE:
        s->over_us = 300000u;
        s->force_mn = 0u;   /* 0: the resting force */
        break;
    case CCSIM_STEP_FORCE:
        s->over_us = 50000u;
        break;
    case CCSIM_STEP_BUTTON:
        s->hold_us = 100000u;
        break;
    default:
        break;
    }
}

/* Parses one step's words after the keyword; returns an error message or 0.
 * On an error *where points at the word (or value) at fault, or at the
 * step's first word when something is missing. */
static const char *parse_step(ccsim_step_t *s, uint32_t allowed, const token_t *tok, size_t n,
                              const char **where)
{
    size_t i;
    uint32_t seen = 0u;
    size_t positional = 0u;
    const char *e;
    bool has_to = false;
    const char *over_word = tok[0].p;    /* where over= was given, else the step */
    const char *force_word = tok[0].p;   /* where force= was given, else the step */
    const char *from_word = tok[0].p;    /* the second of at= / from= */

    *where = tok[0].p;

    for (i = 1; i < n; i++) {
        const char *eq = memchr(tok[i].p, '=', tok[i].n);
        if (eq == 0) {
            token_t t = tok[i];
            *where = t.p;
            positional++;
            if (positional > 1u) {
                return "too many values";
            }
            switch (s->kind) {
            case CCSIM_STEP_PAUSE:
            case CCSIM_STEP_TOUCH:
            case CCSIM_STEP_CLICK_AND_HOLD:
                if ((seen & K_HOLD) != 0u) {
                    return "hold given twice";
                }
                seen |= K_HOLD;
                e = parse_duration(t, &s->hold_us);
                if (e != 0) {
                    return e;
                }
                break;
            case CCSIM_STEP_FORCE:
                e = parse_force(t, &s->force_mn);
                if (e != 0) {
                    return e;
                }
                break;
            case CCSIM_STEP_BUTTON:
                if (tok_is(t, "volume-up")) {
                    s->button = 0u;
                } else if (tok_is(t, "volume-down")) {
                    s->button = 1u;
                } else if (tok_is(t, "action")) {
                    s->button = 2u;
                } else {
                    return "unknown button (use volume-up, volume-down or action)";
                }
                break;
            case CCSIM_STEP_NOISE:
                if (tok_is(t, "on")) {
                    s->flag = true;
                } else if (tok_is(t, "off")) {
                    s->flag = false;
                } else {
                    return "expected on or off";
                }
                break;
            default:
                return "unexpected value (parameters are key=value)";
            }
        } else {
            token_t key, val;
            size_t k;
            uint32_t which = 0u;
            key.p = tok[i].p;
            key.n = (size_t)(eq - tok[i].p);
            val.p = eq + 1;
            val.n = tok[i].n - key.n - 1u;
            *where = key.p;
            for (k = 0; k < sizeof(key_names) / sizeof(key_names[0]); k++) {
                if (tok_is(key, key_names[k].name)) {
                    which = key_names[k].key;
                }
            }
            if (which == 0u || (allowed & which) == 0u) {
                return "unknown parameter for this step";
            }
            if ((seen & which) != 0u) {
                return "parameter given twice";
            }
            seen |= which;
            *where = val.p;
            if (which == K_OVER) {
                over_word = key.p;
            } else if (which == K_FORCE) {
                force_word = key.p;
            } else if (which == K_AT || which == K_FROM) {
                from_word = key.p;
            }
            switch (which) {
            case K_FORCE: e = parse_force(val, &s->force_mn); break;
            case K_HOLD: e = parse_duration(val, &s->hold_us); break;
            case K_GAP: e = parse_duration(val, &s->gap_us); break;
            case K_OVER: e = parse_duration(val, &s->over_us); break;
            case K_RISE: e = parse_duration(val, &s->rise_us); break;
            case K_FALL: e = parse_duration(val, &s->fall_us); break;
            case K_AT:
            case K_FROM:
                e = parse_position(val, &s->at);
                s->has_at = true;
                break;
            case K_TO:
                e = parse_position(val, &s->to);
                has_to = true;
                break;
            case K_LIGHT_PRESS_FORCE:
                s->settings[CCSIM_SETTING_LIGHT_PRESS_FORCE] = setting_value(val, light_press_forces);
                e = s->settings[CCSIM_SETTING_LIGHT_PRESS_FORCE] == 0u ? "expected lighter, default or firmer" : 0;
                break;
            case K_DOUBLE_LIGHT_PRESS_SPEED:
                s->settings[CCSIM_SETTING_DOUBLE_LIGHT_PRESS_SPEED] = setting_value(val, double_light_press_speeds);
                e = s->settings[CCSIM_SETTING_DOUBLE_LIGHT_PRESS_SPEED] == 0u ? "expected default, slower or slowest"
                                                                               : 0;
                break;
            case K_CAMERA_CONTROL:
                s->settings[CCSIM_SETTING_CAMERA_CONTROL] = setting_value(val, switches);
                e = s->settings[CCSIM_SETTING_CAMERA_CONTROL] == 0u ? "expected on or off" : 0;
                break;
            case K_CAMERA_ADJUSTMENTS:
                s->settings[CCSIM_SETTING_CAMERA_ADJUSTMENTS] = setting_value(val, switches);
                e = s->settings[CCSIM_SETTING_CAMERA_ADJUSTMENTS] == 0u ? "expected on or off" : 0;
                break;
            default: {
                uint64_t c = 0;
                e = parse_count(val, 100u, &c);
                if (e == 0 && c == 0u) {
                    e = "count must be 1..100";
                }
                s->count = (uint32_t)c;
                break;
            }
            }
            if (e != 0) {
                return e;
            }
        }
    }
    *where = tok[0].p;   /* from here on: something missing or contradictory */
    if ((seen & K_AT) != 0u && (seen & K_FROM) != 0u) {
        *where = from_word;
        return "at= and from= both given";
    }
    switch (s->kind) {
    case CCSIM_STEP_PAUSE:
        if (positional == 0u) {
            return "missing duration";
        }
        break;
    case CCSIM_STEP_FORCE:
        if (positional == 0u) {
            return "missing force";
        }
        break;
    case CCSIM_STEP_BUTTON:
        if (positional == 0u) {
            return "missing button name";
        }
        break;
    case CCSIM_STEP_NOISE:
        if (positional == 0u) {
            return "expected on or off";
        }
        break;
    case CCSIM_STEP_SETTINGS:
        if ((seen & K_SETTINGS) == 0u) {
            return "settings needs a setting, such as camera-adjustments=off";
        }
        break;
    case CCSIM_STEP_SLIDE:
        if (!has_to) {
            return "slide needs to=";
        }
        if (s->over_us == 0u) {
            *where = over_word;
            return "over= must be above zero";
        }
        break;
    case CCSIM_STEP_LIGHT_PRESS:
    case CCSIM_STEP_DOUBLE_LIGHT_PRESS:
    case CCSIM_STEP_FULL_CLICK:
    case CCSIM_STEP_CLICK_AND_HOLD:
        if (s->force_mn == 0u) {
            *where = force_word;
            return "force must be above zero";
        }
        break;
    default:
        break;
    }
    return 0;
}

/* True when the line's first word is `word` (`len` bytes). */
static bool first_word_is(const char *p, size_t n, const char *word, size_t len)
{
    size_t i = 0;
    while (i < n && (p[i] == ' ' || p[i] == '\t')) {
        i++;
    }
    return n - i >= len && memcmp(p + i, word, len) == 0 && (n - i == len || p[i + len] == ' ' || p[i + len] == '\t');
}

/* A host-side line (any length, any bytes): an `expect` line (an
 * expectation) or a `host` line (a step the host takes: its orientation, the
 * camera's format). The firmware skips it like a comment. */
static bool is_host_side_line(const char *p, size_t n)
{
    return first_word_is(p, n, "expect", 6u) || first_word_is(p, n, "host", 4u);
}

/* Records an error at line, column (1-based; 0 for none). */
static int fail(ccsim_parse_error_t *err, uint32_t line, size_t column, const char *msg)
{
    if (err != 0) {
        err->line = line;
        err->column = (uint32_t)column;
        err->reason = msg;
        (void)snprintf(err->message, sizeof(err->message), "line %u: %s", (unsigned)line, msg);
    }
    return 1;
}

/* "too many steps", naming this build's limit (CCSIM_MAX_STEPS: 128, 24 on the
 * micro:bit), never another build's (PROTOCOL.md §7, SimulatorService). */
static int fail_too_many_steps(ccsim_parse_error_t *err, uint32_t line, size_t column)
{
    (void)fail(err, line, column, "too many steps");
    if (err != 0) {
        (void)snprintf(err->message, sizeof(err->message), "line %u: too many steps (this device takes at most %u)",
                       (unsigned)line, (unsigned)CCSIM_MAX_STEPS);
    }
    return 1;
}

/* The 1-based column of p in the line that starts at line_start. */
static size_t column_of(const char *line_start, const char *p)
{
    return (size_t)(p - line_start) + 1u;
}

int ccsim_scenario_parse(const char *text, size_t len, ccsim_scenario_t *out,
                         ccsim_parse_error_t *err)
{
    size_t pos = 0;
    uint32_t line = 0;
    if (err != 0) {
        err->line = 0;
        err->column = 0;
        err->reason = 0;
        err->message[0] = '\0';
    }
    if (out == 0) {
        return fail(err, 0, 0, "no output");
    }
    out->has_seed = false;
    out->seed = 0;
    out->count = 0;
    if (text == 0) {
        len = 0;
    }
    while (pos < len) {
        size_t start = pos, end, n, i;
        token_t tok[MAX_TOKENS];
        size_t ntok = 0;
        line++;
        while (pos < len && text[pos] != '\n') {
            pos++;
        }
        end = pos;
        if (pos < len) {
            pos++; /* the '\n' */
        }
        if (end > start && text[end - 1] == '\r') {
            end--;
        }
        if (is_host_side_line(text + start, end - start)) {
            continue; /* the host's: checked and stripped there (docs/SIMULATOR.md) */
        }
        if (end - start > CCSIM_MAX_LINE) {
            return fail(err, line, CCSIM_MAX_LINE + 1u, "line too long");
        }
        /* Drop the comment, check characters, split into words. */
        n = end - start;
        for (i = 0; i < n; i++) {
            unsigned char c = (unsigned char)text[start + i];
            if (c == '#') {
                n = i;
                break;
            }
            if (c == '\0') {
                return fail(err, line, i + 1u, "unexpected NUL byte");
            }
            if (c != ' ' && c != '\t' && (c < 0x21u || c > 0x7Eu)) {
                return fail(err, line, i + 1u, "unexpected character");
            }
        }
        i = 0;
        while (i < n) {
            while (i < n && (text[start + i] == ' ' || text[start + i] == '\t')) {
                i++;
            }
            if (i >= n) {
                break;
            }
            if (ntok >= MAX_TOKENS) {
                return fail(err, line, i + 1u, "too many words");
            }
            tok[ntok].p = text + start + i;
            while (i < n && text[start + i] != ' ' && text[start + i] != '\t') {
                i++;
            }
            tok[ntok].n = (size_t)(text + start + i - tok[ntok].p);
            ntok++;
        }
        if (ntok == 0u) {
            continue;
        }
        if (tok_is(tok[0], "seed")) {
            uint64_t seed = 0;
            const char *e;
            if (ntok != 2u) {
                return fail(err, line, column_of(text + start, tok[ntok < 2u ? 0u : 2u].p),
                            "seed takes one number");
            }
            if (out->has_seed) {
                return fail(err, line, column_of(text + start, tok[0].p), "seed given twice");
            }
            e = parse_count(tok[1], 0xFFFFFFFFFFFFull, &seed);
            if (e != 0) {
                return fail(err, line, column_of(text + start, tok[1].p), e);
            }
            out->has_seed = true;
            out->seed = seed;
            continue;
        }
        {
            size_t w;
            ccsim_step_t *s;
            const char *e;
            const char *where = 0;
            uint32_t allowed = 0u;
            bool found = false;
            if (out->count >= CCSIM_MAX_STEPS) {
                return fail_too_many_steps(err, line, column_of(text + start, tok[0].p));
            }
            s = &out->steps[out->count];
            memset(s, 0, sizeof(*s));
            for (w = 0; w < sizeof(step_words) / sizeof(step_words[0]); w++) {
                if (tok_is(tok[0], step_words[w].word)) {
                    s->kind = step_words[w].kind;
                    allowed = step_words[w].keys;
                    found = true;
                    break;
                }
            }
            if (!found) {
                return fail(err, line, column_of(text + start, tok[0].p), "unknown step");
            }
            s->line = line;
            set_defaults(s);
            e = parse_step(s, allowed, tok, ntok, &where);
            if (e != 0) {
                return fail(err, line, column_of(text + start, where), e);
            }
            out->count++;
        }
    }
    return 0;
}

