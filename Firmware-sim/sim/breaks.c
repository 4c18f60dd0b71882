/*
 * camctl-sim's rule breakers (--break RULE) and host checker (--strict).
 * See breaks.h and docs/CONFORMANCE.md.
 */
#include "breaks.h"

#include <stdio.h>
#include <string.h>

#include "cc_cobs.h"
#include "cc_config.h"
#include "cc_crc16.h"
#include "cc_rawdelta.h"
#include "cc_wire.h"

#define FRAME_CAP 2048u
#define WIRE_CAP (FRAME_CAP + FRAME_CAP / 254u + 4u)

enum {
    T_REQUEST = 1, T_RESPONSE = 2, T_STREAM_MESSAGE = 3, T_STREAM_END = 4, T_CANCEL = 5,
    T_ERROR = 6, T_ACK = 7, T_HEARTBEAT = 8
};
enum { F_RELIABLE = 0x10 };
enum {
    S_INVALID_ARGUMENT = 3, S_RESOURCE_EXHAUSTED = 8, S_FAILED_PRECONDITION = 9,
    S_ALREADY_EXISTS = 6, S_CANCELLED = 1, S_UNIMPLEMENTED = 12, S_INTERNAL = 13, S_UNKNOWN = 2, S_NOT_FOUND = 5
};

const ccsim_break_t ccsim_breaks[] = {
    {"handshake-major", "the HandshakeResponse announces device major 2", "handshake"},
    {"refuse-newer-minor", "a host of a newer minor is refused with FAILED_PRECONDITION", "version-newer-minor stream-confirmed raw-samples-delta"},
    {"accept-other-major", "a host of another major is accepted", "version-other-major empty-handshake-refused"},
    {"whole-frame-liveness", "only a whole frame keeps the link alive (a frame still arriving does not)", "frame-arriving-keeps-link"},
    {"same-session-id", "every session has session_id 1", "rehandshake-new-session"},
    {"no-heartbeat", "the device sends no HEARTBEAT", "heartbeat-period link-death call-before-handshake unknown-method-before-handshake"},
    {"slow-heartbeat", "a HEARTBEAT at twice the period (every other one missing)", "heartbeat-period"},
    {"no-link-death", "the session survives host silence", "link-death call-before-handshake unknown-method-before-handshake"},
    {"serve-before-handshake", "calls without a session are served", "call-before-handshake unknown-method-before-handshake link-death"},
    {"no-resync", "the first request after an undecodable frame is lost",
     "resync-after-garbage bad-check-counted truncated-frame-counted bad-cobs-counted empty-frame-ignored counter-precedence "
     "call-id-six-bytes long-garbage-then-request frames-received"},
    {"check-miscounted", "a frame with a wrong check is counted as a framing error", "bad-check-counted"},
    {"short-miscounted", "a frame too short for its envelope is counted as a check error",
     "truncated-frame-counted counter-precedence"},
    {"bad-cobs-dropped", "a frame of bad COBS is dropped without counting", "bad-cobs-counted"},
    {"unknown-type-silent", "an unknown packet type is not answered", "unknown-type"},
    {"unknown-type-ends-live-call", "an unknown packet type on a live call's id is answered ERROR UNIMPLEMENTED (as 1.1)",
     "unknown-type-live-call"},
    {"gap-miscount", "a sequence gap of d counts d lost packets, not d - 1", "sequence-gaps-counted"},
    {"skip-sequence", "the device skips a sequence number", "device-sequence-numbers"},
    {"no-ack", "reliable packets are not acknowledged", "acks-reliable-requests duplicates-dropped-in-window"},
    {"time-goes-back", "device_time_us of every other Ping response goes back 1 s", "timestamps-monotonic"},
    {"max-frame-off-by-one", "a frame of exactly max_frame_bytes is dropped", "large-unary-max-frame"},
    {"over-max-not-counted", "a frame over max_frame_bytes is not counted", "over-max-refused"},
    {"cobs-254-strict", "a trailing 0x01 after a full 254-byte COBS block is refused", "cobs-254-run"},
    {"stream-out-of-order", "raw sample batches are swapped in pairs", "server-stream-in-order"},
    {"ignore-cancel", "CANCEL is ignored",
     "cancel-after-begin cancel-after-first-response deadline-slow-call concurrency-limit reused-call-id"},
    {"wrong-status-invalid-argument", "INVALID_ARGUMENT is sent as UNKNOWN",
     "status-propagation samples-per-batch-refused settings-invalid"},
    {"unknown-method-status", "an unknown method of a known service gets INTERNAL", "unimplemented-method"},
    {"unknown-service-status", "an unknown service gets NOT_FOUND", "unimplemented-service"},
    {"ignore-concurrency-limit", "a call over the limit is not refused", "concurrency-limit limit-before-method"},
    {"reset-counters-zero", "ResetCounters answers with zeros, not the counters before the reset", "reset-counters"},
    {"no-retransmit", "reliable packets are never retransmitted", "retransmit-schedule reliable-given-up"},
    {"dup-reliable-event", "each remote click is sent twice, under two sequence numbers",
     "reliable-events-acked input-remote-click input-event-order several-event-streams"},
    {"wrong-button-source", "volume-down events carry source VOLUME_UP", "input-buttons"},
    {"unreliable-press", "press events are sent best-effort",
     "input-full-click input-light-press input-click-and-hold"},
    {"drop-under-burst", "a small frame at the end of a burst (a read of 512 bytes or more, 8 frames or more) is lost",
     "pipelined-burst"},
    {"empty-ping-echo", "the echo of an empty Ping is one byte", "empty-unary"},
    {"lax-call-ids", "a REQUEST on call id 0, on a call id of 6 bytes or on one of 2^32 or more is served",
     "call-id-zero-request call-id-six-bytes call-id-too-large"},
    {"non-minimal-refused", "a REQUEST whose call id varint is not minimal is dropped", "non-minimal-varint"},
    {"serve-device-bound", "a RESPONSE, STREAM_MESSAGE, STREAM_END or ERROR from the host is served as a Ping",
     "device-bound-types-dropped"},
    {"answer-empty-ack", "an ACK without its payload is answered with ERROR UNIMPLEMENTED", "ack-without-payload"},
    {"heartbeat-payload-dropped", "a HEARTBEAT with a payload is dropped (it does not keep the link alive)",
     "heartbeat-with-payload"},
    {"refused-handshake-ends-session", "a refused handshake ends the old session (nothing but a handshake is served)",
     "refused-handshake-keeps-session"},
    {"config-reset-on-handshake", "a handshake puts the configuration back to the defaults",
     "config-survives-rehandshake settings-get-set"},
    {"settings-switches-ignored", "SetSettings ignores camera_control and camera_adjustments",
     "settings-get-set settings-camera-control-off"},
    {"silent-rehandshake", "a new handshake ends the old session's calls silently (no ERROR CANCELLED)",
     "rehandshake-cancels-calls"},
    {"unprotected-still-reliable", "a packet sent with every reliable slot taken still carries RELIABLE",
     "unprotected-not-reliable"},
    {"slide-reversed", "SLIDE positions are reversed (0 at the top of the strip)", "input-slide"},
    {"no-stream-after-cancel", "after a cancelled raw-sample stream, StreamRawSamples is UNIMPLEMENTED until the next handshake",
     "calls-after-cancelled-stream"},
    {"handshake-counts-toward-limit", "a Handshake with max_concurrent_calls calls live is dropped",
     "handshake-exempt-from-limit"},
    {"reused-id-refused", "a REQUEST on a live call id gets ERROR ALREADY_EXISTS (the v1.0 rule)", "duplicate-request-ignored"},
    {"responses-best-effort", "RESPONSE and ERROR are sent best-effort (the filter ACKs them for the host)",
     "responses-reliable link-packets-lenient reset-counters frames-received"},
    {"batch-interval-doubled", "RawSampleBatch.sample_interval_us is twice the sampling period",
     "raw-batch-timing raw-samples-delta raw-button-levels"},
    {"first-event-stream-only", "with two StreamInputEvents calls open only the older one gets events",
     "several-event-streams"},
    {"method-before-limit", "at the call limit an unknown InputService method gets UNIMPLEMENTED, not RESOURCE_EXHAUSTED",
     "limit-before-method"},
    {"cancelled-by-host-only", "cancelled_calls counts only calls the host cancelled, not those a new handshake ended",
     "cancelled-calls-counted"},
    {"frames-received-counts-bad", "frames_received also counts frames whose check failed", "frames-received"},
    {"strict-link-packets", "an ACK or HEARTBEAT on a non-zero call id, or an ACK longer than 2 bytes, is dropped",
     "link-packets-lenient"},
    {"raw-delta-v11", "a v1.1 session's raw sample batches come delta-coded (delta_samples, not samples)", "raw-samples-delta"},
    {"raw-delta-drift", "each delta-coded force step after a batch's first sample is one zigzag step off", "raw-samples-delta"},
    {"raw-buttons-missing", "raw sample batches never carry the buttons' levels (RawSampleBatch.button_levels)",
     "raw-button-levels"},
    {"reliable-count-off-by-one",
     "a reliable event's reliable_event_number counts only the reliable events before it (1.1's example misread)",
     "reliable-event-number"},
    {"new-session-error-reliable", "the new-session ERROR CANCELLED carries RELIABLE (the v1.1 rule)",
     "rehandshake-cancels-calls"},
    {"dedupe-reliable-in-window", "only a reliable packet inside the 64-entry window is dropped as a duplicate (the v1.0 rule)",
     "duplicate-best-effort-dropped duplicates-dropped-outside-window"},
    {"ack-taken-late", "the first three ACKs of each reliable stream message are ignored (the device sends it three times more)",
     "reliable-events-acked"},
    {"heartbeats-behind-frames",
     "a HEARTBEAT is queued for every interval a frame takes on the line, counted from its queueing (the v1.1 reading)",
     "heartbeat-after-long-frame"},
    {"force-range-halved",
     "Capabilities.force_max_mn announces half the force range Configure checks (a full press above it is accepted)",
     "status-propagation"},
    {"haptic-intensity-clamped", "a PlayHaptic's intensity_percent above 100 is played at 100, not refused",
     "status-propagation"},
    {"buttons-unlisted", "Capabilities.buttons lists no input source (the buttons and the remote send events all the same)",
     "input-buttons input-remote-click"},
    {"handshake-over-size", "the HandshakeResponse is padded (an unknown field) to one byte over max_frame_bytes", "handshake"},
    {"link-packets-on-call", "the device's ACKs and HEARTBEATs carry call id 2147483632, not 0",
     "heartbeat-period acks-reliable-requests"},
    {"confirm-stream-v10",
     "in a 1.0 session a raw-sample stream's first message is followed by an empty RESPONSE on its call (the v1.1 confirmation)",
     "server-stream-in-order cancel-after-first-response"},
    {"non-minimal-call-ids", "the call id of every RESPONSE is written one varint byte longer than it needs (81 00 for 1)",
     "non-minimal-varint"},
    {"cobs-trailing-01", "a frame whose last COBS block is a full 254-byte run gets a trailing 0x01 code byte", "cobs-254-run"},
    {"heartbeat-undelimited", "no HEARTBEAT starts with an extra delimiter (the device's lone 0x00 bytes are dropped)",
     "heartbeat-delimited"},
    {"window-lost-on-death",
     "link death forgets the receive window: a copy of a request of the dead session is taken for a new one",
     "call-before-handshake"},
    {0, 0, 0},
};

