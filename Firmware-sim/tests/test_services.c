/* Device-level tests of the v1 services. */
#include <string.h>

#include "cc_ids.h"
#include "cc_rawdelta.h"
#include "cc_test.h"
#include "cc_wire.h"
#include "harness.h"
#include "../core/cc_streams.h"

static void configure(harness_t *h, uint32_t call_id, const cc_input_config_t *cfg)
{
    Cameracontrol__V1__ConfigureRequest req = CAMERACONTROL__V1__CONFIGURE_REQUEST__INIT;
    Cameracontrol__V1__Config c = CAMERACONTROL__V1__CONFIG__INIT;
    Cameracontrol__V1__Thresholds t = CAMERACONTROL__V1__THRESHOLDS__INIT;
    t.light_press_on_mn = cfg->light_press_on_mn;
    t.light_press_off_mn = cfg->light_press_off_mn;
    t.full_press_on_mn = cfg->full_press_on_mn;
    t.full_press_off_mn = cfg->full_press_off_mn;
    t.min_stage_gap_mn = cfg->min_stage_gap_mn;
    c.thresholds = &t;
    c.sample_rate_hz = cfg->sample_rate_hz;
    c.slide_interval_ms = cfg->slide_interval_ms;
    c.debounce_ms = cfg->debounce_ms;
    req.config = &c;
    hx_request(h, call_id, CC_SERVICE_CONFIG_SERVICE, CC_METHOD_CONFIG_SERVICE_CONFIGURE, &req.base);
    hx_poll(h);
}

static void test_ping_echoes(void)
{
    harness_t *h = hx_setup();
    Cameracontrol__V1__PingRequest req = CAMERACONTROL__V1__PING_REQUEST__INIT;
    Cameracontrol__V1__PingResponse *resp;
    static uint8_t data[100];
    const hx_packet_t *p;
    size_t i;
    for (i = 0; i < sizeof data; i++) {
        data[i] = (uint8_t)i;   /* zeros included */
    }
    REQUIRE(hx_handshake(h, 0));
    req.payload.data = data;
    req.payload.len = sizeof data;
    hx_request(h, 2, CC_SERVICE_DEVICE_SERVICE, CC_METHOD_DEVICE_SERVICE_PING, &req.base);
    hx_poll(h);
    p = hx_find(h, CC_PKT_RESPONSE, 2);
    REQUIRE(p != NULL);
    resp = cameracontrol__v1__ping_response__unpack(NULL, p->payload_len, p->payload);
    REQUIRE(resp != NULL);
    CHECK_EQ(resp->payload.len, sizeof data);
    CHECK(resp->payload.len == sizeof data && memcmp(resp->payload.data, data, sizeof data) == 0);
    CHECK_EQ(resp->device_time_us, h->now_us);
    cameracontrol__v1__ping_response__free_unpacked(resp, NULL);
}

static void test_ping_too_big_for_arena_or_frame(void)
{
    harness_t *h = hx_setup();
    static uint8_t payload[CC_MAX_FRAME_BYTES];
    const hx_packet_t *p;
    REQUIRE(hx_handshake(h, 0));
    /* a request frame larger than max_frame_bytes never reaches dispatch */
    memset(payload, 0x55, sizeof payload);
    hx_send_packet(h, CC_PKT_REQUEST, 0, 3, CC_SERVICE_DEVICE_SERVICE, CC_METHOD_DEVICE_SERVICE_PING, payload,
                   sizeof payload);
    hx_poll(h);
    CHECK_EQ(cc_device_counters(&h->dev)->oversized_frames, 1);
    CHECK(hx_find(h, CC_PKT_ERROR, 3) == NULL);
    /* the largest ping that fits a request fits the response too (the response adds a timestamp) */
    {
        Cameracontrol__V1__PingRequest req = CAMERACONTROL__V1__PING_REQUEST__INIT;
        req.payload.data = payload;
        req.payload.len = CC_MAX_FRAME_BYTES - 4u - 2u - 3u - 2u;   /* envelope, tag+len, check */
        hx_request(h, 4, CC_SERVICE_DEVICE_SERVICE, CC_METHOD_DEVICE_SERVICE_PING, &req.base);
        hx_poll(h);
        p = hx_find(h, CC_PKT_ERROR, 4);
        REQUIRE(p != NULL);   /* payload + device_time_us no longer fits */
        CHECK_EQ(p->status, CC_STATUS_RESOURCE_EXHAUSTED);
    }
}

static void test_get_config_and_configure(void)
{
    harness_t *h = hx_setup();
    cc_input_config_t cfg = *cc_device_config(&h->dev);
    const hx_packet_t *p;
    Cameracontrol__V1__Config *got;
    REQUIRE(hx_handshake(h, 0));
    hx_request(h, 2, CC_SERVICE_CONFIG_SERVICE, CC_METHOD_CONFIG_SERVICE_GET_CONFIG, NULL);
    hx_poll(h);
    p = hx_find(h, CC_PKT_RESPONSE, 2);
    REQUIRE(p != NULL);
    got = cameracontrol__v1__config__unpack(NULL, p->payload_len, p->payload);
    REQUIRE(got != NULL && got->thresholds != NULL);
    CHECK_EQ(got->sample_rate_hz, cfg.sample_rate_hz);
    CHECK_EQ(got->thresholds->full_press_on_mn, cfg.full_press_on_mn);
    CHECK_EQ(got->debounce_ms, cfg.debounce_ms);
    cameracontrol__v1__config__free_unpacked(got, NULL);

    cfg.sample_rate_hz = 250u;
    cfg.full_press_on_mn += 100u;
    configure(h, 3, &cfg);
    p = hx_find(h, CC_PKT_RESPONSE, 3);
    REQUIRE(p != NULL);
    got = cameracontrol__v1__config__unpack(NULL, p->payload_len, p->payload);
    REQUIRE(got != NULL && got->thresholds != NULL);
    CHECK_EQ(got->sample_rate_hz, 250u);
    CHECK_EQ(got->thresholds->full_press_on_mn, cfg.full_press_on_mn);
    cameracontrol__v1__config__free_unpacked(got, NULL);
    CHECK_EQ(cc_device_config(&h->dev)->sample_rate_hz, 250u);
    CHECK_EQ(cc_device_config(&h->dev)->full_press_on_mn, cfg.full_press_on_mn);
}

