/*
 * camctl-sim's link faults: see faults.h and docs/RELIABILITY.md.
 *
 * One injector per direction:
 *
 *   feed(bytes) -> split at 0x00 -> per frame: garbage? drop? stall? -> per byte: corrupt? drop?
 *               -> dup? reorder? -> queue -> take(now) -> baud re-sampling -> bytes
 *
 * as LinkFaults/FaultInjector do in Swift. Only when a fault needs a frame whole
 * (dup, reorder, a baud mismatch) do bytes wait for their frame's delimiter (or
 * 4 KiB without one, which then pass with byte faults only); otherwise they pass
 * as they come: drop-frame, garbage and stall are rolled at a frame's first byte,
 * in the same order and with the same random numbers as for a whole frame, and a
 * stall stops the line once the frame's delimiter has passed. Held to its
 * delimiter, a long frame on a slow line reached its reader whole after a silence
 * as long as its line time. A frame held back for reordering leaves after the
 * next frame or after 50 ms.
 */
#include "faults.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cc_device.h"

#define PARTIAL_BYTES 4096u              /* a frame's bytes until its delimiter */
#define QUEUE_BYTES (1u << 21)           /* damaged bytes ready to leave (2 MiB: a 1 MiB burst fits) */
#define REORDER_HOLD_US 50000u
#define MAX_CUES 32u
#define DEFAULT_UNPLUG_US 1000000u

const char ccsim_faults_help[] =
    "--faults SPEC: comma-separated items, all optional (the same as camctl relay --faults):\n"
    "  corrupt=R        each byte is XOR-ed with a random non-zero value with probability R\n"
    "  drop=R           each byte is lost with probability R\n"
    "  drop-frame=R     each frame (bytes up to and including a 0x00) is lost with probability R\n"
    "  dup=R            each frame is sent twice with probability R\n"
    "  reorder=R        each frame is held back and sent after the next one with probability R\n"
    "  garbage=R[:N]    before each frame, with probability R, a burst of 1..N random bytes (N = 64)\n"
    "  stall=R[:D]      at each frame, with probability R, the line stops for D (100ms; D > 0), then resumes\n"
    "  baud=X           the receiver's UART runs at X times the sender's rate (0.5 .. 2; 1 = matched)\n"
    "  reset=D          the firmware core reboots every D (a new boot: the host needs a new session)\n"
    "  unplug=D[:U]     D after the start and after each return the pty vanishes for U (1s): closed,\n"
    "                   --link removed, then a new pty\n"
    "  seed=N           the faults' seed (default: --seed)\n"
    "Rates: 0.01 or 1%; durations: 500us, 200ms, 1.5s (bare: ms). Faults apply both ways.\n"
    "\n"
    "scenario lines (camctl-sim --scenario only; they fire when the scenario reaches the next step):\n"
    "  fault SPEC [for D]   the spec's items on top of --faults, for D (else from then on)\n"
    "  fault reset          the firmware core reboots now\n"
    "  fault unplug [D]     the pty vanishes now for D (1s), then comes back\n";

/* ------------------------------------------------------------ spec parsing */

void ccsim_fault_spec_init(ccsim_fault_spec_t *spec)
{
    memset(spec, 0, sizeof(*spec));
    spec->garbage_max = 64u;
    spec->stall_us = 100000u;
    spec->baud = 1.0;
    spec->unplug_for_us = DEFAULT_UNPLUG_US;
    spec->seed = 1u;
}

/* A whole-string number: no leading space, nothing after it. */
static bool parse_number(const char *s, double *out)
{
    char *end = 0;
    double v;
    if (*s == '\0' || *s == ' ' || *s == '\t' || *s == '\n') {
        return false;
    }
    v = strtod(s, &end);
    if (end == s || *end != '\0' || v != v) {
        return false;
    }
    *out = v;
    return true;
}

/* 0.01 or 1% -> 0.01; false outside 0..1. */
static bool parse_rate(const char *s, double *out)
{
    char buf[64];
    size_t n = strlen(s);
    bool percent = n > 0u && s[n - 1u] == '%';
    double v;
    if (n >= sizeof(buf)) {
        return false;
    }
    memcpy(buf, s, n + 1u);
    if (percent) {
        buf[n - 1u] = '\0';
    }
    if (!parse_number(buf, &v)) {
        return false;
    }
    if (percent) {
        v /= 100.0;
    }
    if (!(v >= 0.0 && v <= 1.0)) {
        return false;
    }
    *out = v;
    return true;
}