unsigned ccsim_break_baud(const char *name)
{
    /* its case skips on a line where a largest frame leaves within 12 heartbeat intervals */
    return strcmp(name, "heartbeats-behind-frames") == 0 ? 9600u : 0u;
}

static int g_break = -1;
static bool g_strict;

bool ccsim_breaks_select(const char *name)
{
    int i;
    for (i = 0; ccsim_breaks[i].name != 0; i++) {
        if (strcmp(ccsim_breaks[i].name, name) == 0) {
            g_break = i;
            return true;
        }
    }
    return false;
}

void ccsim_strict_enable(void) { g_strict = true; }

bool ccsim_filter_active(void) { return g_break >= 0 || g_strict; }

static bool brk(const char *name)
{
    return g_break >= 0 && strcmp(ccsim_breaks[g_break].name, name) == 0;
}

/* ack-taken-late: the sequence numbers of the device's reliable stream messages this session, each with
 * how many of its ACKs were dropped (the first LATE_ACK_DROPS: its copies come 20, 60 and 140 ms after it) */
#define LATE_ACKS 32u
#define LATE_ACK_DROPS 3u
static struct {
    uint16_t seq;
    bool used;
    unsigned dropped;
} g_late_acks[LATE_ACKS];
static unsigned g_late_ack_next;

static void late_ack_note(uint16_t seq)
{
    unsigned k;
    for (k = 0; k < LATE_ACKS; k++) {
        if (g_late_acks[k].used && g_late_acks[k].seq == seq) {
            return; /* a copy */
        }
    }
    g_late_acks[g_late_ack_next].seq = seq;
    g_late_acks[g_late_ack_next].used = true;
    g_late_acks[g_late_ack_next].dropped = 0u;
    g_late_ack_next = (g_late_ack_next + 1u) % LATE_ACKS;
}

/* True for the first LATE_ACK_DROPS ACKs of a noted stream message (then dropped). */
static bool late_ack_drop(uint16_t acked)
{
    unsigned k;
    for (k = 0; k < LATE_ACKS; k++) {
        if (g_late_acks[k].used && g_late_acks[k].seq == acked && g_late_acks[k].dropped < LATE_ACK_DROPS) {
            g_late_acks[k].dropped++;
            return true;
        }
    }
    return false;
}

/* ---- frames ---- */

typedef struct {
    uint8_t type, flags;
    uint16_t seq;
    uint32_t call;
    uint8_t extra[2];
    size_t extra_len;
    uint8_t payload[FRAME_CAP];
    size_t payload_len;
} pkt_t;

typedef enum { FRAME_OK, FRAME_BAD_COBS, FRAME_SHORT, FRAME_BAD_CHECK, FRAME_BAD_ENVELOPE } frame_kind_t;

static frame_kind_t parse(const uint8_t *stuffed, size_t len, pkt_t *p, size_t *unstuffed_len)
{
    static uint8_t buf[FRAME_CAP];
    size_t n = 0, i = 3, shift = 0, body;
    uint16_t check;
    *unstuffed_len = 0;
    if (cc_cobs_decode(stuffed, len, buf, sizeof(buf), &n) != 0) {
        return FRAME_BAD_COBS;
    }
    *unstuffed_len = n;
    if (n < 6u) {
        return FRAME_SHORT;
    }
    body = n - 2u;
    check = (uint16_t)(buf[body] | (buf[body + 1u] << 8));
    if (cc_crc16(buf, body) != check) {
        return FRAME_BAD_CHECK;
    }
    p->type = buf[0] & 0x0Fu;
    p->flags = buf[0] & 0xF0u;
    p->seq = (uint16_t)(buf[1] | (buf[2] << 8));
    p->call = 0;
    for (;;) {
        if (i >= body || shift > 28u) {
            return FRAME_BAD_ENVELOPE;
        }
        p->call |= (uint32_t)(buf[i] & 0x7Fu) << shift;
        shift += 7u;
        if ((buf[i++] & 0x80u) == 0u) {
            break;
        }
    }
    p->extra_len = p->type == T_REQUEST ? 2u : (p->type == T_STREAM_END || p->type == T_ERROR) ? 1u : 0u;
    if (i + p->extra_len > body) {
        return FRAME_BAD_ENVELOPE;
    }
    memcpy(p->extra, buf + i, p->extra_len);
    i += p->extra_len;
    p->payload_len = body - i;
    memcpy(p->payload, buf + i, p->payload_len);
    return FRAME_OK;
}

/* Appends COBS(body ‖ CRC) 0x00 of `p` to out; returns the new length. */
static size_t emit(const pkt_t *p, uint8_t *out, size_t len, size_t cap)
{
    static uint8_t body[FRAME_CAP + 16u];
    size_t n = 0, w;
    uint32_t v = p->call;
    uint16_t check;
    body[n++] = (uint8_t)(p->type | p->flags);
    body[n++] = (uint8_t)(p->seq & 0xFFu);
    body[n++] = (uint8_t)(p->seq >> 8);
    do {
        body[n++] = (uint8_t)((v & 0x7Fu) | (v > 0x7Fu ? 0x80u : 0u));
        v >>= 7;
    } while (v != 0u);
    if (brk("non-minimal-call-ids") && p->type == T_RESPONSE && p->call < (1u << 28)) {
        body[n - 1u] |= 0x80u; /* one byte more than the value needs: 81 00 for 1 */
        body[n++] = 0x00u;
    }
    memcpy(body + n, p->extra, p->extra_len);
    n += p->extra_len;
    memcpy(body + n, p->payload, p->payload_len);
    n += p->payload_len;
    check = cc_crc16(body, n);
    body[n++] = (uint8_t)(check & 0xFFu);
    body[n++] = (uint8_t)(check >> 8);
    if (len + n + n / 254u + 3u > cap) {
        return len;
    }
    w = cc_cobs_encode(body, n, out + len, cap - len);
    if (w == 0u) {
        return len;
    }
    out[len + w] = 0;
    return len + w + 1u;
}

static size_t emit_raw(const uint8_t *bytes, size_t n, uint8_t *out, size_t len, size_t cap)
{
    if (len + n > cap) {
        n = cap - len;
    }
    memcpy(out + len, bytes, n);
    return len + n;
}

/* ---- protobuf: top-level varint fields ---- */

static bool pb_varint(const uint8_t *b, size_t len, size_t *i, uint64_t *v)
{
    unsigned shift = 0;
    *v = 0;
    while (*i < len && shift < 64u) {
        uint8_t c = b[(*i)++];
        *v |= (uint64_t)(c & 0x7Fu) << shift;
        if ((c & 0x80u) == 0u) {
            return true;
        }
        shift += 7u;
    }
    return false;
}

static size_t pb_put_varint(uint8_t *out, uint64_t v)
{
    size_t n = 0;
    do {
        out[n++] = (uint8_t)((v & 0x7Fu) | (v > 0x7Fu ? 0x80u : 0u));
        v >>= 7;
    } while (v != 0u);
    return n;
}

/* Finds field `field`: its value (varint) or its bytes (length-delimited). */
static bool pb_find(const uint8_t *b, size_t len, uint32_t field, uint64_t *value, size_t *at, size_t *n)
{
    size_t i = 0;
    while (i < len) {
        uint64_t key, v;
        size_t start;
        if (!pb_varint(b, len, &i, &key)) {
            return false;
        }
        start = i;
        if ((key & 7u) == 0u) {
            if (!pb_varint(b, len, &i, &v)) {
                return false;
            }
        } else if ((key & 7u) == 2u) {
            if (!pb_varint(b, len, &i, &v) || v > len - i) {
                return false;
            }
            start = i;
            i += (size_t)v;
        } else {
            return false;
        }
        if ((uint32_t)(key >> 3) == field) {
            *value = v;
            *at = start;
            *n = i - start;
            return true;
        }
    }
    return false;
}

/* Replaces (or adds) varint field `field` of the message in p's payload. */
static void pb_set(uint8_t *msg, size_t *len, size_t cap, uint32_t field, uint64_t value)
{
    static uint8_t tmp[FRAME_CAP];
    size_t i = 0, n = 0;
    bool done = false;
    while (i < *len) {
        size_t start = i;
        uint64_t key, v;
        if (!pb_varint(msg, *len, &i, &key)) {
            return;
        }
        if ((key & 7u) == 0u) {
            if (!pb_varint(msg, *len, &i, &v)) {
                return;
            }
        } else if ((key & 7u) == 2u) {
            if (!pb_varint(msg, *len, &i, &v) || v > *len - i) {
                return;
            }
            i += (size_t)v;
        } else {
            return;
        }
        if ((uint32_t)(key >> 3) == field && (key & 7u) == 0u) {
            n += pb_put_varint(tmp + n, (uint64_t)field << 3);
            n += pb_put_varint(tmp + n, value);
            done = true;
        } else {
            memcpy(tmp + n, msg + start, i - start);
            n += i - start;
        }
    }
    if (!done) {
        n += pb_put_varint(tmp + n, (uint64_t)field << 3);
        n += pb_put_varint(tmp + n, value);
    }
    if (n <= cap) {
        memcpy(msg, tmp, n);
        *len = n;
    }
}

static uint64_t pb_get(const uint8_t *b, size_t len, uint32_t field)
{
    uint64_t v = 0;
    size_t at, n;
    return pb_find(b, len, field, &v, &at, &n) ? v : 0u;
}

/* Rewrites the message: repeated varint field `field` (packed or not) without the entries equal to `value`
 * (every entry when `all`), and length-delimited field `put` (when non-zero) replaced by `bytes` (added when
 * missing). False when the message does not parse or the result does not fit. */
static bool pb_rewrite(uint8_t *msg, size_t *len, size_t cap, uint32_t field, uint64_t value, bool all, uint32_t put,
                       const uint8_t *bytes, size_t bytes_len)
{
    static uint8_t tmp[FRAME_CAP];
    size_t i = 0, n = 0;
    bool put_done = put == 0u;
    while (i < *len) {
        size_t start = i, body;
        uint64_t key, v;
        uint32_t number;
        if (!pb_varint(msg, *len, &i, &key)) {
            return false;
        }
        number = (uint32_t)(key >> 3);
        if ((key & 7u) == 0u) {
            if (!pb_varint(msg, *len, &i, &v)) {
                return false;
            }
            if (number == field && (all || v == value)) {
                continue;
            }
        } else if ((key & 7u) == 2u) {
            if (!pb_varint(msg, *len, &i, &v) || v > *len - i) {
                return false;
            }
            body = i;
            i += (size_t)v;
            if (number == put) {
                if (!put_done && n + 16u + bytes_len <= sizeof(tmp)) {
                    n += pb_put_varint(tmp + n, key);
                    n += pb_put_varint(tmp + n, bytes_len);
                    memcpy(tmp + n, bytes, bytes_len);
                    n += bytes_len;
                }
                put_done = true;
                continue;
            }
            if (number == field) {
                uint8_t packed[256];
                size_t k = body, m = 0;
                while (k < i) {
                    uint64_t e;
                    if (!pb_varint(msg, i, &k, &e)) {
                        return false;
                    }
                    if (!all && e != value && m + 10u <= sizeof(packed)) {
                        m += pb_put_varint(packed + m, e);
                    }
                }
                if (m > 0u) {
                    n += pb_put_varint(tmp + n, key);
                    n += pb_put_varint(tmp + n, m);
                    memcpy(tmp + n, packed, m);
                    n += m;
                }
                continue;
            }
        } else {
            return false;
        }
        if (n + (i - start) > sizeof(tmp)) {
            return false;
        }
        memcpy(tmp + n, msg + start, i - start);
        n += i - start;
    }
    if (!put_done && n + 16u + bytes_len <= sizeof(tmp)) {
        n += pb_put_varint(tmp + n, ((uint64_t)put << 3) | 2u);
        n += pb_put_varint(tmp + n, bytes_len);
        memcpy(tmp + n, bytes, bytes_len);
        n += bytes_len;
    }
    if (n > cap) {
        return false;
    }
    memcpy(msg, tmp, n);
    *len = n;
    return true;
}