/* Configure takes the sample rates Capabilities announces (cc_device_sample_rate_supported, the
 * same list) and no other: the rate is checked by cc_input_validate_config. */
static void test_configure_rates_are_the_announced_ones(void)
{
    uint32_t hz;
    unsigned accepted = 0;
    for (hz = 0; hz <= 2000u; hz++) {
        cc_input_config_t cfg;
        const char *why = NULL;
        cc_input_default_config(&cfg);
        cfg.sample_rate_hz = hz;
        CHECK((cc_input_validate_config(&cfg, 10000u, &why) == 0) == cc_device_sample_rate_supported(hz));
        accepted += cc_device_sample_rate_supported(hz) ? 1u : 0u;
    }
    CHECK_EQ(accepted, 4);
}

static void test_configure_rejects_invalid(void)
{
    harness_t *h = hx_setup();
    cc_input_config_t good = *cc_device_config(&h->dev);
    cc_input_config_t bad;
    const hx_packet_t *p;
    unsigned i;
    REQUIRE(hx_handshake(h, 0));
    for (i = 0; i < 12u; i++) {
        bad = good;
        switch (i) {
        case 0: bad.light_press_on_mn = 0; break;
        case 1: bad.light_press_off_mn = 0; break;
        case 2: bad.full_press_on_mn = 0; break;
        case 3: bad.full_press_off_mn = 0; break;
        case 4: bad.min_stage_gap_mn = 0; break;
        case 5: bad.sample_rate_hz = 0; break;
        case 6: bad.slide_interval_ms = 0; break;
        case 7: bad.debounce_ms = 0; break;
        case 8: bad.sample_rate_hz = 333u; break;
        case 9: bad.light_press_off_mn = bad.light_press_on_mn + 1u; break;
        case 10: bad.full_press_off_mn = bad.full_press_on_mn + 1u; break;
        default: bad.full_press_on_mn = h->info.force_max_mn + 1u; break;   /* above the announced range */
        }
        hx_clear(h);
        configure(h, 10u + i, &bad);
        p = hx_find(h, CC_PKT_ERROR, 10u + i);
        REQUIRE(p != NULL);
        CHECK_EQ(p->status, CC_STATUS_INVALID_ARGUMENT);
        {
            /* The reason, word for word: a zero member (cases 0-7) is refused by the check of its field,
             * whose text names it (cc_input_validate_config). */
            static const char *const wants[9] = {
                "thresholds must be non-zero", "thresholds must be non-zero", "thresholds must be non-zero",
                "thresholds must be non-zero", "thresholds must be non-zero", "sample_rate_hz must be 100/250/500/1000",
                "slide_interval_ms must be 1..1000", "debounce_ms must be 1..100", "sample_rate_hz must be 100/250/500/1000",
            };
            char text[CC_MAX_FRAME_BYTES + 1];
            memcpy(text, p->payload, p->payload_len);
            text[p->payload_len] = '\0';
            if (i < 9u) {
                CHECK(strcmp(text, wants[i]) == 0);
            } else {
                CHECK(strncmp(text, "need ", 5) == 0);   /* an ordering */
            }
        }
        CHECK(memcmp(cc_device_config(&h->dev), &good, sizeof good) == 0);   /* unchanged */
    }
    CHECK_EQ(cc_device_counters(&h->dev)->invalid_arguments, 12);
    /* a Configure without a config at all */
    hx_clear(h);
    hx_request(h, 30, CC_SERVICE_CONFIG_SERVICE, CC_METHOD_CONFIG_SERVICE_CONFIGURE, NULL);
    hx_poll(h);
    p = hx_find(h, CC_PKT_ERROR, 30);
    REQUIRE(p != NULL);
    CHECK_EQ(p->status, CC_STATUS_INVALID_ARGUMENT);
}