/* 500us, 200ms, 1.5s, bare ms -> microseconds (at most a day). */
bool ccsim_fault_parse_duration(const char *s, uint64_t *out);
bool ccsim_fault_parse_duration(const char *s, uint64_t *out)
{
    static const struct {
        const char *suffix;
        double scale;
    } units[] = {{"us", 1.0}, {"ms", 1000.0}, {"s", 1000000.0}, {"", 1000.0}};
    size_t n = strlen(s), u;
    for (u = 0; u < sizeof(units) / sizeof(units[0]); u++) {
        size_t k = strlen(units[u].suffix);
        char buf[64];
        double v;
        if (k > n || strcmp(s + n - k, units[u].suffix) != 0 || n - k >= sizeof(buf)) {
            continue;
        }
        memcpy(buf, s, n - k);
        buf[n - k] = '\0';
        if (!parse_number(buf, &v) || !(v >= 0.0) || v > 86400000000.0 / units[u].scale) {
            continue;
        }
        *out = (uint64_t)(v * units[u].scale);
        return true;
    }
    return false;
}

/* The item names a SPEC knows (LinkFaults' table). */
static bool known_item(const char *name, size_t len)
{
    static const char *const names[] = {"corrupt", "drop", "drop-frame", "dup",   "reorder", "garbage",
                                        "stall",   "baud", "reset",      "unplug", "seed"};
    size_t i;
    for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        if (strlen(names[i]) == len && memcmp(names[i], name, len) == 0) {
            return true;
        }
    }
    return false;
}

/* The first item of `spec` (comma-separated, spaces around items allowed) whose name is not a known one,
 * with or without a value, or 0; *len is its name's length. */
static const char *first_unknown_item(const char *spec, size_t *len)
{
    const char *p = spec;
    while (*p != '\0') {
        size_t n = strcspn(p, ",");
        const char *b = p, *e = p + n;
        const char *eq;
        while (b < e && *b == ' ') {
            b++;
        }
        while (e > b && e[-1] == ' ') {
            e--;
        }
        eq = e > b ? memchr(b, '=', (size_t)(e - b)) : 0;
        if (eq != 0) {
            e = eq;
        }
        if (e > b && !known_item(b, (size_t)(e - b))) {
            *len = (size_t)(e - b);
            return b;
        }
        p += n;
        if (*p == ',') {
            p++;
        }
    }
    return 0;
}

static bool parse_item(const char *item, ccsim_fault_spec_t *spec, char *msg, size_t msg_cap)
{
    char name[32], value[64], first[64];
    const char *eq = strchr(item, '=');
    const char *colon;
    const char *second = 0;
    size_t name_len;
    if (eq == 0) {
        /* a misspelt name is unknown, whether or not a value follows it */
        if (!known_item(item, strlen(item))) {
            (void)snprintf(msg, msg_cap, "unknown item '%s'", item);
        } else {
            (void)snprintf(msg, msg_cap, "'%s' needs a value", item);
        }
        return false;
    }
    name_len = (size_t)(eq - item);
    if (name_len >= sizeof(name) || strlen(eq + 1) >= sizeof(value)) {
        (void)snprintf(msg, msg_cap, "'%s': bad value", item);
        return false;
    }
    memcpy(name, item, name_len);
    name[name_len] = '\0';
    strcpy(value, eq + 1);
    strcpy(first, value);
    /* as Swift's split(separator: ":", maxSplits: 1) does: empty parts do not count */
    colon = strchr(value, ':');
    if (colon != 0) {
        first[colon - value] = '\0';
        second = colon + 1;
        if (*second == '\0') {
            second = 0;
        } else if (first[0] == '\0') {
            strcpy(first, second);
            second = 0;
        }
    }
#define BAD()                                                 \
    do {                                                      \
        (void)snprintf(msg, msg_cap, "'%s': bad value", item); \
        return false;                                         \
    } while (0)
    if (strcmp(name, "corrupt") == 0) {
        if (!parse_rate(value, &spec->corrupt)) BAD();
    } else if (strcmp(name, "drop") == 0) {
        if (!parse_rate(value, &spec->drop)) BAD();
    } else if (strcmp(name, "drop-frame") == 0) {
        if (!parse_rate(value, &spec->drop_frame)) BAD();
    } else if (strcmp(name, "dup") == 0) {
        if (!parse_rate(value, &spec->dup)) BAD();
    } else if (strcmp(name, "reorder") == 0) {
        if (!parse_rate(value, &spec->reorder)) BAD();
    } else if (strcmp(name, "garbage") == 0) {
        if (!parse_rate(first, &spec->garbage)) BAD();
        if (second != 0) {
            char *end = 0;
            long v;
            if (*second == '+') {
                second++;
            }
            if (*second < '0' || *second > '9') BAD();
            v = strtol(second, &end, 10);
            if (*end != '\0' || v <= 0 || v > (1L << 20)) BAD();
            spec->garbage_max = (uint32_t)v;
        }
    } else if (strcmp(name, "stall") == 0) {
        if (!parse_rate(first, &spec->stall)) BAD();
        if (second != 0 && (!ccsim_fault_parse_duration(second, &spec->stall_us) || spec->stall_us == 0u)) BAD();
    } else if (strcmp(name, "baud") == 0) {
        double v;
        if (!parse_number(value, &v) || !(v >= 0.5 && v <= 2.0)) BAD();
        spec->baud = v;
    } else if (strcmp(name, "reset") == 0) {
        if (!ccsim_fault_parse_duration(value, &spec->reset_every_us) || spec->reset_every_us == 0u) BAD();
    } else if (strcmp(name, "unplug") == 0) {
        if (!ccsim_fault_parse_duration(first, &spec->unplug_every_us) || spec->unplug_every_us == 0u) BAD();
        if (second != 0 && !ccsim_fault_parse_duration(second, &spec->unplug_for_us)) BAD();
    } else if (strcmp(name, "seed") == 0) {
        char *end = 0;
        unsigned long long v;
        const char *digits = value[0] == '+' ? value + 1 : value;
        if (*digits < '0' || *digits > '9') BAD();
        errno = 0;
        v = strtoull(digits, &end, 10);
        if (*end != '\0' || errno != 0) BAD();
        spec->seed = (uint64_t)v;
        spec->has_seed = true;
    } else {
        (void)snprintf(msg, msg_cap, "unknown item '%s'", name);
        return false;
    }
#undef BAD
    return true;
}