/* ---- what the filter remembers ---- */

#define CALLS 64u
typedef struct {
    uint32_t call;
    uint8_t service, method;
    uint16_t payload_len;
    uint32_t host_major, host_minor;
    uint32_t alias_of; /* reused-id-refused, unknown-type-ends-live-call: the live call id this stand-in call answers for */
    bool alias_keeps_status; /* unknown-type-ends-live-call: its ERROR keeps the device's status (UNIMPLEMENTED) */
    bool unknown_type;
    bool live;
    bool confirmed; /* confirm-stream-v10: its empty RESPONSE was sent */
} call_t;

static call_t g_calls[CALLS];
static uint64_t g_session_ended; /* cancelled-by-host-only: calls ended by a new handshake */
static uint64_t g_bad_checks; /* frames-received-counts-bad: bad-check frames since the last ResetCounters */
static unsigned g_call_next;

static call_t *call_find(uint32_t id)
{
    unsigned i;
    for (i = 0; i < CALLS; i++) {
        if (g_calls[i].call == id && id != 0u) {
            return &g_calls[i];
        }
    }
    return 0;
}

static call_t *call_add(uint32_t id)
{
    call_t *c = call_find(id);
    if (c == 0) {
        c = &g_calls[g_call_next++ % CALLS];
    }
    memset(c, 0, sizeof(*c));
    c->call = id;
    return c;
}

static bool is_handshake(const call_t *c) { return c != 0 && c->service == 1u && c->method == 1u; }

/* host side */
static bool g_after_bad_frame;
static uint16_t g_host_last;
static uint64_t g_last_host_us;
/* device side */
static unsigned g_heartbeats;
static unsigned g_pings;
static unsigned g_device_packets;
static uint16_t g_seq_offset;
static uint16_t g_sent_reliable[64];
static unsigned g_sent_reliable_count;
static bool g_held;
static pkt_t g_held_pkt;
static unsigned g_batches;
static uint32_t g_session_minor; /* raw-delta-*: the negotiated minor of the session */
/* breakers of the second round (see the table) */
static bool g_refused;          /* refused-handshake-ends-session: a handshake was refused */
static bool g_raw_cancelled;    /* no-stream-after-cancel: a raw-sample stream was cancelled */
static bool g_config_fake;      /* config-reset-on-handshake: answer GetConfig with the defaults */
static uint8_t g_config_default[256];
static size_t g_config_default_len;
static bool g_config_default_seen;
static unsigned g_alias_next;

/* Host renumbering (responses-best-effort, dedupe-reliable-in-window, gap-miscount): the filter gives the
 * device host packets of its own (ACKs) or a repeated packet under a fresh number, or widens a gap the host
 * left by one, so the host's later packets are shifted by as many numbers; the device's ACKs are mapped
 * back. Reset by every handshake. */
typedef struct {
    bool used, injected;
    uint16_t core, host;
} seqmap_t;
typedef struct {
    bool used;
    uint16_t seq, check;
    uint32_t call;
    uint8_t service, method;
} host_request_t;
static bool g_hseen;
static uint16_t g_hshift, g_fwd_top, g_host_top;
static seqmap_t g_seqmap[128];
static unsigned g_seqmap_next;
static host_request_t g_hreq[128];
static unsigned g_hreq_next;
static uint16_t g_ack_queue[32];
static unsigned g_ack_queued;

static bool renumbering(void)
{
    return brk("responses-best-effort") || brk("dedupe-reliable-in-window") || brk("gap-miscount")
           || brk("window-lost-on-death");
}

static bool g_in_session; /* window-lost-on-death: the device had a session when the host frame came */

static void seqmap_add(uint16_t core, uint16_t host, bool injected)
{
    seqmap_t *m = &g_seqmap[g_seqmap_next++ % 128u];
    m->used = true;
    m->injected = injected;
    m->core = core;
    m->host = host;
}

/* The next number the device has not seen, for a packet of the filter's own. */
static uint16_t host_number_inject(void)
{
    g_fwd_top = (uint16_t)(g_fwd_top + 1u);
    g_hshift = (uint16_t)(g_hshift + 1u);
    seqmap_add(g_fwd_top, 0, true);
    return g_fwd_top;
}

/* Renumbers host packet p for the device; true when its number changed. */
static bool host_renumber(pkt_t *p)
{
    bool handshake = p->type == T_REQUEST && p->extra[0] == 1u && p->extra[1] == 1u;
    bool fresh = false;
    uint16_t check = cc_crc16(p->payload, p->payload_len);
    unsigned i;
    if (handshake || !g_hseen) {
        g_hseen = true;
        g_hshift = 0;
        g_fwd_top = g_host_top = p->seq;
        memset(g_seqmap, 0, sizeof(g_seqmap));
        memset(g_hreq, 0, sizeof(g_hreq));
        return false;
    }
    if ((brk("dedupe-reliable-in-window") || (brk("window-lost-on-death") && !g_in_session)) && p->type == T_REQUEST) {
        for (i = 0; i < 128u; i++) {
            const host_request_t *r = &g_hreq[i];
            if (r->used && r->seq == p->seq && r->call == p->call && r->check == check && r->service == p->extra[0]
                && r->method == p->extra[1]) {
                /* a repeat: the v1.0 rule drops only a reliable one inside the window; a device that forgot its
                 * window at link death drops none until the next handshake */
                fresh = brk("window-lost-on-death") || (p->flags & F_RELIABLE) == 0u
                        || (uint16_t)(g_host_top - p->seq) >= 64u;
            }
        }
    }
    if (p->type == T_REQUEST && !fresh) {
        host_request_t *r = &g_hreq[g_hreq_next++ % 128u];
        r->used = true;
        r->seq = p->seq;
        r->call = p->call;
        r->check = check;
        r->service = p->extra[0];
        r->method = p->extra[1];
    }
    if (fresh) {
        uint16_t host = p->seq;
        p->seq = host_number_inject();
        g_seqmap[(g_seqmap_next - 1u) % 128u].injected = false;
        g_seqmap[(g_seqmap_next - 1u) % 128u].host = host;
        return true;
    }
    {
        uint16_t d = (uint16_t)(p->seq - g_host_top);
        if (d == 0u || d >= 0x8000u) {
            /* A number the host used before (a retransmission, a repeat): the device gets the number it got
             * then, whatever the shift is now (or the host's own, when it went before any shift). */
            for (i = 0; i < 128u; i++) {
                const seqmap_t *m = &g_seqmap[(g_seqmap_next - 1u - i) % 128u];
                if (m->used && !m->injected && m->host == p->seq) {
                    bool changed = m->core != p->seq;
                    p->seq = m->core;
                    return changed;
                }
            }
            return false;
        }
        if (brk("gap-miscount") && d > 1u) {
            /* A gap of d from the host reaches the device as d + 1: it counts d lost packets instead of
             * d - 1, as a device that miscounts would; the host's later packets follow on, one further. */
            g_hshift = (uint16_t)(g_hshift + 1u);
        }
        g_host_top = p->seq;
    }
    if (g_hshift == 0u) {
        if ((uint16_t)(p->seq - g_fwd_top) < 0x8000u) {
            g_fwd_top = p->seq;
        }
        return false;
    }
    {
        uint16_t host = p->seq;
        p->seq = (uint16_t)(p->seq + g_hshift);
        if ((uint16_t)(p->seq - g_fwd_top) < 0x8000u) {
            g_fwd_top = p->seq;
        }
        seqmap_add(p->seq, host, false);
    }
    return true;
}

/* The host's number for the device's ACK of `core`; false when the ACK is of a packet of the filter's own. */
static bool host_number_of(uint16_t core, uint16_t *host)
{
    unsigned k;
    for (k = 0; k < 128u; k++) {
        const seqmap_t *m = &g_seqmap[(g_seqmap_next - 1u - k) % 128u];
        if (m->used && m->core == core) {
            *host = m->host;
            return !m->injected;
        }
    }
    *host = core;
    return true;
}

/* The unstuffed frame of `wire` (without its delimiter) when its check is good; 0 otherwise. */
static size_t unstuff_checked(const uint8_t *wire, size_t len, uint8_t *buf, size_t cap)
{
    size_t n = 0;
    if (cc_cobs_decode(wire, len, buf, cap, &n) != 0 || n < 6u) {
        return 0;
    }
    return cc_crc16(buf, n - 2u) == (uint16_t)(buf[n - 2u] | (buf[n - 1u] << 8)) ? n : 0u;
}

/* lax-call-ids, non-minimal-refused: looks at a REQUEST's call id varint as sent. Returns (size_t)-1 to
 * go on, or the new output length. */
static size_t in_call_id(const uint8_t *wire, size_t wire_len, uint8_t *out, size_t len, size_t cap)
{
    static uint8_t raw[FRAME_CAP];
    static pkt_t q;
    size_t n = unstuff_checked(wire, wire_len - 1u, raw, sizeof(raw));
    size_t i = 3u, vlen = 0;
    uint64_t v = 0;
    if (n == 0u || (raw[0] & 0x0Fu) != T_REQUEST) {
        return (size_t)-1;
    }
    while (i < n - 2u && vlen < 10u) {
        v |= (uint64_t)(raw[i] & 0x7Fu) << (7u * vlen);
        vlen++;
        if ((raw[i++] & 0x80u) == 0u) {
            break;
        }
    }
    if (brk("non-minimal-refused") && vlen > 1u && vlen <= 5u && raw[i - 1u] == 0u) {
        return len;
    }
    if (brk("lax-call-ids") && (v == 0u || vlen > 5u || v > 0xFFFFFFFFu) && i + 2u <= n - 2u) {
        q.type = T_REQUEST;
        q.flags = (uint8_t)(raw[0] & 0xF0u);
        q.seq = (uint16_t)(raw[1] | (raw[2] << 8));
        q.call = 0x0FFFFF00u | (uint32_t)(v & 0xFFu);
        q.extra[0] = raw[i];
        q.extra[1] = raw[i + 1u];
        q.extra_len = 2;
        q.payload_len = n - 2u - (i + 2u);
        memcpy(q.payload, raw + i + 2u, q.payload_len);
        return emit(&q, out, len, cap);
    }
    return (size_t)-1;
}