static void test_feedback_uses_hal(void)
{
    harness_t *h = hx_setup();
    Cameracontrol__V1__PlayHapticRequest hap = CAMERACONTROL__V1__PLAY_HAPTIC_REQUEST__INIT;
    Cameracontrol__V1__PlaySoundRequest snd = CAMERACONTROL__V1__PLAY_SOUND_REQUEST__INIT;
    Cameracontrol__V1__SetIndicatorRequest ind = CAMERACONTROL__V1__SET_INDICATOR_REQUEST__INIT;
    const hx_packet_t *p;
    REQUIRE(hx_handshake(h, 0));
    hap.pattern = CAMERACONTROL__V1__HAPTIC_PATTERN__HAPTIC_PATTERN_DETENT;
    hap.intensity_percent = 0;
    hx_request(h, 2, CC_SERVICE_FEEDBACK_SERVICE, CC_METHOD_FEEDBACK_SERVICE_PLAY_HAPTIC, &hap.base);
    snd.sound = CAMERACONTROL__V1__SOUND__SOUND_SHUTTER;
    hx_request(h, 3, CC_SERVICE_FEEDBACK_SERVICE, CC_METHOD_FEEDBACK_SERVICE_PLAY_SOUND, &snd.base);
    ind.mode = CAMERACONTROL__V1__INDICATOR_MODE__INDICATOR_MODE_BLINK;
    ind.rgb = 0x00FF00u;
    hx_request(h, 4, CC_SERVICE_FEEDBACK_SERVICE, CC_METHOD_FEEDBACK_SERVICE_SET_INDICATOR, &ind.base);
    hx_poll(h);
    CHECK(hx_find(h, CC_PKT_RESPONSE, 2) != NULL);
    CHECK(hx_find(h, CC_PKT_RESPONSE, 3) != NULL);
    CHECK(hx_find(h, CC_PKT_RESPONSE, 4) != NULL);
    CHECK_EQ(h->haptic_calls, 1);
    CHECK_EQ(h->last_haptic_pattern, CAMERACONTROL__V1__HAPTIC_PATTERN__HAPTIC_PATTERN_DETENT);
    CHECK_EQ(h->last_haptic_intensity, 100);   /* 0 means the device default */
    CHECK_EQ(h->sound_calls, 1);
    CHECK_EQ(h->last_sound, CAMERACONTROL__V1__SOUND__SOUND_SHUTTER);
    CHECK_EQ(h->indicator_calls, 1);
    CHECK_EQ(h->last_indicator_rgb, 0x00FF00u);
    /* invalid values */
    hx_clear(h);
    hap.intensity_percent = 101;
    hx_request(h, 5, CC_SERVICE_FEEDBACK_SERVICE, CC_METHOD_FEEDBACK_SERVICE_PLAY_HAPTIC, &hap.base);
    snd.sound = (Cameracontrol__V1__Sound)9;
    hx_request(h, 6, CC_SERVICE_FEEDBACK_SERVICE, CC_METHOD_FEEDBACK_SERVICE_PLAY_SOUND, &snd.base);
    ind.rgb = 0x1000000u;
    hx_request(h, 7, CC_SERVICE_FEEDBACK_SERVICE, CC_METHOD_FEEDBACK_SERVICE_SET_INDICATOR, &ind.base);
    hx_poll(h);
    p = hx_find(h, CC_PKT_ERROR, 5);
    REQUIRE(p != NULL);
    CHECK_EQ(p->status, CC_STATUS_INVALID_ARGUMENT);
    p = hx_find(h, CC_PKT_ERROR, 6);
    REQUIRE(p != NULL);
    CHECK_EQ(p->status, CC_STATUS_INVALID_ARGUMENT);
    p = hx_find(h, CC_PKT_ERROR, 7);
    REQUIRE(p != NULL);
    CHECK_EQ(p->status, CC_STATUS_INVALID_ARGUMENT);
    CHECK_EQ(h->haptic_calls, 1);
    CHECK_EQ(h->sound_calls, 1);
    CHECK_EQ(h->indicator_calls, 1);
    /* intensity above 100 is an invalid argument with any pattern, one the actuator cannot play too (§7) */
    hx_clear(h);
    h->info.haptic_patterns = 1u << CAMERACONTROL__V1__HAPTIC_PATTERN__HAPTIC_PATTERN_DETENT;
    hap.pattern = CAMERACONTROL__V1__HAPTIC_PATTERN__HAPTIC_PATTERN_CLICK;
    hx_request(h, 8, CC_SERVICE_FEEDBACK_SERVICE, CC_METHOD_FEEDBACK_SERVICE_PLAY_HAPTIC, &hap.base);
    hap.intensity_percent = 50;
    hx_request(h, 9, CC_SERVICE_FEEDBACK_SERVICE, CC_METHOD_FEEDBACK_SERVICE_PLAY_HAPTIC, &hap.base);
    hx_poll(h);
    p = hx_find(h, CC_PKT_ERROR, 8);
    REQUIRE(p != NULL);
    CHECK_EQ(p->status, CC_STATUS_INVALID_ARGUMENT);
    p = hx_find(h, CC_PKT_ERROR, 9);
    REQUIRE(p != NULL);
    CHECK_EQ(p->status, CC_STATUS_FAILED_PRECONDITION);   /* valid, but not playable */
    CHECK_EQ(h->haptic_calls, 1);
}

static void test_feedback_without_hal(void)
{
    harness_t *h = hx_setup_without_feedback();
    Cameracontrol__V1__PlayHapticRequest hap = CAMERACONTROL__V1__PLAY_HAPTIC_REQUEST__INIT;
    const hx_packet_t *p;
    REQUIRE(hx_handshake(h, 0));
    hap.pattern = CAMERACONTROL__V1__HAPTIC_PATTERN__HAPTIC_PATTERN_DETENT;
    hx_request(h, 2, CC_SERVICE_FEEDBACK_SERVICE, CC_METHOD_FEEDBACK_SERVICE_PLAY_HAPTIC, &hap.base);
    hx_request(h, 3, CC_SERVICE_FEEDBACK_SERVICE, CC_METHOD_FEEDBACK_SERVICE_PLAY_SOUND, NULL);
    hx_request(h, 4, CC_SERVICE_FEEDBACK_SERVICE, CC_METHOD_FEEDBACK_SERVICE_SET_INDICATOR, NULL);
    hx_poll(h);
    p = hx_find(h, CC_PKT_ERROR, 2);
    REQUIRE(p != NULL);
    CHECK_EQ(p->status, CC_STATUS_FAILED_PRECONDITION);
    CHECK(p->payload_len == 18 && memcmp(p->payload, "no haptic actuator", 18) == 0);
    p = hx_find(h, CC_PKT_ERROR, 3);
    REQUIRE(p != NULL);
    CHECK_EQ(p->status, CC_STATUS_FAILED_PRECONDITION);
    p = hx_find(h, CC_PKT_ERROR, 4);
    REQUIRE(p != NULL);
    CHECK_EQ(p->status, CC_STATUS_FAILED_PRECONDITION);
    CHECK_EQ(cc_device_counters(&h->dev)->unimplemented_calls, 0);
}

/* hx_setup boots the device at 1 s of its clock: uptime_us counts from there
 * (a board whose clock starts at boot: tests/board/test_board_core.c) */
#define BOOTED_AT_US 1000000u