bool ccsim_fault_spec_parse(const char *text, ccsim_fault_spec_t *spec, char *msg, size_t msg_cap)
{
    const char *p = text;
    while (*p != '\0') {
        const char *comma = strchr(p, ',');
        size_t n = comma != 0 ? (size_t)(comma - p) : strlen(p);
        char item[128];
        const char *b = p, *e = p + n;
        while (b < e && *b == ' ') {
            b++;
        }
        while (e > b && e[-1] == ' ') {
            e--;
        }
        if (e > b) {
            if ((size_t)(e - b) >= sizeof(item)) {
                (void)snprintf(msg, msg_cap, "'%.40s...': too long", b);
                return false;
            }
            memcpy(item, b, (size_t)(e - b));
            item[e - b] = '\0';
            if (!parse_item(item, spec, msg, msg_cap)) {
                return false;
            }
        }
        p += n;
        if (*p == ',') {
            p++;
        }
    }
    return true;
}

/* --------------------------------------------------------------- injectors */

typedef struct counts {
    unsigned long long frames, bytes, corrupted, dropped_bytes, dropped_frames, duplicated, reordered,
        garbage_bursts, garbage_bytes, stalls, baud_damaged;
} counts_t;

typedef struct injector {
    uint64_t rng;
    uint8_t partial[PARTIAL_BYTES];
    size_t partial_len;
    uint8_t held[PARTIAL_BYTES];
    size_t held_len;
    bool has_held;
    uint64_t held_since;
    uint64_t stalled_until;
    /* bytes passing as they come: the frame begun (its frame faults rolled at its first byte) */
    bool stream_open, stream_dropped, stream_stalls;
    size_t stream_bytes;
    uint8_t queue[QUEUE_BYTES];
    size_t head, len;
    counts_t counts;
} injector_t;

static injector_t g_inj[2];
static ccsim_fault_spec_t g_base;     /* --faults */
static ccsim_fault_spec_t g_spec;     /* in effect (base, or a scenario's `fault SPEC for D`) */
static uint64_t g_overlay_until;      /* g_spec != g_base until then (0: not overlaid) */
static bool g_active, g_verbose;
static uint64_t g_seed = 1u;        /* --seed, for faults a scenario turns on */
static uint64_t g_next_reset, g_next_unplug, g_replug_at;
static bool g_unplugged;
static unsigned g_pending;            /* CCSIM_FAULT_* from scenario cues */
static uint64_t g_pending_unplug_us;
static unsigned long long g_resets, g_unplugs;
static const char *const dir_name[2] = {"host->device", "device->host"};