/* ---- --strict: the host checker ---- */

enum { V_UNACKED, V_HEARTBEAT, V_REUSED, V_TOO_LARGE, V_BEFORE_HANDSHAKE, V_COUNT };
static const char *const v_names[V_COUNT] = {
    "reliable packet never acknowledged (200 ms)", "heartbeats missing (host back after > 2.5 x heartbeat interval of silence a second time in a session, or after the 4-interval dead timeout)",
    "call id reused while live", "frame over the announced max_frame_bytes", "request before the handshake"};
static unsigned v_count[V_COUNT];
static uint8_t v_first[V_COUNT][64];
static size_t v_first_len[V_COUNT];

static void violation(int v, const uint8_t *bytes, size_t n)
{
    size_t i;
    if (v_count[v]++ == 0u) {
        v_first_len[v] = n < sizeof(v_first[v]) ? n : sizeof(v_first[v]);
        memcpy(v_first[v], bytes, v_first_len[v]);
        fprintf(stderr, "camctl-sim: strict: %s; first offending bytes:", v_names[v]);
        for (i = 0; i < v_first_len[v]; i++) {
            fprintf(stderr, " %02x", v_first[v][i]);
        }
        fprintf(stderr, "%s\n", n > v_first_len[v] ? " ..." : "");
    }
}

typedef struct {
    bool used, reported;
    bool overdue;          /* its 200 ms ran out: judged once the line delivered what the host wrote by then */
    uint16_t seq;
    uint64_t sent_us;
    uint64_t watermark;    /* host bytes written when its 200 ms ran out */
    uint8_t wire[64];
    size_t wire_len;
    uint32_t whole; /* the whole frame's hash: a retransmission is the same frame */
    size_t whole_len;
} pending_t;
static pending_t g_pending[32];
/* The reliable packets acknowledged most recently (sequence and whole frame). The device sends a packet
 * again until the host's ACK reaches it; an ACK the host wrote is still on the line (its wire time, or a
 * loaded machine's delay) while the device retransmits, and a host that closes the port after that ACK,
 * as it may, never sees the copy. A copy of an acknowledged packet is owed nothing more. Matched by the
 * whole frame, not by the sequence alone: a new session numbers its packets from the start again. */
typedef struct {
    bool used;
    uint16_t seq;
    uint32_t whole;
    size_t whole_len;
} acked_t;
static acked_t g_acked[8];
static unsigned g_acked_next;
/* The host's requests seen most recently, matched the same way: a host sends a reliable packet again with
 * the same number until the device's ACK reaches it (§6), and on a slow line that ACK waits behind the
 * device's frames already on the line (a 330-byte HandshakeResponse takes 344 ms at 9600 baud). A copy is
 * the packet it copies (the device drops it as a duplicate, §6): its call was checked when the first copy
 * came, and is not "reused". */
static acked_t g_host_reliable[16];
/* The host's handshake awaiting its answer, and when it came: until the answer, a host sends nothing
 * numbered after it but its copies (PROTOCOL.md §9, v1.2), so it owes no ACK for what reaches it meanwhile
 * (the old session's packets: the device forgets them when it answers). */
static bool g_strict_handshake_waits;
static uint64_t g_strict_handshake_us;
static unsigned g_host_reliable_next;
/* The frame strict_host just saw is such a copy (in_frame then leaves the call table alone). */
static bool g_strict_copy;

/* Forgets the host's requests: a new session (every handshake request) or a new host (the port closed)
 * numbers its packets and calls from the start again, so its frames may equal old ones byte for byte,
 * and are no copies of them. */
static void forget_host_requests(void)
{
    memset(g_host_reliable, 0, sizeof g_host_reliable);
    g_host_reliable_next = 0;
}

/* FNV-1a over a whole frame. */
static uint32_t frame_hash(const uint8_t *wire, size_t n)
{
    uint32_t h = 2166136261u;
    size_t i;
    for (i = 0; i < n; i++) {
        h = (h ^ wire[i]) * 16777619u;
    }
    return h;
}
static uint64_t g_strict_last_us;
static bool g_strict_last_in_session;
/* Silences of the host over 2.5 heartbeat intervals (past the dead timeout too): in this session (the second
 * is a violation, as is one past the dead timeout), and in the run (the report names those not counted). */
static unsigned g_strict_late_in_session;
static unsigned g_strict_late_total;
/* The longest late silence not counted, for the report (how late a loaded machine made the host). */
static uint64_t g_strict_late_longest_us;
/* When the host had this session's HandshakeResponse (its last byte reached the host): a host knows of a
 * session, and owes it heartbeats, from then on, not from its handshake. */
static uint64_t g_strict_heard_us;
/* --baud: the device time at which the line to the host has sent what it holds, and one byte's time, as
 * main.c last told (ccsim_filter_out_line); a device frame reaches the host when its last byte has. */
static uint64_t g_out_line_free_us;
static uint64_t g_out_byte_ns;

/* The host closed the port (ccsim_filter_host_closed): its pending packets are judged at the next tick,
 * when the line's count of the host's bytes includes the last ones it read before the hang-up. */
static bool g_closed_unjudged;
static uint64_t g_closed_us;
/* Closed and not opened again: what the device sends goes to nobody and is owed no ACK. */
static bool g_host_gone;

/* The host let go of the port (closed, or unplugged): its requests are forgotten, and the silence until the
 * next host is no host's: that one starts afresh (a handshake, or a relay going on). */
static void host_let_go(void)
{
    forget_host_requests();
    g_strict_last_in_session = false;
    g_strict_late_in_session = 0u;
}

void ccsim_filter_host_closed(uint64_t now_us)
{
    host_let_go();
    g_closed_unjudged = true;
    g_closed_us = now_us;
    g_host_gone = true;
}

void ccsim_filter_host_opened(void)
{
    g_host_gone = false;
}

void ccsim_filter_unplugged(void)
{
    unsigned i;
    host_let_go();
    for (i = 0; i < sizeof g_pending / sizeof g_pending[0]; i++) {
        g_pending[i].used = false;
    }
    g_closed_unjudged = false;
    g_host_gone = true;
}

void ccsim_filter_out_line(uint64_t line_free_us, uint64_t byte_ns)
{
    g_out_line_free_us = line_free_us;
    g_out_byte_ns = byte_ns;
}

unsigned ccsim_strict_report(void)
{
    unsigned total = 0, v;
    size_t i;
    for (v = 0; v < V_COUNT; v++) {
        total += v_count[v];
    }
    fprintf(stderr, "camctl-sim: strict: %u violation%s\n", total, total == 1u ? "" : "s");
    if (g_strict_late_total > v_count[V_HEARTBEAT]) {
        unsigned once = g_strict_late_total - v_count[V_HEARTBEAT];
        fprintf(stderr, "camctl-sim: strict:   %u late heartbeat%s, not counted: the first silence over 2.5 x heartbeat "
                "interval in its session, within the dead timeout (the longest %lu ms)\n",
                once, once == 1u ? "" : "s", (unsigned long)(g_strict_late_longest_us / 1000u));
    }
    {
        unsigned waiting = 0, overdue = 0;
        for (i = 0; i < 32u; i++) {
            waiting += g_pending[i].used && !g_pending[i].overdue ? 1u : 0u;
            overdue += g_pending[i].used && g_pending[i].overdue ? 1u : 0u;
        }
        if (waiting != 0u) {
            fprintf(stderr, "camctl-sim: strict:   %u reliable packet%s still awaiting the host's ACK, not judged: its 200 ms had not run out\n",
                    waiting, waiting == 1u ? "" : "s");
        }
        if (overdue != 0u) {
            fprintf(stderr, "camctl-sim: strict:   %u reliable packet%s past its 200 ms (or its host gone), not judged: the host's bytes "
                    "written by then were still on the line\n",
                    overdue, overdue == 1u ? "" : "s");
        }
    }
    for (v = 0; v < V_COUNT; v++) {
        if (v_count[v] == 0u) {
            continue;
        }
        fprintf(stderr, "camctl-sim: strict:   %u x %s; first:", v_count[v], v_names[v]);
        for (i = 0; i < v_first_len[v]; i++) {
            fprintf(stderr, " %02x", v_first[v][i]);
        }
        fprintf(stderr, "\n");
    }
    return total;
}

/* A copy of a host request seen before (remembered otherwise). */
static bool host_copy(const pkt_t *p, const uint8_t *wire, size_t wire_len)
{
    uint32_t whole = frame_hash(wire, wire_len);
    acked_t *a;
    unsigned i;
    for (i = 0; i < sizeof g_host_reliable / sizeof g_host_reliable[0]; i++) {
        a = &g_host_reliable[i];
        if (a->used && a->seq == p->seq && a->whole == whole && a->whole_len == wire_len) {
            return true;
        }
    }
    a = &g_host_reliable[g_host_reliable_next];
    g_host_reliable_next = (g_host_reliable_next + 1u) % (unsigned)(sizeof g_host_reliable / sizeof g_host_reliable[0]);
    a->used = true;
    a->seq = p->seq;
    a->whole = whole;
    a->whole_len = wire_len;
    return false;
}