static void test_counters_get_and_reset(void)
{
    harness_t *h = hx_setup();
    const hx_packet_t *p;
    Cameracontrol__V1__Counters *c;
    static const uint8_t garbage[] = {0x07, 0x41, 0x00};
    REQUIRE(hx_handshake(h, 0));
    hx_send_raw(h, garbage, sizeof garbage);
    hx_request(h, 2, CC_SERVICE_DIAGNOSTICS_SERVICE, CC_METHOD_DIAGNOSTICS_SERVICE_GET_COUNTERS, NULL);
    hx_poll(h);
    p = hx_find(h, CC_PKT_RESPONSE, 2);
    REQUIRE(p != NULL);
    c = cameracontrol__v1__counters__unpack(NULL, p->payload_len, p->payload);
    REQUIRE(c != NULL);
    CHECK_EQ(c->framing_errors, 1);
    CHECK_EQ(c->frames_received, 3);   /* handshake, the ACK of its response, this request */
    CHECK_EQ(c->uptime_us, h->now_us - BOOTED_AT_US);
    cameracontrol__v1__counters__free_unpacked(c, NULL);
    hx_request(h, 3, CC_SERVICE_DIAGNOSTICS_SERVICE, CC_METHOD_DIAGNOSTICS_SERVICE_RESET_COUNTERS, NULL);
    hx_poll(h);
    p = hx_find(h, CC_PKT_RESPONSE, 3);
    REQUIRE(p != NULL);
    c = cameracontrol__v1__counters__unpack(NULL, p->payload_len, p->payload);
    REQUIRE(c != NULL);
    CHECK_EQ(c->framing_errors, 1);   /* the values that were cleared */
    cameracontrol__v1__counters__free_unpacked(c, NULL);
    CHECK_EQ(cc_device_counters(&h->dev)->framing_errors, 0);
    CHECK(cc_device_counters(&h->dev)->frames_received <= 1u);
}

/* Counters.uptime_us is the time since boot, also on a HAL whose clock runs on
 * through a reset (the simulator's): a reboot starts it again, so a host can
 * tell a device that restarted (the conformance suite, counter expectations). */
static uint64_t uptime_now(harness_t *h, uint32_t call_id)
{
    const hx_packet_t *p;
    Cameracontrol__V1__Counters *c;
    uint64_t uptime;
    hx_request(h, call_id, CC_SERVICE_DIAGNOSTICS_SERVICE, CC_METHOD_DIAGNOSTICS_SERVICE_GET_COUNTERS, NULL);
    hx_poll(h);
    p = hx_find(h, CC_PKT_RESPONSE, call_id);
    if (p == NULL) {
        return UINT64_MAX;
    }
    c = cameracontrol__v1__counters__unpack(NULL, p->payload_len, p->payload);
    if (c == NULL) {
        return UINT64_MAX;
    }
    uptime = c->uptime_us;
    cameracontrol__v1__counters__free_unpacked(c, NULL);
    return uptime;
}

static void test_uptime_counts_from_boot(void)
{
    harness_t *h = hx_setup();
    h->now_us += 5000000u;
    REQUIRE(hx_handshake(h, 0));
    CHECK_EQ(uptime_now(h, 2), 5000000u);
    hx_reboot(h);                /* the harness's clock runs on: 6 s */
    h->now_us += 250000u;
    REQUIRE(hx_handshake(h, 0));
    CHECK_EQ(uptime_now(h, 2), 250000u);
}

/* respond_counters encodes Counters itself: its bytes must be what protobuf-c
 * packs for the same values (canonical field order, zeros left out, shortest
 * varints), and carry the values the device held. */
#define COUNTER_VALUE(n) ((n) % 4u == 0u ? 0u : (n) % 4u == 1u ? (n) : (n) % 4u == 2u ? 300u + (n) : 0xFFFFFFF0u + (n))
static void test_counters_bytes_are_protobuf_c_s(void)
{
    harness_t *h = hx_setup();
    const hx_packet_t *p;
    Cameracontrol__V1__Counters *m;
    static uint8_t repacked[256];
    size_t len;
    uint32_t n = 0;
    REQUIRE(hx_handshake(h, 0));
    h->now_us = 0x123456789ull;   /* beyond 32 bits */
    /* zeros (left out), one-byte, two-byte and five-byte varints */
#define SET_COUNTER(name) h->dev.counters.name = COUNTER_VALUE(n); n++;
    CC_COUNTER_FIELDS(SET_COUNTER)
#undef SET_COUNTER
    hx_request(h, 2, CC_SERVICE_DIAGNOSTICS_SERVICE, CC_METHOD_DIAGNOSTICS_SERVICE_GET_COUNTERS, NULL);
    hx_poll(h);
    p = hx_find(h, CC_PKT_RESPONSE, 2);
    REQUIRE(p != NULL);
    m = cameracontrol__v1__counters__unpack(NULL, p->payload_len, p->payload);
    REQUIRE(m != NULL);
    CHECK_EQ(m->uptime_us, 0x123456789ull - BOOTED_AT_US);
    /* the first four (frames and bytes received and sent) moved with the request itself */
    n = 0;
#define CHECK_COUNTER(name) if (n >= 4u) { CHECK_EQ(m->name, COUNTER_VALUE(n)); } n++;
    CC_COUNTER_FIELDS(CHECK_COUNTER)
#undef CHECK_COUNTER
    REQUIRE(cameracontrol__v1__counters__get_packed_size(m) <= sizeof repacked);
    len = cameracontrol__v1__counters__pack(m, repacked);
    CHECK_EQ(p->payload_len, len);
    CHECK(p->payload_len == len && memcmp(p->payload, repacked, len) == 0);
    cameracontrol__v1__counters__free_unpacked(m, NULL);
}
#undef COUNTER_VALUE

/* The device writes its messages itself (core/cc_pbw.c): each must be byte
 * for byte what protobuf-c packs for the same message. */