static uint64_t next_random(uint64_t *state)
{
    uint64_t z;
    *state += 0x9E3779B97F4A7C15ull;
    z = *state;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static bool roll(injector_t *in, double rate)
{
    return rate > 0.0 && (double)(next_random(&in->rng) >> 11) / 9007199254740992.0 < rate;
}

static void logf_fault(int dir, uint64_t now_us, const char *what, unsigned long long a, unsigned long long b)
{
    if (g_verbose) {
        fprintf(stderr, "camctl-sim: fault %s %llu.%06llu %s %llu %llu\n", dir_name[dir],
                (unsigned long long)(now_us / 1000000u), (unsigned long long)(now_us % 1000000u), what, a, b);
    }
}

static void log_event(uint64_t now_us, const char *what)
{
    if (g_verbose) {
        fprintf(stderr, "camctl-sim: fault %llu.%06llu %s\n", (unsigned long long)(now_us / 1000000u),
                (unsigned long long)(now_us % 1000000u), what);
    }
}

static void push(injector_t *in, const uint8_t *bytes, size_t n)
{
    size_t i;
    for (i = 0; i < n && in->len < QUEUE_BYTES; i++) {
        in->queue[(in->head + in->len) % QUEUE_BYTES] = bytes[i];
        in->len++;
    }
}

/* Byte faults over bytes[0..n), in place; returns the bytes kept. */
static size_t damage(injector_t *in, int dir, uint8_t *bytes, size_t n, uint64_t now)
{
    size_t i, k = 0;
    if (g_spec.corrupt <= 0.0 && g_spec.drop <= 0.0) {
        return n;
    }
    for (i = 0; i < n; i++) {
        uint8_t b = bytes[i];
        if (roll(in, g_spec.drop)) {
            in->counts.dropped_bytes++;
            logf_fault(dir, now, "drop byte/of", i, n);
            continue;
        }
        if (roll(in, g_spec.corrupt)) {
            uint8_t mask = (uint8_t)(1u + next_random(&in->rng) % 255u);
            in->counts.corrupted++;
            logf_fault(dir, now, "corrupt byte/of", i, n);
            b ^= mask;
        }
        bytes[k++] = b;
    }
    return k;
}

/* Whether a fault looks for frames at all, and whether one needs a frame whole before it can act. */
static bool acts_on_frames(void)
{
    return g_spec.drop_frame > 0.0 || g_spec.dup > 0.0 || g_spec.reorder > 0.0 || g_spec.garbage > 0.0
        || g_spec.stall > 0.0 || g_spec.baud != 1.0;
}

static bool needs_whole_frames(void)
{
    return g_spec.dup > 0.0 || g_spec.reorder > 0.0 || g_spec.baud != 1.0;
}

static void stall_line(injector_t *in, uint64_t now)
{
    if (now + g_spec.stall_us > in->stalled_until) {
        in->stalled_until = now + g_spec.stall_us;
    }
}

/* A frame begins: counted, and its garbage, drop and stall rolled, in this order. `bytes`: its length when
 * known (a whole frame), for the log. */
static void begin_frame(injector_t *in, int dir, uint64_t now, size_t bytes, bool *dropped, bool *stalls)
{
    unsigned long long number = ++in->counts.frames;
    *dropped = false;
    *stalls = false;
    if (roll(in, g_spec.garbage)) {
        size_t length = 1u + (size_t)(next_random(&in->rng) % (g_spec.garbage_max ? g_spec.garbage_max : 1u));
        size_t i;
        in->counts.garbage_bursts++;
        in->counts.garbage_bytes += length;
        logf_fault(dir, now, "garbage bytes/before-frame", length, number);
        for (i = 0; i < length; i++) {
            uint8_t b = (uint8_t)next_random(&in->rng);
            push(in, &b, 1u);
        }
    }
    if (roll(in, g_spec.drop_frame)) {
        in->counts.dropped_frames++;
        logf_fault(dir, now, "drop-frame frame/bytes", number, bytes);
        *dropped = true;
        return;
    }
    if (roll(in, g_spec.stall)) {
        in->counts.stalls++;
        logf_fault(dir, now, "stall us/at-frame", g_spec.stall_us, number);
        *stalls = true;
    }
}

/* Bytes passing as they come (no fault needs a frame whole): damaged and queued, or dropped up to the frame's
 * delimiter; a frame without one ends after 4 KiB, and the next byte begins another. */
static void stream(injector_t *in, int dir, const uint8_t *bytes, size_t len, uint64_t now)
{
    static uint8_t chunk[PARTIAL_BYTES];
    size_t start = 0;
    while (start < len) {
        size_t end = start;
        bool ends = false;
        if (!in->stream_open) {
            begin_frame(in, dir, now, 0u, &in->stream_dropped, &in->stream_stalls);
            in->stream_open = true;
            in->stream_bytes = 0;
        }
        while (end < len && in->stream_bytes + (end - start) < PARTIAL_BYTES) {
            if (bytes[end++] == 0u) {
                ends = true;
                break;
            }
        }
        ends = ends || in->stream_bytes + (end - start) >= PARTIAL_BYTES;
        if (ends && in->stream_stalls) {
            stall_line(in, now);
        }
        if (!in->stream_dropped) {
            size_t n = end - start;
            memcpy(chunk, bytes + start, n);
            n = damage(in, dir, chunk, n, now);
            push(in, chunk, n);
        }
        in->stream_bytes += end - start;
        in->stream_open = !ends;
        start = end;
    }
}

static void frame(injector_t *in, int dir, uint64_t now)
{
    unsigned long long number;
    size_t n;
    bool dropped, stalls;
    begin_frame(in, dir, now, in->partial_len, &dropped, &stalls);
    number = in->counts.frames;
    if (dropped) {
        return;
    }
    if (stalls) {
        stall_line(in, now);
    }
    n = damage(in, dir, in->partial, in->partial_len, now);
    if (roll(in, g_spec.dup)) {
        in->counts.duplicated++;
        logf_fault(dir, now, "dup frame/bytes", number, n);
        push(in, in->partial, n);
    }
    if (!in->has_held && roll(in, g_spec.reorder)) {
        in->counts.reordered++;
        logf_fault(dir, now, "reorder frame/bytes", number, n);
        memcpy(in->held, in->partial, n);
        in->held_len = n;
        in->has_held = true;
        in->held_since = now;
        return;
    }
    push(in, in->partial, n);
    if (in->has_held) {
        push(in, in->held, in->held_len);
        in->has_held = false;
    }
}

void ccsim_faults_enable(const ccsim_fault_spec_t *spec, uint64_t seed)
{
    int d;
    uint64_t s = spec->has_seed ? spec->seed : seed;
    g_base = *spec;
    g_spec = *spec;
    g_active = true;
    for (d = 0; d < 2; d++) {
        memset(&g_inj[d].counts, 0, sizeof(g_inj[d].counts));
        g_inj[d].rng = s * 0x9E3779B97F4A7C15ull + (uint64_t)d + 2u;
    }
    g_next_reset = spec->reset_every_us;
    g_next_unplug = spec->unplug_every_us;
}

void ccsim_faults_set_verbose(bool verbose)
{
    g_verbose = verbose;
}

bool ccsim_faults_active(void)
{
    return g_active;
}

size_t ccsim_faults_room(int dir)
{
    const injector_t *in = &g_inj[dir];
    /* per input byte at most: itself twice (dup) and a garbage burst (a 1-byte frame); plus the
     * partial and held frames that may join the queue */
    size_t per_byte = 2u + (size_t)g_spec.garbage_max;
    size_t reserve = 3u * PARTIAL_BYTES;
    size_t free_bytes = QUEUE_BYTES - in->len;
    size_t room;
    if (g_spec.garbage <= 0.0) {
        per_byte = 2u;
    }
    if (free_bytes <= reserve + per_byte) {
        return 0u;
    }
    room = (free_bytes - reserve) / per_byte;
    if (room > PARTIAL_BYTES) {
        room = PARTIAL_BYTES;
    }
    return room;
}

void ccsim_faults_feed(int dir, const uint8_t *bytes, size_t len, uint64_t now_us)
{
    injector_t *in = &g_inj[dir];
    size_t i;
    in->counts.bytes += len;
    if (!needs_whole_frames() && in->partial_len > 0u) {
        /* gathered while a fault needed whole frames (a scenario's `fault` line ended): they leave now, as
         * the beginning of a streamed frame whose faults were not rolled */
        size_t n = damage(in, dir, in->partial, in->partial_len, now_us);
        push(in, in->partial, n);
        in->stream_open = true;
        in->stream_dropped = false;
        in->stream_stalls = false;
        in->stream_bytes = in->partial_len;
        in->partial_len = 0;
    }
    if (!acts_on_frames()) {
        /* no fault acts on frames: the bytes pass as they come (byte faults need no frame) */
        static uint8_t chunk[PARTIAL_BYTES];
        size_t start = 0;
        for (i = 0; i < len; i++) {
            in->counts.frames += bytes[i] == 0u ? 1u : 0u;
        }
        in->stream_open = false;
        while (start < len) {
            size_t n = len - start < sizeof chunk ? len - start : sizeof chunk;
            memcpy(chunk, bytes + start, n);
            start += n;
            n = damage(in, dir, chunk, n, now_us);
            push(in, chunk, n);
        }
        return;
    }
    if (!needs_whole_frames()) {
        stream(in, dir, bytes, len, now_us);
        return;
    }
    in->stream_open = false; /* the rest of a streamed frame is gathered as a frame of its own */
    for (i = 0; i < len; i++) {
        in->partial[in->partial_len++] = bytes[i];
        if (bytes[i] == 0u) {
            frame(in, dir, now_us);
            in->partial_len = 0;
        } else if (in->partial_len >= PARTIAL_BYTES) {
            size_t n = damage(in, dir, in->partial, in->partial_len, now_us);
            push(in, in->partial, n);
            in->partial_len = 0;
        }
    }
}

/* What a UART at `ratio` times the sender's rate reads from bytes sent back to back (8N1, idle high). */
static size_t uart_resample(const uint8_t *bytes, size_t n, double ratio, uint8_t *out, size_t cap)
{
    size_t bits = n * 10u, edge = 0, k = 0;
    double period = 1.0 / ratio;
#define LEVEL_AT(i) ((i) >= bits ? 1 : ((i) % 10u == 0u ? 0 : (i) % 10u == 9u ? 1 : (bytes[(i) / 10u] >> ((i) % 10u - 1u)) & 1))
    while (edge < bits && k < cap) {
        double start, position;
        uint8_t byte = 0;
        int bit;
        size_t next;
        if (LEVEL_AT(edge) != 0 || (edge != 0u && LEVEL_AT(edge - 1u) == 0)) {
            edge++;
            continue;
        }
        start = (double)edge;
        for (bit = 0; bit < 8; bit++) {
            double t = start + ((double)bit + 1.5) * period;
            size_t index = (size_t)t; /* t >= 0: floor */
            if (LEVEL_AT(index) != 0) {
                byte |= (uint8_t)(1u << bit);
            }
        }
        out[k++] = byte;
        position = start + 9.5 * period;
        next = (size_t)position;
        next += (double)next < position ? 1u : 0u; /* ceil */
        edge = next > edge + 1u ? next : edge + 1u;
    }
#undef LEVEL_AT
    return k;
}

size_t ccsim_faults_take(int dir, uint8_t *out, size_t cap, uint64_t now_us)
{
    static uint8_t raw[PARTIAL_BYTES];
    injector_t *in = &g_inj[dir];
    size_t n, i, limit = cap;
    if (in->has_held && now_us >= in->held_since + REORDER_HOLD_US) {
        push(in, in->held, in->held_len);
        in->has_held = false;
    }
    if (now_us < in->stalled_until || in->len == 0u) {
        return 0u;
    }
    if (g_spec.baud != 1.0) {
        /* re-sampling makes at most one byte per falling edge: 5 a byte */
        limit = cap / 5u < sizeof(raw) ? cap / 5u : sizeof(raw);
    }
    n = in->len < limit ? in->len : limit;
    for (i = 0; i < n; i++) {
        raw[i % sizeof(raw)] = in->queue[(in->head + i) % QUEUE_BYTES];
        if (g_spec.baud == 1.0) {
            out[i] = raw[i % sizeof(raw)];
        }
    }
    in->head = (in->head + n) % QUEUE_BYTES;
    in->len -= n;
    if (g_spec.baud != 1.0) {
        size_t k = uart_resample(raw, n, g_spec.baud, out, cap), same = 0, most = k > n ? k : n;
        for (i = 0; i < n && i < k; i++) {
            same += raw[i] == out[i];
        }
        in->counts.baud_damaged += most - same;
        return k;
    }
    return n;
}

uint64_t ccsim_faults_due_us(uint64_t now_us)
{
    uint64_t due = UINT64_MAX;
    int d;
#define AT(t)                                                 \
    do {                                                      \
        uint64_t t_ = (t);                                    \
        uint64_t left_ = t_ > now_us ? t_ - now_us : 0u;       \
        due = left_ < due ? left_ : due;                      \
    } while (0)
    for (d = 0; d < 2; d++) {
        const injector_t *in = &g_inj[d];
        if (in->has_held) {
            AT(in->held_since + REORDER_HOLD_US);
        }
        if (in->len > 0u) {
            AT(in->stalled_until);
        }
    }
    if (g_next_reset != 0u) {
        AT(g_next_reset);
    }
    if (g_unplugged) {
        AT(g_replug_at);
    } else if (g_next_unplug != 0u) {
        AT(g_next_unplug);
    }
    if (g_overlay_until != 0u) {
        AT(g_overlay_until);
    }
    if (g_pending != 0u) {
        due = 0u;
    }
#undef AT
    return due;
}

void ccsim_faults_flush(void)
{
    int d;
    for (d = 0; d < 2; d++) {
        g_inj[d].partial_len = 0;
        g_inj[d].stream_open = false;
        g_inj[d].len = 0;
        g_inj[d].head = 0;
        g_inj[d].has_held = false;
        g_inj[d].stalled_until = 0;
    }
}

unsigned ccsim_faults_tick(uint64_t now_us)
{
    unsigned act = 0;
    if (!g_active) {
        return 0u;
    }
    if (g_overlay_until != 0u && now_us >= g_overlay_until) {
        g_spec = g_base;
        g_overlay_until = 0;
        log_event(now_us, "scenario faults end");
    }
    if ((g_pending & CCSIM_FAULT_RESET) != 0u || (g_next_reset != 0u && now_us >= g_next_reset)) {
        if (g_base.reset_every_us != 0u && now_us >= g_next_reset) {
            g_next_reset = now_us + g_base.reset_every_us;
        }
        g_resets++;
        log_event(now_us, "reset: the firmware reboots");
        act |= CCSIM_FAULT_RESET;
    }
    if (g_unplugged) {
        if (now_us >= g_replug_at) {
            g_unplugged = false;
            log_event(now_us, "replug: a new pty");
            act |= CCSIM_FAULT_REPLUG;
        }
    } else if ((g_pending & CCSIM_FAULT_UNPLUG) != 0u || (g_next_unplug != 0u && now_us >= g_next_unplug)) {
        uint64_t len = (g_pending & CCSIM_FAULT_UNPLUG) != 0u ? g_pending_unplug_us : g_base.unplug_for_us;
        if (g_base.unplug_every_us != 0u && now_us >= g_next_unplug) {
            g_next_unplug = now_us + len + g_base.unplug_every_us;
        }
        g_unplugged = true;
        g_replug_at = now_us + len;
        g_unplugs++;
        log_event(now_us, "unplug: the pty vanishes");
        act |= CCSIM_FAULT_UNPLUG;
    }
    g_pending = 0;
    return act;
}

void ccsim_faults_reboot(ccsim_device_t *sim)
{
    ccsim_device_reset(sim);   /* the settings store survives, as a board's flash does */
}

/* --------------------------------------------------------- scenario cues */

typedef struct cue {
    uint32_t step;            /* fires when the player reaches this step */
    unsigned action;          /* CCSIM_FAULT_RESET / _UNPLUG, or 0: a spec */
    uint64_t unplug_us;
    ccsim_fault_spec_t spec;
    uint64_t for_us;          /* the spec's duration (0: from then on) */
} cue_t;

static cue_t g_cues[MAX_CUES];
static uint32_t g_cue_count, g_cue_next;

static bool is_space(char c)
{
    return c == ' ' || c == '\t';
}

/* The next word of [*p, end): returns its length (0 at the end). */
static size_t word(const char **p, const char *end, char *out, size_t cap)
{
    size_t n = 0;
    while (*p < end && is_space(**p)) {
        (*p)++;
    }
    while (*p < end && !is_space(**p) && **p != '#') {
        if (n + 1u < cap) {
            out[n] = **p;
        }
        n++;
        (*p)++;
    }
    out[n < cap ? n : cap - 1u] = '\0';
    return n;
}

bool ccsim_faults_extract_scenario(char *text, size_t len, uint64_t seed, uint32_t *line, uint32_t *column,
                                   char *msg, size_t msg_cap)
{
    char *p = text, *end = text + len;
    uint32_t number = 0, steps = 0;
    g_cue_count = g_cue_next = 0;
    g_seed = seed;
    while (p < end) {
        char *eol = memchr(p, '\n', (size_t)(end - p));
        char *stop = eol != 0 ? eol : end;
        const char *q = p;
        char w[128];
        size_t n;
        number++;
        n = word(&q, stop, w, sizeof(w));
        if (n > 0u && w[0] != '\r' && strcmp(w, "fault") == 0) {
            cue_t *c;
            const char *at;
            char *k;
            if (g_cue_count >= MAX_CUES) {
                *line = number;
                *column = 1u;
                (void)snprintf(msg, msg_cap, "more than %u fault lines", (unsigned)MAX_CUES);
                return false;
            }
            c = &g_cues[g_cue_count];
            memset(c, 0, sizeof(*c));
            c->step = steps;
            while (q < stop && is_space(*q)) {
                q++;
            }
            at = q;
            n = word(&q, stop, w, sizeof(w));
            if (n > 0u && w[n - 1u] == '\r') {
                w[--n] = '\0';
            }
            if (n == 0u || n >= sizeof(w)) {
                *line = number;
                *column = (uint32_t)(at - p) + 1u;
                (void)snprintf(msg, msg_cap, "fault needs SPEC [for D], reset or unplug [D]");
                return false;
            }
            if (strcmp(w, "reset") == 0) {
                c->action = CCSIM_FAULT_RESET;
            } else if (strcmp(w, "unplug") == 0) {
                c->action = CCSIM_FAULT_UNPLUG;
                c->unplug_us = DEFAULT_UNPLUG_US;
                at = q;
                n = word(&q, stop, w, sizeof(w));
                if (n > 0u && w[n - 1u] == '\r') {
                    w[--n] = '\0';
                }
                if (n > 0u && (!ccsim_fault_parse_duration(w, &c->unplug_us) || c->unplug_us == 0u)) {
                    *line = number;
                    *column = (uint32_t)(at - p) + 2u;
                    (void)snprintf(msg, msg_cap, "bad duration '%s' for fault unplug", w);
                    return false;
                }
            } else {
                size_t unknown_len = 0u;
                const char *unknown = first_unknown_item(w, &unknown_len);
                if (unknown != 0) {
                    /* `fault unplg 300ms` as `fault corupt=1%`: the name is at fault, not a missing value */
                    *line = number;
                    *column = (uint32_t)(at - p) + (uint32_t)(unknown - w) + 1u;
                    (void)snprintf(msg, msg_cap,
                                   "unknown fault '%.*s' (reset, unplug [D], or a SPEC of corrupt=, drop=, "
                                   "drop-frame=, dup=, reorder=, garbage=, stall=, baud=)",
                                   (int)unknown_len, unknown);
                    return false;
                }
                ccsim_fault_spec_init(&c->spec);
                if (!ccsim_fault_spec_parse(w, &c->spec, msg, msg_cap)) {
                    *line = number;
                    *column = (uint32_t)(at - p) + 1u;
                    return false;
                }
                if (c->spec.reset_every_us != 0u || c->spec.unplug_every_us != 0u || c->spec.has_seed) {
                    *line = number;
                    *column = (uint32_t)(at - p) + 1u;
                    (void)snprintf(msg, msg_cap, "reset=, unplug= and seed= belong in --faults (use fault reset / fault unplug D)");
                    return false;
                }
                at = q;
                n = word(&q, stop, w, sizeof(w));
                if (n > 0u && w[n - 1u] == '\r') {
                    w[--n] = '\0';
                }
                if (n > 0u) {
                    if (strcmp(w, "for") != 0) {
                        *line = number;
                        *column = (uint32_t)(at - p) + 2u;
                        (void)snprintf(msg, msg_cap, "expected 'for D' after the fault spec");
                        return false;
                    }
                    at = q;
                    n = word(&q, stop, w, sizeof(w));
                    if (n > 0u && w[n - 1u] == '\r') {
                        w[--n] = '\0';
                    }
                    if (n == 0u || !ccsim_fault_parse_duration(w, &c->for_us) || c->for_us == 0u) {
                        *line = number;
                        *column = (uint32_t)(at - p) + 2u;
                        (void)snprintf(msg, msg_cap, "'for' needs a duration");
                        return false;
                    }
                }
            }
            at = q;
            n = word(&q, stop, w, sizeof(w));
            if (n > 0u && !(n == 1u && w[0] == '\r')) {
                *line = number;
                *column = (uint32_t)(at - p) + 2u;
                (void)snprintf(msg, msg_cap, "unexpected '%s' after the fault", w);
                return false;
            }
            /* the line becomes a comment: the parser sees the other lines at their numbers */
            p[0] = '#';
            for (k = p + 1; k < stop; k++) {
                if (*k != '\r') {
                    *k = ' ';
                }
            }
            g_cue_count++;
        } else if (n > 0u && w[0] != '\r' && strcmp(w, "seed") != 0) {
            steps++;
        }
        p = eol != 0 ? eol + 1 : end;
    }
    return true;
}

void ccsim_faults_scenario_at(uint32_t step, bool finished, uint64_t now_us)
{
    while (g_cue_next < g_cue_count && (finished || step >= g_cues[g_cue_next].step)) {
        const cue_t *c = &g_cues[g_cue_next++];
        if (!g_active) {
            ccsim_fault_spec_t none;
            ccsim_fault_spec_init(&none);
            ccsim_faults_enable(&none, g_seed);
        }
        if (c->action == CCSIM_FAULT_RESET) {
            g_pending |= CCSIM_FAULT_RESET;
        } else if (c->action == CCSIM_FAULT_UNPLUG) {
            g_pending |= CCSIM_FAULT_UNPLUG;
            g_pending_unplug_us = c->unplug_us;
        } else {
            ccsim_fault_spec_t *s = c->for_us != 0u ? &g_spec : &g_base;
            const ccsim_fault_spec_t *n = &c->spec;
            ccsim_fault_spec_t def;
            ccsim_fault_spec_init(&def);
            if (c->for_us == 0u) {
                g_spec = g_base;
            }
            /* the line's items replace the ones in effect */
            if (n->corrupt != def.corrupt) s->corrupt = n->corrupt;
            if (n->drop != def.drop) s->drop = n->drop;
            if (n->drop_frame != def.drop_frame) s->drop_frame = n->drop_frame;
            if (n->dup != def.dup) s->dup = n->dup;
            if (n->reorder != def.reorder) s->reorder = n->reorder;
            if (n->garbage != def.garbage) {
                s->garbage = n->garbage;
                s->garbage_max = n->garbage_max;
            }
            if (n->stall != def.stall) {
                s->stall = n->stall;
                s->stall_us = n->stall_us;
            }
            if (n->baud != def.baud) s->baud = n->baud;
            if (c->for_us != 0u) {
                g_overlay_until = now_us + c->for_us;
            } else {
                g_spec = g_base;
                g_overlay_until = 0;
            }
            log_event(now_us, c->for_us != 0u ? "scenario faults begin (for a while)" : "scenario faults begin");
        }
    }
}

/* ------------------------------------------------------------------ report */

void ccsim_faults_report(void)
{
    int d;
    if (!g_active) {
        return;
    }
    for (d = 0; d < 2; d++) {
        const counts_t *c = &g_inj[d].counts;
        fprintf(stderr,
                "camctl-sim: faults %s: %llu bytes in %llu frames; corrupted %llu, dropped %llu bytes + %llu frames, "
                "duplicated %llu, reordered %llu, garbage %llu bursts (%llu bytes), stalls %llu, baud-damaged %llu\n",
                dir_name[d], c->bytes, c->frames, c->corrupted, c->dropped_bytes, c->dropped_frames, c->duplicated,
                c->reordered, c->garbage_bursts, c->garbage_bytes, c->stalls, c->baud_damaged);
    }
    fprintf(stderr, "camctl-sim: faults: resets %llu, unplugs %llu\n", g_resets, g_unplugs);
}