/* start_us: when the frame's first byte reached the device; now_us: when its last did. */
static void strict_host(const pkt_t *p, frame_kind_t kind, size_t unstuffed, const uint8_t *wire, size_t wire_len,
                        bool session, uint64_t start_us, uint64_t now_us)
{
    unsigned i;
    bool handshake = kind == FRAME_OK && p->type == T_REQUEST && p->extra[0] == 1u && p->extra[1] == 1u;
    bool copy;
    if (handshake) {
        forget_host_requests();
        g_strict_late_in_session = 0u; /* a new session: no late heartbeat yet */
        if (!g_strict_handshake_waits) {
            g_strict_handshake_waits = true;
            g_strict_handshake_us = start_us;
        }
    }
    copy = kind == FRAME_OK && p->type == T_REQUEST && host_copy(p, wire, wire_len);
    g_strict_copy = copy;
    uint64_t since = g_strict_last_us > g_strict_heard_us ? g_strict_last_us : g_strict_heard_us;
    /* A host that comes back after a silence longer than 2.5 heartbeat intervals, in the same session,
     * was late with its heartbeats (a host that closes the port and never returns, or reconnects with a
     * handshake, was not). A host may wait 1.25 intervals (§8); the checker leaves as much again for two
     * processes scheduled on a loaded machine, the host's and its own (its clock reads a frame when it
     * runs, not when the frame arrived). A silence within the 4-interval dead timeout kept the link; once
     * in a session it is reported, not counted: a host not run for a moment on a loaded machine looks so (a
     * CI run's `camctl demo` came back once after such a silence in a 12 s session; the cause was not
     * found). The second in a session is a violation: a host whose timer is slow, or that skips a beat
     * after some packet, is late again and again. A silence past the dead timeout (by this checker's clock)
     * is a violation at once: it is as long as the device waits before it gives a session up. The silence ends when
     * the frame's first byte arrives (on a slow line its own bytes take their time: at 19200 baud a
     * 250-byte frame takes 130 ms), and starts when the host's last frame ended or, in a new session, when
     * the host had the HandshakeResponse, whichever came later. */
    if (g_strict_last_in_session && !handshake && start_us > since
        && start_us - since > 5u * CC_HEARTBEAT_INTERVAL_MS * 1000u / 2u) {
        uint64_t silence = start_us - since;
        g_strict_late_in_session++;
        g_strict_late_total++;
        if (g_strict_late_in_session > 1u || silence > CC_WIRE_DEAD_AFTER_HEARTBEATS * CC_HEARTBEAT_INTERVAL_MS * 1000u) {
            violation(V_HEARTBEAT, wire, wire_len);
            if (v_count[V_HEARTBEAT] == 1u) { /* with the first offending bytes, as violation() prints them */
                fprintf(stderr, "camctl-sim: strict: the host was silent %lu ms before them (late heartbeat %u of its session)\n",
                        (unsigned long)(silence / 1000u), g_strict_late_in_session);
            }
        } else if (silence > g_strict_late_longest_us) {
            g_strict_late_longest_us = silence;
        }
    }
    g_strict_last_us = now_us;
    g_strict_last_in_session = session || handshake;
    if (unstuffed > CC_MAX_FRAME_BYTES) {
        violation(V_TOO_LARGE, wire, wire_len);
    }
    if (kind != FRAME_OK) {
        return;
    }
    if (p->type == T_ACK && p->payload_len >= 2u) {
        uint16_t acked = (uint16_t)(p->payload[0] | (p->payload[1] << 8));
        for (i = 0; i < 32u; i++) {
            if (g_pending[i].used && g_pending[i].seq == acked) {
                acked_t *a = &g_acked[g_acked_next];
                g_acked_next = (g_acked_next + 1u) % (unsigned)(sizeof g_acked / sizeof g_acked[0]);
                a->used = true;
                a->seq = acked;
                a->whole = g_pending[i].whole;
                a->whole_len = g_pending[i].whole_len;
                g_pending[i].used = false;
            }
        }
    }
    if (p->type == T_REQUEST) {
        call_t *c = call_find(p->call);
        if (!session && !handshake && !copy) {
            violation(V_BEFORE_HANDSHAKE, wire, wire_len);
        }
        if (c != 0 && c->live && !handshake && !copy) {
            violation(V_REUSED, wire, wire_len);
        }
    }
}

/* delivered_us: when the frame's last byte reaches the host. */
static void strict_device(const pkt_t *p, const uint8_t *wire, size_t wire_len, uint64_t delivered_us)
{
    unsigned i, free_slot = 32u;
    uint32_t whole;
    call_t *c = call_find(p->call);
    /* The device's last word on a call ends it (§4: a host may then use its id again): ERROR, STREAM_END,
     * and a RESPONSE unless the call is one of InputService's two server streams, where the RESPONSE
     * confirms the stream (§7) and messages follow. Ended as the device sends it, before the host has
     * it: a host's reuse is never judged before the device's answer. */
    if (c != 0 && (p->type == T_ERROR || p->type == T_STREAM_END
                   || (p->type == T_RESPONSE && !(c->service == 2u && (c->method == 1u || c->method == 2u))))) {
        c->live = false;
    }
    if (g_strict_handshake_waits && is_handshake(c) && (p->type == T_RESPONSE || p->type == T_ERROR)) {
        g_strict_handshake_waits = false;
        if (p->type == T_RESPONSE) {
            /* a new session: the old one's packets that reached the host while it waited are owed nothing
             * (a refused handshake leaves them owed: the device sends them again) */
            for (i = 0; i < 32u; i++) {
                if (g_pending[i].used && g_pending[i].sent_us >= g_strict_handshake_us) {
                    g_pending[i].used = false;
                }
            }
        }
    }
    if ((p->flags & F_RELIABLE) == 0u || g_host_gone) {
        return;
    }
    whole = frame_hash(wire, wire_len);
    for (i = 0; i < sizeof g_acked / sizeof g_acked[0]; i++) {
        if (g_acked[i].used && g_acked[i].seq == p->seq && g_acked[i].whole == whole && g_acked[i].whole_len == wire_len) {
            return; /* a copy of a packet the host acknowledged: its ACK had not reached the device yet */
        }
    }
    for (i = 0; i < 32u; i++) {
        if (g_pending[i].used && g_pending[i].seq == p->seq) {
            return; /* a retransmission: the first copy's clock runs */
        }
        if (!g_pending[i].used && free_slot == 32u) {
            free_slot = i;
        }
    }
    if (p->type == T_RESPONSE && is_handshake(c)) {
        g_strict_heard_us = delivered_us; /* the first copy: a host that had it knows of the session */
    }
    if (free_slot < 32u) {
        pending_t *s = &g_pending[free_slot];
        s->used = true;
        s->reported = false;
        s->overdue = false;
        s->seq = p->seq;
        s->sent_us = delivered_us; /* its 200 ms count from when the host has it */
        s->wire_len = wire_len < sizeof(s->wire) ? wire_len : sizeof(s->wire);
        memcpy(s->wire, wire, s->wire_len);
        s->whole = whole;
        s->whole_len = wire_len;
    }
}

static uint64_t g_in_written, g_in_delivered;

void ccsim_filter_in_line(uint64_t written, uint64_t delivered)
{
    g_in_written = written;
    g_in_delivered = delivered;
}

/* A pending packet's time to be acknowledged is over (its 200 ms ran out, or its host closed): an ACK the
 * host wrote by now is among the bytes written so far, and it is judged once they have all arrived, so that
 * bytes written later (a host keeping the line busy) cannot put the verdict off. */
static void mark_overdue(pending_t *p)
{
    if (!p->overdue) {
        p->overdue = true;
        p->watermark = g_in_written;
    }
}

static void strict_tick(uint64_t now_us, bool session)
{
    unsigned i;
    if (g_closed_unjudged) {
        /* The host closed: what it had and did not acknowledge stays so, judged as soon as its last bytes
         * have arrived; what had not reached it is owed nothing. */
        g_closed_unjudged = false;
        for (i = 0; i < 32u; i++) {
            if (!g_pending[i].used) {
                continue;
            }
            if (g_pending[i].sent_us > g_closed_us) {
                g_pending[i].used = false;
            } else {
                mark_overdue(&g_pending[i]);
            }
        }
    }
    for (i = 0; i < 32u; i++) {
        if (g_pending[i].used && now_us > g_pending[i].sent_us && now_us - g_pending[i].sent_us > 200000u) {
            mark_overdue(&g_pending[i]);
        }
        if (g_pending[i].used && g_pending[i].overdue && g_in_delivered >= g_pending[i].watermark) {
            violation(V_UNACKED, g_pending[i].wire, g_pending[i].wire_len);
            g_pending[i].used = false;
        }
    }
    (void)session;
}

void ccsim_filter_stalled(uint64_t device_us)
{
    unsigned i;
    for (i = 0; i < 32u; i++) {
        if (g_pending[i].used) {
            g_pending[i].sent_us += device_us;
        }
    }
    g_strict_last_us += device_us;
    g_strict_heard_us += g_strict_heard_us > 0u ? device_us : 0u;
    g_closed_us += g_closed_unjudged ? device_us : 0u;
}

/* ---- host -> device ---- */

/* settings-switches-ignored: a SetSettingsRequest without fields 3 and 4 (camera_control,
 * camera_adjustments) of its Settings; true when it changed. Only the form hosts send (one Settings of
 * one-byte varints) is rewritten. */
static bool drop_setting_switches(pkt_t *p)
{
    uint8_t inner[16];
    size_t i, n = 0;
    bool changed = false;
    if (p->payload_len < 2u || p->payload[0] != 0x0Au || p->payload[1] != p->payload_len - 2u
        || p->payload_len - 2u > sizeof(inner)) {
        return false;
    }
    for (i = 2; i + 1u < p->payload_len; i += 2u) {
        uint8_t tag = p->payload[i];
        if (tag == 0x18u || tag == 0x20u) {
            changed = true;
            continue;
        }
        inner[n++] = tag;
        inner[n++] = p->payload[i + 1u];
    }
    if (changed) {
        p->payload[1] = (uint8_t)n;
        memcpy(&p->payload[2], inner, n);
        p->payload_len = n + 2u;
    }
    return changed;
}