static bool repacks_identically(const ProtobufCMessageDescriptor *d, const hx_packet_t *p)
{
    static uint8_t repacked[4096];
    ProtobufCMessage *m;
    size_t len = 0;
    bool same;
    if (p == NULL) {
        return false;
    }
    m = protobuf_c_message_unpack(d, NULL, p->payload_len, p->payload);
    if (m == NULL) {
        return false;
    }
    if (protobuf_c_message_get_packed_size(m) <= sizeof repacked) {
        len = protobuf_c_message_pack(m, repacked);
    }
    same = len == p->payload_len && memcmp(repacked, p->payload, len) == 0;
    protobuf_c_message_free_unpacked(m, NULL);
    return same;
}

static void test_written_messages_are_protobuf_c_s(void)
{
    harness_t *h = hx_setup();
    Cameracontrol__V1__HandshakeRequest hs = CAMERACONTROL__V1__HANDSHAKE_REQUEST__INIT;
    Cameracontrol__V1__ProtocolVersion v = CAMERACONTROL__V1__PROTOCOL_VERSION__INIT;
    Cameracontrol__V1__PingRequest ping = CAMERACONTROL__V1__PING_REQUEST__INIT;
    Cameracontrol__V1__PlayHapticRequest haptic = CAMERACONTROL__V1__PLAY_HAPTIC_REQUEST__INIT;
    Cameracontrol__V1__StreamRawSamplesRequest raw = CAMERACONTROL__V1__STREAM_RAW_SAMPLES_REQUEST__INIT;
    static uint8_t data[150];   /* a two-byte length */
    const hx_packet_t *p;
    size_t i;

#if CC_MAX_FRAME_BYTES >= 512u
    /* a long model name makes the identity longer than 127 bytes (a two-byte length) */
    h->info.model = "a model name long enough that the identity needs two bytes of length, "
                    "which moves the embedded message's body up by one byte";
#endif
    h->now_us = 0x123456789ull;
    v.major = 1u;
    v.minor = 1u;
    hs.host_version = &v;
    hs.host_name = "tests";
    h->host_sequence = 0;
    hx_request(h, 1u, CC_SERVICE_DEVICE_SERVICE, CC_METHOD_DEVICE_SERVICE_HANDSHAKE, &hs.base);
    hx_poll(h);
    p = hx_find(h, CC_PKT_RESPONSE, 1u);
    REQUIRE(p != NULL);
#if CC_MAX_FRAME_BYTES >= 512u
    CHECK(p->payload_len > 128u);
#endif
    CHECK(repacks_identically(&cameracontrol__v1__handshake_response__descriptor, p));
    hx_clear(h);

    for (i = 0; i < sizeof data; i++) {
        data[i] = (uint8_t)i;
    }
    ping.payload.data = data;
    ping.payload.len = CC_MAX_FRAME_BYTES >= 512u ? sizeof data : 40u;   /* a two-byte length where it fits */
    hx_request(h, 2u, CC_SERVICE_DEVICE_SERVICE, CC_METHOD_DEVICE_SERVICE_PING, &ping.base);
    hx_poll(h);
    CHECK(repacks_identically(&cameracontrol__v1__ping_response__descriptor, hx_find(h, CC_PKT_RESPONSE, 2u)));
    ping.payload.len = 0;   /* an empty payload is left out */
    hx_request(h, 3u, CC_SERVICE_DEVICE_SERVICE, CC_METHOD_DEVICE_SERVICE_PING, &ping.base);
    hx_poll(h);
    CHECK(repacks_identically(&cameracontrol__v1__ping_response__descriptor, hx_find(h, CC_PKT_RESPONSE, 3u)));

    hx_request(h, 4u, CC_SERVICE_CONFIG_SERVICE, CC_METHOD_CONFIG_SERVICE_GET_CONFIG, NULL);
    hx_poll(h);
    CHECK(repacks_identically(&cameracontrol__v1__config__descriptor, hx_find(h, CC_PKT_RESPONSE, 4u)));

    haptic.pattern = CAMERACONTROL__V1__HAPTIC_PATTERN__HAPTIC_PATTERN_CLICK;
    hx_request(h, 5u, CC_SERVICE_FEEDBACK_SERVICE, CC_METHOD_FEEDBACK_SERVICE_PLAY_HAPTIC, &haptic.base);
    hx_poll(h);
    CHECK(repacks_identically(&cameracontrol__v1__feedback_response__descriptor, hx_find(h, CC_PKT_RESPONSE, 5u)));

    /* stream messages: an input event and a raw batch */
    hx_request(h, 6u, CC_SERVICE_INPUT_SERVICE, CC_METHOD_INPUT_SERVICE_STREAM_INPUT_EVENTS, NULL);
    raw.samples_per_batch = 5u;
    hx_request(h, 7u, CC_SERVICE_INPUT_SERVICE, CC_METHOD_INPUT_SERVICE_STREAM_RAW_SAMPLES, &raw.base);
    hx_poll(h);
    hx_clear(h);
    h->reading.touched = true;
    h->reading.force_raw_mn = 150;
    h->reading.position = 700u;
    for (i = 0; i < 20u; i++) {
        hx_advance_alive(h, 1000u);
    }
    p = NULL;
    for (i = 0; i < h->npackets; i++) {
        if (h->packets[i].type == CC_PKT_STREAM_MESSAGE && h->packets[i].call_id == 6u) {
            p = &h->packets[i];
            break;
        }
    }
    CHECK(repacks_identically(&cameracontrol__v1__input_event__descriptor, p));
    p = NULL;
    for (i = 0; i < h->npackets; i++) {
        if (h->packets[i].type == CC_PKT_STREAM_MESSAGE && h->packets[i].call_id == 7u) {
            p = &h->packets[i];
            break;
        }
    }
    CHECK(repacks_identically(&cameracontrol__v1__raw_sample_batch__descriptor, p));
}