static size_t in_frame(const uint8_t *wire, size_t wire_len, uint8_t *out, size_t len, size_t cap, bool session,
                       bool last_in_burst, uint64_t start_us, uint64_t now_us)
{
    static pkt_t p;
    size_t unstuffed = 0;
    frame_kind_t kind = parse(wire, wire_len - 1u, &p, &unstuffed);
    call_t *c;
    bool reemit = false;

    if (g_strict) {
        strict_host(&p, kind, unstuffed, wire, wire_len, session, start_us, now_us);
    }
    if (brk("lax-call-ids") || brk("non-minimal-refused")) {
        size_t r = in_call_id(wire, wire_len, out, len, cap);
        if (r != (size_t)-1) {
            return r;
        }
    }
    if (kind != FRAME_OK) {
        if (wire_len > 1u) {
            g_after_bad_frame = true;
        }
        if (kind == FRAME_BAD_CHECK) {
            g_bad_checks++;
        }
        if (brk("check-miscounted") && kind == FRAME_BAD_CHECK) {
            /* a frame too short for an envelope, with a good check: a framing error */
            uint8_t body[5] = {0x08, 0x01, 0x00, 0, 0}, stuffed[8];
            uint16_t check = cc_crc16(body, 3u);
            size_t w;
            body[3] = (uint8_t)(check & 0xFFu);
            body[4] = (uint8_t)(check >> 8);
            w = cc_cobs_encode(body, sizeof(body), stuffed, sizeof(stuffed) - 1u);
            stuffed[w++] = 0;
            return emit_raw(stuffed, w, out, len, cap);
        }
        if (brk("short-miscounted") && kind == FRAME_SHORT && unstuffed >= 1u) {
            static const uint8_t badcheck[] = {0x07, 0x08, 0x01, 0x01, 0x01, 0x55, 0x55, 0x00};
            return emit_raw(badcheck, sizeof(badcheck), out, len, cap);
        }
        if (brk("bad-cobs-dropped") && kind == FRAME_BAD_COBS) {
            return len;
        }
        if (brk("over-max-not-counted") && unstuffed > CC_MAX_FRAME_BYTES) {
            return len;
        }
        return emit_raw(wire, wire_len, out, len, cap);
    }
    if (brk("no-resync") && g_after_bad_frame && p.type == T_REQUEST) {
        g_after_bad_frame = false;
        return len;
    }
    if (p.type == T_REQUEST) {
        g_after_bad_frame = false;
    }
    g_in_session = session;
    if (renumbering()) {
        reemit = host_renumber(&p);
    }
    if (p.type == T_REQUEST && p.extra[0] == 1u && p.extra[1] == 1u) {
        unsigned k, live = 0;
        for (k = 0; k < CALLS; k++) {
            live += g_calls[k].live && !is_handshake(&g_calls[k]) ? 1u : 0u;
        }
        if (brk("handshake-counts-toward-limit") && live >= CC_MAX_CONCURRENT_CALLS) {
            for (k = 0; k < CALLS; k++) {
                g_calls[k].live = false; /* refused once: the host's next handshake goes through */
            }
            return len;
        }
        g_refused = false;
        g_raw_cancelled = false;
        g_config_fake = brk("config-reset-on-handshake");
        memset(g_late_acks, 0, sizeof g_late_acks); /* the device numbers the new session from 0 */
    }
    if (p.type == T_REQUEST && p.extra[0] == 4u && p.extra[1] == 1u && brk("haptic-intensity-clamped")
        && pb_get(p.payload, p.payload_len, 2u) > 100u) {
        pb_set(p.payload, &p.payload_len, sizeof(p.payload), 2u, 100u);
        reemit = true;
    }
    if (p.type == T_REQUEST && p.extra[0] == 3u && p.extra[1] == 4u && brk("settings-switches-ignored")) {
        reemit = drop_setting_switches(&p) || reemit;
    }
    if (brk("refused-handshake-ends-session") && g_refused) {
        return len;
    }
    if (brk("serve-device-bound") && p.call != 0u
        && (p.type == T_RESPONSE || p.type == T_STREAM_MESSAGE || p.type == T_STREAM_END || p.type == T_ERROR)) {
        p.type = T_REQUEST; /* served as a Ping */
        p.extra[0] = 1;
        p.extra[1] = 2;
        p.extra_len = 2;
        p.payload_len = 0;
        return emit(&p, out, len, cap);
    }
    if (brk("answer-empty-ack") && p.type == T_ACK && p.payload_len < 2u) {
        p.type = T_REQUEST; /* taken for a call of an unknown service */
        p.call = 0x0FFFFFF1u;
        p.extra[0] = 99;
        p.extra[1] = 1;
        p.extra_len = 2;
        return emit(&p, out, len, cap);
    }
    if (brk("heartbeat-payload-dropped") && p.type == T_HEARTBEAT && p.payload_len > 0u) {
        return len;
    }
    if (brk("strict-link-packets") && (p.type == T_ACK || p.type == T_HEARTBEAT)
        && (p.call != 0u || (p.type == T_ACK && p.payload_len > 2u))) {
        return len; /* dropped as if an envelope error (not the v1.2 rule, §4) */
    }
    if (p.type == T_REQUEST && brk("no-stream-after-cancel") && g_raw_cancelled && p.extra[0] == 2u && p.extra[1] == 2u) {
        p.extra[1] = 99;
        reemit = true;
    }
    if (p.type == T_REQUEST && brk("reused-id-refused") && !(p.extra[0] == 1u && p.extra[1] == 1u)) {
        c = call_find(p.call);
        if (c != 0 && c->live) {
            uint32_t live_id = p.call;
            p.call = 0x0FFFFE00u + (g_alias_next++ % 256u);
            c = call_add(p.call);
            c->alias_of = live_id;
            c->service = 99;
            c->method = 1;
            c->live = true;
            p.extra[0] = 99; /* a stand-in call whose ERROR is sent as ALREADY_EXISTS on the live id */
            p.extra[1] = 1;
            p.payload_len = 0;
            return emit(&p, out, len, cap);
        }
    }
    if (brk("over-max-not-counted") && unstuffed > CC_MAX_FRAME_BYTES) {
        return len;
    }
    if (brk("max-frame-off-by-one") && unstuffed == CC_MAX_FRAME_BYTES) {
        return len;
    }
    if (brk("cobs-254-strict") && wire_len >= 257u && wire[wire_len - 2u] == 0x01u && wire[wire_len - 257u] == 0xFFu) {
        return len;
    }
    if (brk("drop-under-burst") && last_in_burst && wire_len <= 64u && p.type == T_REQUEST) {
        return len;
    }
    if (p.type == T_CANCEL) {
        c = call_find(p.call);
        if (c != 0) {
            c->live = false;
            g_raw_cancelled = g_raw_cancelled || (c->service == 2u && c->method == 2u);
        }
        if (brk("ignore-cancel")) {
            return len;
        }
    }
    if (p.type == T_REQUEST) {
        bool handshake = p.extra[0] == 1u && p.extra[1] == 1u;
        c = call_find(p.call);
        if (handshake) {
            unsigned k;
            for (k = 0; k < CALLS; k++) {
                g_calls[k].live = false; /* a new session ends every call */
            }
        }
        if ((c == 0 || !c->live) && !(g_strict && g_strict_copy)) {
            c = call_add(p.call);
            c->service = p.extra[0];
            c->method = p.extra[1];
            c->payload_len = (uint16_t)p.payload_len;
            c->live = true;
            if (handshake) {
                uint64_t v;
                size_t at, n;
                if (pb_find(p.payload, p.payload_len, 1u, &v, &at, &n)) {
                    c->host_major = (uint32_t)pb_get(p.payload + at, n, 1u);
                    c->host_minor = (uint32_t)pb_get(p.payload + at, n, 2u);
                }
            }
        }
        if (brk("accept-other-major") && handshake && c->host_major != 1u) {
            static uint8_t hello[] = {0x0a, 0x02, 0x08, 0x01};
            memcpy(p.payload, hello, sizeof(hello));
            p.payload_len = sizeof(hello);
            return emit(&p, out, len, cap);
        }
    }
    if ((p.type & 0x0Fu) == 0u || (p.type > 8u)) {
        c = call_find(p.call);
        if (c != 0 && c->live) {
            if (brk("unknown-type-ends-live-call")) {
                /* 1.1's answer: sent on a stand-in call id, which the device answers ERROR UNIMPLEMENTED
                 * (no live call has it), and that ERROR goes to the host on the live call's id */
                uint32_t live_id = p.call;
                p.call = 0x0FFFFE00u + (g_alias_next++ % 256u);
                c = call_add(p.call);
                c->alias_of = live_id;
                c->alias_keeps_status = true;
                c->unknown_type = true;
                c->live = true;
                return emit(&p, out, len, cap);
            }
        } else {
            c = call_add(p.call);
            c->unknown_type = true;
        }
    }
    g_host_last = p.seq;
    if (p.type == T_ACK && p.payload_len >= 2u) {
        uint16_t acked = (uint16_t)(p.payload[0] | (p.payload[1] << 8));
        if (acked >= 0x4000u && brk("dup-reliable-event")) {
            return len; /* the ACK of a copy the device never sent */
        }
        if (brk("ack-taken-late") && late_ack_drop(acked)) {
            return len;
        }
        if (g_seq_offset != 0u) {
            acked = (uint16_t)(acked - g_seq_offset);
            p.payload[0] = (uint8_t)(acked & 0xFFu);
            p.payload[1] = (uint8_t)(acked >> 8);
            return emit(&p, out, len, cap);
        }
    }
    return reemit ? emit(&p, out, len, cap) : emit_raw(wire, wire_len, out, len, cap);
}

typedef struct {
    uint8_t buf[WIRE_CAP];
    size_t len;
    bool passthrough; /* a frame too long to hold: bytes go through as they come */
    uint64_t first_us; /* when the frame's first byte came */
} assembler_t;

static assembler_t g_in_asm, g_out_asm;

size_t ccsim_filter_in(const uint8_t *in, size_t len, uint8_t *out, size_t cap, uint64_t now_us, bool session)
{
    static uint8_t checked[WIRE_CAP];
    size_t i, n = 0, last_end = 0, frames = 0;
    assembler_t *a = &g_in_asm;
    /* --strict alone changes nothing: the host's bytes go on to the device as they come, and the checker reads
     * a copy of each frame at its delimiter. Held back to the delimiter, a frame reached the device's UART
     * whole and was read at the line's rate again (a 1,024-byte request 1 s late at 9600 baud). A breaker may
     * change a frame: then it is held. */
    bool pass = g_break < 0;
    g_last_host_us = now_us;
    for (i = 0; i < len; i++) {
        if (in[i] == 0u) {
            last_end = i + 1u;
            frames++;
        }
    }
    for (i = 0; i < len; i++) {
        uint8_t b = in[i];
        if (a->passthrough) {
            if (n < cap) {
                out[n++] = b;
            }
            if (b == 0u) {
                a->passthrough = false;
                g_after_bad_frame = true;
            }
            continue;
        }
        if (a->len == 0u) {
            a->first_us = now_us;
        }
        a->buf[a->len++] = b;
        if (pass && n < cap) {
            out[n++] = b;
        }
        if (b == 0u) {
            /* drop-under-burst: a burst is a read of 512 bytes or more holding 8 frames or more (garbage
             * followed by one request is not a burst) */
            bool last = len >= 512u && frames >= 8u && i + 1u == last_end;
            if (pass) {
                if (a->len > 1u) {
                    (void)in_frame(a->buf, a->len, checked, 0u, sizeof checked, session, last, a->first_us, now_us);
                }
            } else {
                n = a->len == 1u ? emit_raw(a->buf, 1u, out, n, cap)
                                 : in_frame(a->buf, a->len, out, n, cap, session, last, a->first_us, now_us);
            }
            a->len = 0;
        } else if (a->len >= WIRE_CAP) {
            if (!pass) {
                n = emit_raw(a->buf, a->len, out, n, cap);
            }
            a->len = 0;
            a->passthrough = true;
        }
    }
    return n;
}

bool ccsim_filter_frame_arriving(void)
{
    /* only a frame the filter holds (under a breaker): --strict alone passes the bytes on, and the device
     * sees the frame arriving itself */
    return g_break >= 0 && g_in_asm.len > 0u && !g_in_asm.passthrough && !brk("whole-frame-liveness");
}

/* ---- device -> host ---- */

/* raw-buttons-missing: RawSampleBatch's payload without button_levels (field
 * 6, packed, the last field the firmware writes). */
static void raw_buttons_drop(pkt_t *p, bool *changed)
{
    uint64_t v;
    size_t at, n;
    if (pb_find(p->payload, p->payload_len, 6u, &v, &at, &n) && at + n == p->payload_len && n < 128u && at >= 2u) {
        p->payload_len = at - 2u;   /* the key and the one-byte length go too */
        *changed = true;
    }
}

/* raw-delta-v11, raw-delta-drift: RawSampleBatch's payload with its samples moved from the records (field 3)
 * to delta_samples (field 5), or delta_samples with every force step after the first one zigzag step off. */