static void test_raw_samples_batches(void)
{
    harness_t *h = hx_setup();
    Cameracontrol__V1__StreamRawSamplesRequest req = CAMERACONTROL__V1__STREAM_RAW_SAMPLES_REQUEST__INIT;
    Cameracontrol__V1__RawSampleBatch *b;
    const hx_packet_t *p;
    REQUIRE(hx_handshake(h, 0));
    req.samples_per_batch = 5;
    hx_request(h, 2, CC_SERVICE_INPUT_SERVICE, CC_METHOD_INPUT_SERVICE_STREAM_RAW_SAMPLES, &req.base);
    hx_poll(h);
    CHECK_EQ(cc_device_calls_in_flight(&h->dev), 1);
    h->reading.touched = true;
    h->reading.position = 0x1234u;
    hx_heartbeat(h);
    hx_advance(h, 10000);   /* 10 samples at 1 kHz */
    CHECK_EQ(hx_count(h, CC_PKT_STREAM_MESSAGE, 2), 2);
    p = hx_find(h, CC_PKT_STREAM_MESSAGE, 2);
    REQUIRE(p != NULL);
    CHECK_EQ(p->flags & CC_WIRE_FLAG_RELIABLE, 0);
    b = cameracontrol__v1__raw_sample_batch__unpack(NULL, p->payload_len, p->payload);
    REQUIRE(b != NULL);
    CHECK_EQ(b->samples.len, 5u * 4u);
    CHECK_EQ(b->sample_interval_us, 1000);
    CHECK_EQ(b->dropped_before, 0);
    if (b->samples.len >= 4u) {
        uint32_t rec = (uint32_t)b->samples.data[0] | ((uint32_t)b->samples.data[1] << 8)
                       | ((uint32_t)b->samples.data[2] << 16) | ((uint32_t)b->samples.data[3] << 24);
        CHECK_EQ((rec >> 16) & 0x7FFFu, 0x1234u);
        CHECK((rec & 0x80000000u) != 0u);
    }
    cameracontrol__v1__raw_sample_batch__free_unpacked(b, NULL);

    /* default batch size */
    hx_clear(h);
    req.samples_per_batch = 0;
    hx_request(h, 3, CC_SERVICE_INPUT_SERVICE, CC_METHOD_INPUT_SERVICE_STREAM_RAW_SAMPLES, &req.base);
    hx_heartbeat(h);
    hx_advance(h, 30000);
    p = hx_find(h, CC_PKT_STREAM_MESSAGE, 3);
    REQUIRE(p != NULL);
    b = cameracontrol__v1__raw_sample_batch__unpack(NULL, p->payload_len, p->payload);
    REQUIRE(b != NULL);
    {
        /* the default, unless the frame is too small for it */
        size_t fit = (CC_LINK_PAYLOAD_CAP_ANY - 24u) / 4u;
        size_t expected = CC_RAW_DEFAULT_SAMPLES_PER_BATCH < fit ? CC_RAW_DEFAULT_SAMPLES_PER_BATCH : fit;
        CHECK_EQ(b->samples.len, expected * 4u);
    }
    cameracontrol__v1__raw_sample_batch__free_unpacked(b, NULL);
}

static void test_raw_samples_dropped_when_tx_full(void)
{
    harness_t *h = hx_setup();
    Cameracontrol__V1__StreamRawSamplesRequest req = CAMERACONTROL__V1__STREAM_RAW_SAMPLES_REQUEST__INIT;
    Cameracontrol__V1__RawSampleBatch *b;
    const hx_packet_t *p;
    size_t i;
    REQUIRE(hx_handshake(h, 0));
    req.samples_per_batch = 20;
    hx_request(h, 2, CC_SERVICE_INPUT_SERVICE, CC_METHOD_INPUT_SERVICE_STREAM_RAW_SAMPLES, &req.base);
    hx_poll(h);
    h->tx_blocked = true;   /* the UART stalls: the tx buffer fills */
    for (i = 0; i < 100u; i++) {
        hx_heartbeat(h);
        hx_advance(h, 20000);
    }
    CHECK(cc_device_counters(&h->dev)->tx_dropped > 0u);
    CHECK(cc_link_bulk_free(&h->dev.link) < 200u);   /* raw batches fill the bulk queue */
    h->tx_blocked = false;
    hx_clear(h);
    hx_heartbeat(h);
    hx_advance(h, 60000);
    CHECK_EQ(h->host_decode_errors, 0);
    /* the first batch after the stall says how many samples were dropped */
    {
        uint32_t dropped = 0;
        for (i = 0; i < h->npackets; i++) {
            p = &h->packets[i];
            if (p->type != CC_PKT_STREAM_MESSAGE || p->call_id != 2u) {
                continue;
            }
            b = cameracontrol__v1__raw_sample_batch__unpack(NULL, p->payload_len, p->payload);
            REQUIRE(b != NULL);
            dropped += b->dropped_before;
            cameracontrol__v1__raw_sample_batch__free_unpacked(b, NULL);
        }
        CHECK(dropped > 0u);
        CHECK_EQ(dropped % 20u, 0);
    }
    CHECK(cc_device_session_active(&h->dev));
}

static void test_event_stream_reaches_every_stream(void)
{
    harness_t *h = hx_setup();
    REQUIRE(hx_handshake(h, 0));
    hx_request(h, 2, CC_SERVICE_INPUT_SERVICE, CC_METHOD_INPUT_SERVICE_STREAM_INPUT_EVENTS, NULL);
    hx_request(h, 3, CC_SERVICE_INPUT_SERVICE, CC_METHOD_INPUT_SERVICE_STREAM_INPUT_EVENTS, NULL);
    hx_poll(h);
    h->remote_clicks = 1;
    hx_advance(h, 2000);
    CHECK_EQ(hx_count(h, CC_PKT_STREAM_MESSAGE, 2), 1);
    CHECK_EQ(hx_count(h, CC_PKT_STREAM_MESSAGE, 3), 1);
    {
        const hx_packet_t *p = hx_find(h, CC_PKT_STREAM_MESSAGE, 2);
        Cameracontrol__V1__InputEvent *ev;
        REQUIRE(p != NULL);
        CHECK(p->flags & CC_WIRE_FLAG_RELIABLE);
        ev = cameracontrol__v1__input_event__unpack(NULL, p->payload_len, p->payload);
        REQUIRE(ev != NULL);
        CHECK_EQ(ev->kind, CAMERACONTROL__V1__INPUT_EVENT_KIND__INPUT_EVENT_KIND_REMOTE_CLICK);
        CHECK_EQ(ev->source, CAMERACONTROL__V1__INPUT_SOURCE__INPUT_SOURCE_REMOTE);
        CHECK(ev->event_number >= 1u);
        cameracontrol__v1__input_event__free_unpacked(ev, NULL);
    }
}

static void test_raw_record_layout(void)
{
    /* Tests/Vectors/frames.json "raw-sample-batch": 00000000, 78000082, ffffffff */
    static const uint8_t expected[12] = {0x00, 0x00, 0x00, 0x00, 0x78, 0x00, 0x00, 0x82, 0xFF, 0xFF, 0xFF, 0xFF};
    cc_raw_sample_t s[3];
    uint8_t out[12];
    memset(s, 0, sizeof s);
    s[1].force_mn = 120;
    s[1].position = 512;
    s[1].touched = true;
    s[2].force_mn = 65535;
    s[2].position = 0xFFFF;   /* beyond 15 bits: saturates */
    s[2].touched = true;
    cc_streams_pack_record(&s[0], out);
    cc_streams_pack_record(&s[1], out + 4);
    cc_streams_pack_record(&s[2], out + 8);
    CHECK(memcmp(out, expected, sizeof expected) == 0);
}

static void test_raw_delta_coding(void)
{
    /* Tests/Vectors/frames.json "raw-sample-batch-delta": the records of "raw-sample-batch", delta-coded */
    static const uint8_t records[12] = {0x00, 0x00, 0x00, 0x00, 0x78, 0x00, 0x00, 0x82, 0xFF, 0xFF, 0xFF, 0xFF};
    static const uint8_t expected[11] = {0x00, 0xC3, 0x07, 0x80, 0x08, 0xBB, 0xF8, 0x1F, 0xFE, 0xF7, 0x03};
    static const uint8_t still[8] = {0x10, 0x00, 0x00, 0x80, 0x0F, 0x00, 0x00, 0x80};   /* 16 mN, then 15 mN */
    uint8_t out[16];
    CHECK_EQ(cc_rawdelta_encode(records, 3u, out, sizeof out), sizeof expected);
    CHECK(memcmp(out, expected, sizeof expected) == 0);
    CHECK_EQ(cc_rawdelta_encode(records, 3u, out, sizeof expected - 1u), 0u);   /* does not fit: 0 */
    CHECK_EQ(cc_rawdelta_encode(still, 2u, out, sizeof out), 3u);               /* 81 01 | 05 */
    CHECK(out[0] == 0x81u && out[1] == 0x01u && out[2] == 0x05u);
}

/* One raw batch of 25 samples on call 2 at protocol minor `minor` while the force ramps up. */
static Cameracontrol__V1__RawSampleBatch *raw_batch_at(harness_t *h, uint32_t minor)
{
    Cameracontrol__V1__StreamRawSamplesRequest req = CAMERACONTROL__V1__STREAM_RAW_SAMPLES_REQUEST__INIT;
    const hx_packet_t *p;
    uint32_t i;
    if (!hx_handshake(h, minor)) {
        return NULL;
    }
    req.samples_per_batch = 25;
    hx_request(h, 2, CC_SERVICE_INPUT_SERVICE, CC_METHOD_INPUT_SERVICE_STREAM_RAW_SAMPLES, &req.base);
    hx_poll(h);
    h->reading.touched = true;
    h->reading.position = 300u;
    hx_heartbeat(h);
    for (i = 0; i < 25u; i++) {
        h->reading.force_raw_mn = (int32_t)(400u + 7u * i);
        hx_advance(h, 1000);
    }
    p = hx_find(h, CC_PKT_STREAM_MESSAGE, 2);
    return p == NULL ? NULL : cameracontrol__v1__raw_sample_batch__unpack(NULL, p->payload_len, p->payload);
}

static void test_raw_samples_delta_from_v12(void)
{
    Cameracontrol__V1__RawSampleBatch *old;
    Cameracontrol__V1__RawSampleBatch *b;
    if (CC_MAX_FRAME_BYTES < 256u) {
        /* a 25-sample batch of 4-byte records does not fit a smaller frame (the device sends fewer) */
        return;
    }
    old = raw_batch_at(hx_setup(), 1u);
    b = raw_batch_at(hx_setup(), 2u);
    REQUIRE(old != NULL && b != NULL);
    /* a 1.1 session gets the records, a 1.2 session the same samples delta-coded, shorter */
    CHECK_EQ(old->samples.len, 25u * 4u);
    CHECK_EQ(old->delta_samples.len, 0u);
    CHECK_EQ(b->samples.len, 0u);
    CHECK(b->delta_samples.len > 0u && b->delta_samples.len < 25u * 4u);
    {
        uint8_t again[100];
        size_t n = cc_rawdelta_encode(old->samples.data, 25u, again, sizeof again);
        CHECK_EQ(n, b->delta_samples.len);
        CHECK(n == b->delta_samples.len && memcmp(again, b->delta_samples.data, n) == 0);
    }
    cameracontrol__v1__raw_sample_batch__free_unpacked(old, NULL);
    cameracontrol__v1__raw_sample_batch__free_unpacked(b, NULL);
}


/* The levels `pattern` gives sample i (position 100 + i): the buttons' raw
 * levels read with it. */