static void raw_delta_break(pkt_t *p, bool *changed)
{
    static uint8_t coded[FRAME_CAP], rebuilt[FRAME_CAP];
    uint64_t v;
    size_t at, n, coded_len = 0, i = 0, out = 0, sample = 0;
    if (brk("raw-delta-v11") && g_session_minor < CC_WIRE_RAW_DELTA_MINOR && pb_find(p->payload, p->payload_len, 3u, &v, &at, &n)) {
        coded_len = cc_rawdelta_encode(p->payload + at, n / CC_WIRE_RAW_RECORD_BYTES, coded, sizeof(coded));
    } else if (brk("raw-delta-drift") && pb_find(p->payload, p->payload_len, 5u, &v, &at, &n)) {
        while (i < n) {   /* head varint, then a position varint when bit 1 is set */
            uint64_t head, pos;
            size_t j = at + i;
            if (!pb_varint(p->payload, at + n, &j, &head)) {
                return;
            }
            i = j - at;
            if (coded_len + 20u > sizeof(coded)) {
                return;
            }
            coded_len += pb_put_varint(coded + coded_len, sample++ == 0u ? head : head + 4u);
            if ((head & 2u) != 0u) {
                if (!pb_varint(p->payload, at + n, &j, &pos)) {
                    return;
                }
                i = j - at;
                coded_len += pb_put_varint(coded + coded_len, pos);
            }
        }
    } else {
        return;
    }
    i = 0;
    while (i < p->payload_len) {   /* every field but 3 and 5, then field 5 */
        size_t start = i;
        uint64_t key, len;
        if (!pb_varint(p->payload, p->payload_len, &i, &key)) {
            return;
        }
        if ((key & 7u) == 0u) {
            if (!pb_varint(p->payload, p->payload_len, &i, &len)) {
                return;
            }
        } else if ((key & 7u) == 2u) {
            if (!pb_varint(p->payload, p->payload_len, &i, &len) || len > p->payload_len - i) {
                return;
            }
            i += (size_t)len;
        } else {
            return;
        }
        if ((key >> 3) != 3u && (key >> 3) != 5u) {
            memcpy(rebuilt + out, p->payload + start, i - start);
            out += i - start;
        }
    }
    out += pb_put_varint(rebuilt + out, (5u << 3) | 2u);
    out += pb_put_varint(rebuilt + out, coded_len);
    if (coded_len == 0u || out + coded_len > sizeof(p->payload)) {
        return;
    }
    memcpy(rebuilt + out, coded, coded_len);
    memcpy(p->payload, rebuilt, out + coded_len);
    p->payload_len = out + coded_len;
    *changed = true;
}

static size_t out_packet(pkt_t *p, uint8_t *out, size_t len, size_t cap, bool *changed)
{
    call_t *c = call_find(p->call);
    unsigned i;

    if (c != 0 && c->alias_of != 0u && p->type == T_ERROR) {
        p->call = c->alias_of; /* reused-id-refused, unknown-type-ends-live-call: the stand-in call's ERROR */
        if (!c->alias_keeps_status) {
            p->extra[0] = S_ALREADY_EXISTS;
            p->payload_len = 0;
        }
        c->alias_of = 0;
        c->live = false;
        c = 0;
        *changed = true;
    }
    if (p->type == T_ERROR && is_handshake(c)) {
        g_refused = true;
    }
    if (brk("ack-taken-late") && p->type == T_STREAM_MESSAGE && (p->flags & F_RELIABLE) != 0u) {
        late_ack_note(p->seq);
    }
    if (brk("silent-rehandshake") && p->type == T_ERROR && p->extra_len == 1u && p->extra[0] == S_CANCELLED) {
        return len;
    }
    if (p->type == T_ERROR && p->extra_len == 1u && p->extra[0] == S_CANCELLED && p->payload_len == 11u
        && memcmp(p->payload, "new session", 11u) == 0) {
        g_session_ended++; /* cancelled-by-host-only: a call a new handshake ended */
    }
    if (brk("method-before-limit") && p->type == T_ERROR && p->extra_len == 1u && p->extra[0] == S_RESOURCE_EXHAUSTED
        && c != 0 && c->service == 2u && c->method > 2u) {
        p->extra[0] = S_UNIMPLEMENTED; /* as if the method were looked up before the limit (not v1.2) */
        *changed = true;
    }
    if (brk("new-session-error-reliable") && p->type == T_ERROR && p->extra_len == 1u && p->extra[0] == S_CANCELLED
        && (p->flags & F_RELIABLE) == 0u) {
        p->flags = (uint8_t)(p->flags | F_RELIABLE); /* v1.1's flag: its ACK may free a new packet (§9) */
        *changed = true;
    }
    if (brk("responses-best-effort") && (p->type == T_RESPONSE || p->type == T_ERROR) && (p->flags & F_RELIABLE) != 0u) {
        if (p->type == T_RESPONSE && is_handshake(c)) {
            g_sent_reliable_count = 0; /* a new session numbers from 0 again */
        }
        for (i = 0; i < 64u && i < g_sent_reliable_count; i++) {
            if (g_sent_reliable[i] == p->seq) {
                return len; /* a retransmission the filter's ACK came too late for */
            }
        }
        if (g_ack_queued < sizeof(g_ack_queue) / sizeof(g_ack_queue[0])) {
            g_sent_reliable[g_sent_reliable_count++ % 64u] = p->seq;
            g_ack_queue[g_ack_queued++] = p->seq;
            p->flags = (uint8_t)(p->flags & ~F_RELIABLE);
            *changed = true;
        } /* else no room for the filter's ACK: left reliable, so the host ACKs it (never unacknowledged) */
    }

    if (p->type == T_RESPONSE && is_handshake(c)) {
        uint64_t v;
        size_t at, n;
        g_session_minor = pb_find(p->payload, p->payload_len, 2u, &v, &at, &n) ? (uint32_t)pb_get(p->payload + at, n, 2u) : 0u;
        g_seq_offset = 0;
        g_device_packets = 0;
        g_sent_reliable_count = 0;
        g_held = false;
        if (brk("handshake-major") || brk("same-session-id")) {
            uint64_t v;
            size_t at, n;
            if (brk("same-session-id")) {
                pb_set(p->payload, &p->payload_len, sizeof(p->payload), 6u, 1u);
            } else if (pb_find(p->payload, p->payload_len, 1u, &v, &at, &n) && n == 4u) {
                p->payload[at + 1u] = 2u; /* 08 01 10 00 -> 08 02 10 00 */
            } else if (pb_find(p->payload, p->payload_len, 1u, &v, &at, &n) && n >= 2u) {
                p->payload[at + 1u] = 2u;
            }
            *changed = true;
        }
        if (brk("force-range-halved") || brk("buttons-unlisted")) {
            static uint8_t caps[512];
            size_t cn;
            if (pb_find(p->payload, p->payload_len, 4u, &v, &at, &n) && n <= sizeof(caps)) {
                memcpy(caps, p->payload + at, n);
                cn = n;
                if (brk("force-range-halved")) {
                    pb_set(caps, &cn, sizeof(caps), 5u, pb_get(caps, cn, 5u) / 2u);
                } else {
                    (void)pb_rewrite(caps, &cn, sizeof(caps), 4u, 0u, true, 0u, 0, 0u); /* no buttons */
                }
                (void)pb_rewrite(p->payload, &p->payload_len, sizeof(p->payload), 0u, 0u, false, 4u, caps, cn);
                *changed = true;
            }
        }
        if (brk("handshake-over-size")) {
            /* an unknown field (15) that makes the unstuffed frame, 3 + call id + payload + 2 bytes, one over */
            static uint8_t pad[FRAME_CAP];
            size_t env = 3u, want, need, k;
            uint32_t id = p->call;
            do {
                env++;
                id >>= 7;
            } while (id != 0u);
            want = CC_MAX_FRAME_BYTES + 1u - env - 2u;
            if (want > p->payload_len + 3u && want <= sizeof(p->payload) && want <= sizeof(pad)) {
                need = want - p->payload_len;
                k = need - 2u >= 128u ? need - 3u : need - 2u;
                if (1u + (k >= 128u ? 2u : 1u) + k == need) {
                    memset(pad, 0x42, k);
                    (void)pb_rewrite(p->payload, &p->payload_len, sizeof(p->payload), 0u, 0u, false, 15u, pad, k);
                    *changed = true;
                }
            }
        }
        if (brk("refuse-newer-minor") && c->host_minor > 0u) {
            static const char msg[] = "device 1.0";
            p->type = T_ERROR;
            p->extra[0] = S_FAILED_PRECONDITION;
            p->extra_len = 1;
            memcpy(p->payload, msg, sizeof(msg) - 1u);
            p->payload_len = sizeof(msg) - 1u;
            *changed = true;
        }
    }
    g_device_packets++;
    if (brk("skip-sequence") && g_device_packets == 2u) {
        g_seq_offset = 1;
    }
    if (g_seq_offset != 0u) {
        p->seq = (uint16_t)(p->seq + g_seq_offset);
        *changed = true;
    }
    if (c != 0 && (p->type == T_RESPONSE || p->type == T_ERROR || p->type == T_STREAM_END)) {
        c->live = false;
    }
    switch (p->type) {
    case T_HEARTBEAT:
        if (brk("no-heartbeat") || (brk("slow-heartbeat") && (g_heartbeats++ % 2u) == 1u)) {
            return len;
        }
        break;
    case T_ACK:
        if (brk("no-ack")) {
            return len;
        }
        if (renumbering() && p->payload_len >= 2u) {
            uint16_t host;
            if (!host_number_of((uint16_t)(p->payload[0] | (p->payload[1] << 8)), &host)) {
                return len; /* the ACK of a packet of the filter's own */
            }
            p->payload[0] = (uint8_t)(host & 0xFFu);
            p->payload[1] = (uint8_t)(host >> 8);
            *changed = true;
        }
        break;
    case T_ERROR:
        if (brk("serve-before-handshake") && p->extra[0] == S_FAILED_PRECONDITION && c != 0 && !is_handshake(c)) {
            p->type = T_RESPONSE;
            p->extra_len = 0;
            p->payload_len = 0;
            *changed = true;
        } else if (brk("unknown-type-silent") && p->extra[0] == S_UNIMPLEMENTED && c != 0 && c->unknown_type) {
            return len;
        } else if (brk("wrong-status-invalid-argument") && p->extra[0] == S_INVALID_ARGUMENT) {
            p->extra[0] = S_UNKNOWN;
            *changed = true;
        } else if (p->extra[0] == S_UNIMPLEMENTED && c != 0 && !c->unknown_type && c->service >= 1u && c->service <= 6u
                   && brk("unknown-method-status")) {
            p->extra[0] = S_INTERNAL;
            *changed = true;
        } else if (p->extra[0] == S_UNIMPLEMENTED && c != 0 && !c->unknown_type && (c->service < 1u || c->service > 6u)
                   && brk("unknown-service-status")) {
            p->extra[0] = S_NOT_FOUND;
            *changed = true;
        } else if (brk("ignore-concurrency-limit") && p->extra[0] == S_RESOURCE_EXHAUSTED && c != 0
                   && c->payload_len == 0u) {
            return len;
        }
        break;
    case T_RESPONSE:
        if (c != 0 && c->service == 1u && c->method == 2u && c->payload_len == 0u && brk("time-goes-back")
            && (g_pings++ % 2u) == 1u) {
            uint64_t t = pb_get(p->payload, p->payload_len, 2u);
            pb_set(p->payload, &p->payload_len, sizeof(p->payload), 2u, t > 1000000u ? t - 1000000u : 0u);
            *changed = true;
        }
        if (c != 0 && c->service == 5u && (c->method == 1u || c->method == 2u) && brk("cancelled-by-host-only")) {
            uint64_t cancelled = pb_get(p->payload, p->payload_len, 12u);
            pb_set(p->payload, &p->payload_len, sizeof(p->payload), 12u,
                   cancelled > g_session_ended ? cancelled - g_session_ended : 0u);
            if (c->method == 2u) {
                g_session_ended = 0; /* ResetCounters starts the count again */
            }
            *changed = true;
        }
        if (c != 0 && c->service == 5u && (c->method == 1u || c->method == 2u) && brk("frames-received-counts-bad")) {
            uint64_t received = pb_get(p->payload, p->payload_len, 2u);
            pb_set(p->payload, &p->payload_len, sizeof(p->payload), 2u, received + g_bad_checks);
            if (c->method == 2u) {
                g_bad_checks = 0; /* ResetCounters starts the count again */
            }
            *changed = true;
        }
        if (c != 0 && c->service == 5u && c->method == 2u && brk("reset-counters-zero")) {
            p->payload_len = 0;
            *changed = true;
        }
        if (c != 0 && c->service == 1u && c->method == 2u && c->payload_len == 0u && brk("empty-ping-echo")
            && p->payload_len + 3u <= sizeof(p->payload)) {
            p->payload[p->payload_len++] = 0x0a; /* payload = "!" */
            p->payload[p->payload_len++] = 0x01;
            p->payload[p->payload_len++] = 0x21;
            *changed = true;
        }
        if (c != 0 && c->service == 3u && c->method == 1u && brk("config-reset-on-handshake")) {
            if (!g_config_default_seen && p->payload_len <= sizeof(g_config_default)) {
                g_config_default_seen = true;
                g_config_default_len = p->payload_len;
                memcpy(g_config_default, p->payload, p->payload_len);
            } else if (g_config_fake && g_config_default_seen) {
                memcpy(p->payload, g_config_default, g_config_default_len);
                p->payload_len = g_config_default_len;
                *changed = true;
            }
        }
        if (c != 0 && c->service == 3u && c->method == 2u) {
            g_config_fake = false;
        }
        break;
    case T_STREAM_MESSAGE:
        if (c != 0 && c->service == 2u && c->method == 2u && brk("confirm-stream-v10") && g_session_minor == 0u
            && !c->confirmed) {
            /* an empty RESPONSE on the call right behind its first message, numbered apart from the device's */
            pkt_t rsp;
            size_t n;
            c->confirmed = true;
            memset(&rsp, 0, sizeof(rsp));
            rsp.type = T_RESPONSE;
            rsp.seq = (uint16_t)(p->seq + 0x4000u);
            rsp.call = p->call;
            n = emit(p, out, len, cap);
            return emit(&rsp, out, n, cap);
        }
        if (c != 0 && c->service == 2u && c->method == 2u && brk("stream-out-of-order")) {
            if (g_held) {
                size_t n;
                g_held = false;
                n = emit(p, out, len, cap);
                return emit(&g_held_pkt, out, n, cap);
            }
            if ((g_batches++ % 3u) == 2u) {
                g_held = true;
                memcpy(&g_held_pkt, p, sizeof(*p));
                return len;
            }
        }
        if (c != 0 && c->service == 2u && c->method == 2u) {
            raw_delta_break(p, changed);
        }
        if (c != 0 && c->service == 2u && c->method == 2u && brk("raw-buttons-missing")) {
            raw_buttons_drop(p, changed);
        }
        if (c != 0 && c->service == 2u && c->method == 2u && brk("batch-interval-doubled")) {
            pb_set(p->payload, &p->payload_len, sizeof(p->payload), 2u, 2u * pb_get(p->payload, p->payload_len, 2u));
            *changed = true;
        }
        if (c != 0 && c->service == 2u && c->method == 1u) {
            uint32_t kind = (uint32_t)pb_get(p->payload, p->payload_len, 2u);
            if (brk("wrong-button-source") && pb_get(p->payload, p->payload_len, 3u) == 3u) {
                pb_set(p->payload, &p->payload_len, sizeof(p->payload), 3u, 2u);
                *changed = true;
            }
            if (brk("unreliable-press") && kind >= 3u && kind <= 6u) {
                p->flags = (uint8_t)(p->flags & ~F_RELIABLE);
                *changed = true;
            }
            if (brk("unprotected-still-reliable") && ((kind >= 3u && kind <= 6u) || kind >= 8u)
                && (p->flags & F_RELIABLE) == 0u) {
                p->flags = (uint8_t)(p->flags | F_RELIABLE);
                *changed = true;
            }
            if (brk("first-event-stream-only")) {
                unsigned k;
                for (k = 0; k < CALLS; k++) {
                    if (g_calls[k].live && g_calls[k].service == 2u && g_calls[k].method == 1u && g_calls[k].call < p->call) {
                        return len; /* only the oldest event stream gets events (not v1.2, §7) */
                    }
                }
            }
            if (brk("reliable-count-off-by-one") && ((kind >= 3u && kind <= 6u) || kind >= 8u)) {
                uint64_t count = pb_get(p->payload, p->payload_len, 8u);
                pb_set(p->payload, &p->payload_len, sizeof(p->payload), 8u, count > 1u ? count - 1u : 1u);
                *changed = true;
            }
            if (brk("slide-reversed") && kind == 7u) {
                uint64_t position = pb_get(p->payload, p->payload_len, 5u);
                pb_set(p->payload, &p->payload_len, sizeof(p->payload), 5u, position <= 1023u ? 1023u - position : 0u);
                *changed = true;
            }
            if (brk("dup-reliable-event") && kind == 10u) {
                bool retransmission = false;
                for (i = 0; i < 64u && i < g_sent_reliable_count; i++) {
                    retransmission = retransmission || g_sent_reliable[i] == p->seq;
                }
                if (!retransmission) {
                    size_t n;
                    pkt_t copy;
                    g_sent_reliable[g_sent_reliable_count++ % 64u] = p->seq;
                    memcpy(&copy, p, sizeof(copy));
                    copy.seq = (uint16_t)(p->seq + 0x4000u);
                    n = emit(p, out, len, cap);
                    return emit(&copy, out, n, cap);
                }
            }
        }
        break;
    default:
        break;
    }
    if (brk("link-packets-on-call") && (p->type == T_HEARTBEAT || p->type == T_ACK)) {
        p->call = 2147483632u;
        *changed = true;
    }
    if (brk("non-minimal-call-ids") && p->type == T_RESPONSE) {
        *changed = true; /* emit writes the call id one byte longer */
    }
    if (brk("no-retransmit") && (p->flags & F_RELIABLE) != 0u) {
        for (i = 0; i < 64u && i < g_sent_reliable_count; i++) {
            if (g_sent_reliable[i] == p->seq) {
                return len;
            }
        }
        g_sent_reliable[g_sent_reliable_count++ % 64u] = p->seq;
    }
    if (brk("heartbeats-behind-frames") && g_out_byte_ns != 0u && p->type != T_HEARTBEAT) {
        /* the heartbeats a device counting from the queueing sends behind this frame: one per interval of its
         * line time (its wire bytes about its payload and 16), numbered apart from the device's own */
        uint64_t line_us = (uint64_t)(p->payload_len + 16u) * g_out_byte_ns / 1000u;
        unsigned behind = (unsigned)(line_us / (CC_HEARTBEAT_INTERVAL_MS * 1000u));
        size_t n = emit(p, out, len, cap);
        pkt_t hb;
        memset(&hb, 0, sizeof(hb));
        hb.type = T_HEARTBEAT;
        for (i = 0; i < behind; i++) {
            hb.seq = (uint16_t)(p->seq + 0x4000u + i);
            n = emit(&hb, out, n, cap);
        }
        return n;
    }
    return *changed ? emit(p, out, len, cap) : (size_t)-1;
}

/* cobs-trailing-01: when out[start, n) is one frame whose last COBS block is a full 254-byte run (code 0xFF
 * ending at the delimiter), a 0x01 code byte goes before its delimiter (non-canonical, PROTOCOL.md §2). */
static size_t trailing_01(uint8_t *out, size_t start, size_t n, size_t cap)
{
    size_t i = start;
    uint8_t last = 0;
    while (i + 1u < n && out[i] != 0u) {
        last = out[i];
        i += out[i];
    }
    if (i + 1u == n && out[i] == 0u && last == 0xFFu && n < cap) {
        out[i] = 0x01u;
        out[n] = 0u;
        return n + 1u;
    }
    return n;
}

size_t ccsim_filter_out(const uint8_t *in, size_t len, uint8_t *out, size_t cap, uint64_t now_us)
{
    static pkt_t p;
    size_t i, n = 0;
    assembler_t *a = &g_out_asm;
    /* --strict alone changes nothing: the device's bytes go on as they come, as from its UART, and the checker
     * reads a copy of each frame at its delimiter. Held back to the delimiter and then handed to the line, a
     * frame would take its time on the line twice (a 163-byte HandshakeResponse 340 ms at 9600 baud, not
     * 170), and the device's retransmission timer, which counts from when its UART took the bytes, would run
     * out before the host could have answered. A breaker may change a frame: then it is held. */
    bool pass = g_break < 0;
    for (i = 0; i < len; i++) {
        a->buf[a->len++] = in[i];
        if (pass && n < cap) {
            out[n++] = in[i];
        }
        if (in[i] == 0u) {
            size_t unstuffed;
            if (a->len > 1u && parse(a->buf, a->len - 1u, &p, &unstuffed) == FRAME_OK) {
                bool changed = false;
                size_t r;
                if (g_strict) {
                    /* the frame as the device sent it ends at the byte handed to the line from line_free_us as
                     * the n-th (passed on) or the (n + a->len)-th (held, a breaker may change it below; the
                     * checker runs without one) */
                    uint64_t base = g_out_line_free_us > now_us ? g_out_line_free_us : now_us;
                    size_t end = pass ? n : n + a->len;
                    strict_device(&p, a->buf, a->len, base + (uint64_t)end * g_out_byte_ns / 1000u);
                }
                if (!pass) {
                    size_t start = n;
                    r = out_packet(&p, out, n, cap, &changed);
                    n = r == (size_t)-1 ? emit_raw(a->buf, a->len, out, n, cap) : r;
                    if (brk("cobs-trailing-01")) {
                        n = trailing_01(out, start, n, cap);
                    }
                }
            } else if (!pass && !(brk("heartbeat-undelimited") && a->len == 1u)) {
                n = emit_raw(a->buf, a->len, out, n, cap);
            }
            a->len = 0;
        } else if (a->len >= WIRE_CAP) {
            if (!pass) {
                n = emit_raw(a->buf, a->len, out, n, cap);
            }
            a->len = 0;
        }
    }
    return n;
}

size_t ccsim_filter_tick(uint64_t now_us, bool session, uint8_t *out, size_t cap)
{
    size_t n = 0;
    if (g_strict) {
        strict_tick(now_us, session);
    }
    while (g_ack_queued > 0u && n + 16u <= cap) {
        /* responses-best-effort: the ACK the host no longer sends, under a number of the filter's own */
        pkt_t ack;
        uint16_t acked = g_ack_queue[--g_ack_queued];
        memset(&ack, 0, sizeof(ack));
        ack.type = T_ACK;
        ack.seq = host_number_inject();
        ack.payload[0] = (uint8_t)(acked & 0xFFu);
        ack.payload[1] = (uint8_t)(acked >> 8);
        ack.payload_len = 2;
        n = emit(&ack, out, n, cap);
    }
    if (n > 0u) {
        return n;
    }
    if (brk("no-link-death") && session && now_us - g_last_host_us >= 100000u && cap >= 16u) {
        pkt_t hb;
        memset(&hb, 0, sizeof(hb));
        hb.type = T_HEARTBEAT;
        hb.seq = g_host_last; /* the last host number again: no gap */
        g_last_host_us = now_us;
        return emit(&hb, out, 0, cap);
    }
    return 0;
}