typedef uint32_t (*levels_pattern_t)(uint32_t i);

static uint32_t held_then_bouncing(uint32_t i)
{
    if (i < 3u) {
        return 0u;
    }
    if (i < 6u) {
        return (i & 1u) != 0u ? CC_BUTTON_VOLUME_UP : 0u;   /* chatter: up, down, up */
    }
    if (i < 40u) {
        return CC_BUTTON_VOLUME_UP | (i >= 30u ? CC_BUTTON_ACTION : 0u);   /* held across a batch boundary */
    }
    return 0u;
}

static uint32_t chattering(uint32_t i)
{
    return (i & 1u) != 0u ? CC_BUTTON_VOLUME_DOWN : 0u;   /* a level change every sample */
}

/* Streams `n` samples with the levels of `pattern` (1.1 session, records) and
 * checks every batch's button_levels against them, sample by sample;
 * returns the batches seen (0 on a failed check). */
static size_t check_button_levels(uint32_t n, levels_pattern_t pattern, size_t *most_entries)
{
    harness_t *h = hx_setup();
    Cameracontrol__V1__StreamRawSamplesRequest req = CAMERACONTROL__V1__STREAM_RAW_SAMPLES_REQUEST__INIT;
    size_t k;
    size_t batches = 0;
    uint32_t i;
    uint32_t seen = 0;
    *most_entries = 0;
    if (!hx_handshake(h, 1u)) {
        return 0;
    }
    req.samples_per_batch = 0;   /* the device's choice: 25, fewer in a small frame */
    hx_request(h, 2, CC_SERVICE_INPUT_SERVICE, CC_METHOD_INPUT_SERVICE_STREAM_RAW_SAMPLES, &req.base);
    hx_poll(h);
    h->reading.touched = true;
    for (i = 0; i < n; i++) {
        h->reading.position = (uint16_t)(100u + i);
        h->buttons = pattern(i);
        hx_advance_alive(h, 1000);
    }
    for (k = 0; k < h->npackets; k++) {
        const hx_packet_t *p = &h->packets[k];
        Cameracontrol__V1__RawSampleBatch *b;
        uint32_t levels = 0u;
        size_t next = 0;
        size_t entry = 0;
        size_t s;
        if (p->type != CC_PKT_STREAM_MESSAGE || p->call_id != 2u) {
            continue;
        }
        b = cameracontrol__v1__raw_sample_batch__unpack(NULL, p->payload_len, p->payload);
        if (b == NULL) {
            CHECK(b != NULL);
            return 0;
        }
        batches++;
        if (b->n_button_levels > *most_entries) {
            *most_entries = b->n_button_levels;
        }
        for (s = 0; s < b->samples.len / 4u; s++) {
            uint32_t position = ((uint32_t)b->samples.data[s * 4u + 2u] | (uint32_t)b->samples.data[s * 4u + 3u] << 8) & 0x7FFFu;
            /* the entries: in order, each a change, the first at 0 only when not all up */
            while (entry < b->n_button_levels && b->button_levels[entry] >> 4 == s) {
                uint32_t now = b->button_levels[entry] & 15u;
                CHECK(now != levels);
                CHECK(b->button_levels[entry] >> 4 >= next);
                levels = now;
                next = s + 1u;
                entry++;
            }
            if (position >= 100u) {
                CHECK_EQ(levels, pattern(position - 100u));
                seen++;
            }
        }
        CHECK_EQ(entry, b->n_button_levels);   /* none past the last sample */
        cameracontrol__v1__raw_sample_batch__free_unpacked(b, NULL);
    }
    CHECK(seen + 25u >= n && seen > 0u);   /* every sample but the batch still filling */
    return batches;
}

static void test_raw_samples_carry_button_levels(void)
{
    size_t most = 0;
    /* chatter, a hold across batches (the next batch starts with its levels), a second button, release */
    CHECK(check_button_levels(60u, held_then_bouncing, &most) >= 2u);
    CHECK(most >= 1u && most <= CC_RAW_MAX_BUTTON_CHANGES);
    /* a change every sample: batches end early at CC_RAW_MAX_BUTTON_CHANGES entries, none lost */
    CHECK(check_button_levels(60u, chattering, &most) > 60u / 25u + 1u);
    CHECK_EQ(most, CC_RAW_MAX_BUTTON_CHANGES);
}

const cc_test_case_t cc_tests_services[] = {
    {"raw_record_layout", test_raw_record_layout},
    {"raw_delta_coding", test_raw_delta_coding},
    {"raw_samples_delta_from_v12", test_raw_samples_delta_from_v12},
    {"raw_samples_carry_button_levels", test_raw_samples_carry_button_levels},
    {"ping_echoes", test_ping_echoes},
    {"ping_too_big_for_arena_or_frame", test_ping_too_big_for_arena_or_frame},
    {"get_config_and_configure", test_get_config_and_configure},
    {"configure_rejects_invalid", test_configure_rejects_invalid},
    {"configure_rates_are_the_announced_ones", test_configure_rates_are_the_announced_ones},
    {"feedback_uses_hal", test_feedback_uses_hal},
    {"feedback_without_hal", test_feedback_without_hal},
    {"counters_get_and_reset", test_counters_get_and_reset},
    {"uptime_counts_from_boot", test_uptime_counts_from_boot},
    {"counters_bytes_are_protobuf_c_s", test_counters_bytes_are_protobuf_c_s},
    {"written_messages_are_protobuf_c_s", test_written_messages_are_protobuf_c_s},
    {"raw_samples_batches", test_raw_samples_batches},
    {"raw_samples_dropped_when_tx_full", test_raw_samples_dropped_when_tx_full},
    {"event_stream_reaches_every_stream", test_event_stream_reaches_every_stream},
};
const size_t cc_tests_services_count = CC_TEST_COUNT(cc_tests_services);
