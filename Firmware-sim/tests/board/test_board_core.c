/*
 * The core as a board's own image builds it, with what the board has and
 * lacks known at compile time (core/include/cc_hal.h): built once with each
 * port's BOARD_CORE_DEFS (`make board-cores`: port/microbit's and
 * port/stm32f4's). Both lack a haptic actuator, a speaker, a remote and a
 * shutter switch (CC_HAL_NO_*); the micro:bit has a settings store
 * (CC_HAL_WITH_STORE), the STM32F4 none (CC_HAL_NO_STORE). The harness's HAL
 * has them all the same, and the tests feed remote clicks and the shutter
 * switch's bit: the device must act as if it had none of what the switches
 * name, with the same answers as a device whose HAL has none
 * (tests/test_services.c, feedback_without_hal; tests/test_settings.c,
 * without_a_store_settings_last_until_a_reset), and keep everything else.
 * Each check is under its own switch (#if), so the file also builds with one
 * switch alone (`make board-core-variants`), where the parts the switch does
 * not name must work as with the full core.
 * Its own runner: the last line is "N passed, M failed".
 */
#include <stdio.h>
#include <string.h>

#include "cc_ids.h"
#include "cc_pb.h"
#include "cc_settings.h"
#include "cc_test.h"
#include "cc_wire.h"
#include "harness.h"

#if !defined(CC_HAL_NO_HAPTIC) && !defined(CC_HAL_NO_SOUND) && !defined(CC_HAL_NO_REMOTE) \
    && !defined(CC_HAL_NO_SHUTTER_SWITCH) && !defined(CC_HAL_WITH_STORE) && !defined(CC_HAL_NO_STORE) \
    && !defined(CC_HAL_WITH_SENSORS) && !defined(CC_HAL_WITH_OVERRUNS) && !defined(CC_HAL_BOARD_INFO) \
    && !defined(CC_HAL_WITH_INDICATOR) && !defined(CC_HAL_CLOCK_FROM_BOOT)
#error "build with a board's BOARD_CORE_DEFS or one of its switches (Makefile: board-cores, board-core-variants)"
#endif
/* The harness's HAL has a store: the settings persist unless the core ignores it. */
#if defined(CC_HAL_NO_STORE)
#define STORED false
#else
#define STORED true
#endif

#define KIND(k) ((uint32_t)CC_PB_INPUT_EVENT_KIND_##k)

/* An ERROR with this status and exactly this text. */
static bool error_says(const hx_packet_t *p, uint8_t status, const char *text)
{
    return p != NULL && p->status == status && p->payload_len == strlen(text)
           && memcmp(p->payload, text, p->payload_len) == 0;
}

static void test_capabilities_announce_neither(void)
{
    harness_t *h = hx_setup();
    Cameracontrol__V1__HandshakeResponse *resp;
    const hx_packet_t *p;
    uint8_t repacked[CC_MAX_FRAME_BYTES];
    size_t len = 0;
    size_t i;

    REQUIRE(h->hal.haptic_play != NULL && h->hal.sound_play != NULL && h->info.has_speaker);
    h->info.has_remote = true;   /* the board says it has one: the switch wins (PROTOCOL.md: no source that sends no event) */
    p = hx_handshake_response(h, CC_PROTOCOL_MINOR);
    REQUIRE(p != NULL);
    resp = cameracontrol__v1__handshake_response__unpack(NULL, p->payload_len, p->payload);
    REQUIRE(resp != NULL && resp->capabilities != NULL);
#if defined(CC_HAL_NO_HAPTIC)
    CHECK_EQ(resp->capabilities->n_haptic_patterns, 0);
#else
    CHECK_EQ(resp->capabilities->n_haptic_patterns, 4);
#endif
#if defined(CC_HAL_NO_SOUND)
    CHECK(!resp->capabilities->has_speaker);
#else
    CHECK(resp->capabilities->has_speaker);
#endif
    CHECK(resp->capabilities->has_indicator_led);   /* the parts the switches do not name stay */
#if defined(CC_HAL_NO_REMOTE) && defined(CC_HAL_BOARD_INFO)
    CHECK_EQ(resp->capabilities->n_buttons, 3);   /* the board's three buttons (board_info.h), no REMOTE */
    for (i = 0; i < resp->capabilities->n_buttons; i++) {
        CHECK(resp->capabilities->buttons[i] != CAMERACONTROL__V1__INPUT_SOURCE__INPUT_SOURCE_REMOTE);
    }
#elif defined(CC_HAL_NO_REMOTE)
    CHECK_EQ(resp->capabilities->n_buttons, 2);   /* volume up and down, no REMOTE */
    for (i = 0; i < resp->capabilities->n_buttons; i++) {
        CHECK(resp->capabilities->buttons[i] != CAMERACONTROL__V1__INPUT_SOURCE__INPUT_SOURCE_REMOTE);
    }
#else
    CHECK_EQ(resp->capabilities->n_buttons, 3);   /* volume up and down, REMOTE */
    i = 2;
    CHECK(resp->capabilities->n_buttons == 3
          && resp->capabilities->buttons[i] == CAMERACONTROL__V1__INPUT_SOURCE__INPUT_SOURCE_REMOTE);
#endif
    CHECK_EQ(resp->capabilities->n_sample_rates_hz, 4);
    CHECK_EQ(resp->capabilities->settings_persist, STORED);
    if (cameracontrol__v1__handshake_response__get_packed_size(resp) <= sizeof repacked) {
        len = cameracontrol__v1__handshake_response__pack(resp, repacked);
    }
    CHECK(len == p->payload_len && memcmp(repacked, p->payload, len) == 0);
    cameracontrol__v1__handshake_response__free_unpacked(resp, NULL);
}

static void test_feedback_answers_as_without_the_parts(void)
{
    harness_t *h = hx_setup();
    Cameracontrol__V1__PlayHapticRequest hap = CAMERACONTROL__V1__PLAY_HAPTIC_REQUEST__INIT;
    Cameracontrol__V1__PlaySoundRequest snd = CAMERACONTROL__V1__PLAY_SOUND_REQUEST__INIT;
    Cameracontrol__V1__SetIndicatorRequest ind = CAMERACONTROL__V1__SET_INDICATOR_REQUEST__INIT;
    static const uint8_t malformed[] = {0x08};   /* a tag without its value */
    static const uint8_t sound_as_bytes[] = {0x0A, 0x01, 0x02};   /* field 1 of another wire type: skipped */

    REQUIRE(hx_handshake(h, CC_PROTOCOL_MINOR));
    hap.pattern = CAMERACONTROL__V1__HAPTIC_PATTERN__HAPTIC_PATTERN_DETENT;
    hx_request(h, 2, CC_SERVICE_FEEDBACK_SERVICE, CC_METHOD_FEEDBACK_SERVICE_PLAY_HAPTIC, &hap.base);
    hap.pattern = (Cameracontrol__V1__HapticPattern)99;   /* the part is checked first */
    hx_request(h, 3, CC_SERVICE_FEEDBACK_SERVICE, CC_METHOD_FEEDBACK_SERVICE_PLAY_HAPTIC, &hap.base);
    snd.sound = CAMERACONTROL__V1__SOUND__SOUND_SHUTTER;
    hx_request(h, 4, CC_SERVICE_FEEDBACK_SERVICE, CC_METHOD_FEEDBACK_SERVICE_PLAY_SOUND, &snd.base);
    ind.mode = CAMERACONTROL__V1__INDICATOR_MODE__INDICATOR_MODE_ON;
    ind.rgb = 0x00FF00u;
    hx_request(h, 5, CC_SERVICE_FEEDBACK_SERVICE, CC_METHOD_FEEDBACK_SERVICE_SET_INDICATOR, &ind.base);
    hx_poll(h);
    /* the request is read first: a malformed one is refused as such */
    hx_send_packet(h, CC_PKT_REQUEST, 0, 6, CC_SERVICE_FEEDBACK_SERVICE, CC_METHOD_FEEDBACK_SERVICE_PLAY_HAPTIC,
                   malformed, sizeof malformed);
    hx_send_packet(h, CC_PKT_REQUEST, 0, 7, CC_SERVICE_FEEDBACK_SERVICE, CC_METHOD_FEEDBACK_SERVICE_PLAY_SOUND,
                   malformed, sizeof malformed);
    hx_send_packet(h, CC_PKT_REQUEST, 0, 8, CC_SERVICE_FEEDBACK_SERVICE, CC_METHOD_FEEDBACK_SERVICE_PLAY_SOUND,
                   sound_as_bytes, sizeof sound_as_bytes);
    hx_poll(h);

#if defined(CC_HAL_NO_HAPTIC)
    CHECK(error_says(hx_find(h, CC_PKT_ERROR, 2), CC_STATUS_FAILED_PRECONDITION, "no haptic actuator"));
    CHECK(error_says(hx_find(h, CC_PKT_ERROR, 3), CC_STATUS_FAILED_PRECONDITION, "no haptic actuator"));
    CHECK_EQ(h->haptic_calls, 0);
#else
    CHECK(hx_find(h, CC_PKT_RESPONSE, 2) != NULL);
    CHECK(error_says(hx_find(h, CC_PKT_ERROR, 3), CC_STATUS_INVALID_ARGUMENT, "unknown haptic pattern"));
    CHECK_EQ(h->haptic_calls, 1);
#endif
#if defined(CC_HAL_NO_SOUND)
    CHECK(error_says(hx_find(h, CC_PKT_ERROR, 4), CC_STATUS_FAILED_PRECONDITION, "no speaker"));
    CHECK(error_says(hx_find(h, CC_PKT_ERROR, 8), CC_STATUS_FAILED_PRECONDITION, "no speaker"));
    CHECK_EQ(h->sound_calls, 0);
#else
    CHECK(hx_find(h, CC_PKT_RESPONSE, 4) != NULL);
    CHECK(error_says(hx_find(h, CC_PKT_ERROR, 8), CC_STATUS_INVALID_ARGUMENT, "unknown sound"));   /* no sound: 0 */
    CHECK_EQ(h->sound_calls, 1);
#endif
    CHECK(error_says(hx_find(h, CC_PKT_ERROR, 7), CC_STATUS_INVALID_ARGUMENT, "malformed request"));
    CHECK(hx_find(h, CC_PKT_RESPONSE, 5) != NULL);
    CHECK_EQ(h->indicator_calls, 1);
    CHECK(error_says(hx_find(h, CC_PKT_ERROR, 6), CC_STATUS_INVALID_ARGUMENT, "malformed request"));
}

/* Events of the InputEvent stream on call_id, counted by kind. */
static uint32_t streamed(const harness_t *h, uint32_t call_id, uint32_t kind)
{
    uint32_t n = 0;
    size_t i;
    for (i = 0; i < h->npackets; i++) {
        const hx_packet_t *p = &h->packets[i];
        Cameracontrol__V1__InputEvent *ev;
        if (p->type != CC_PKT_STREAM_MESSAGE || p->call_id != call_id) {
            continue;
        }
        ev = cameracontrol__v1__input_event__unpack(NULL, p->payload_len, p->payload);
        if (ev != NULL) {
            n += (uint32_t)ev->kind == kind ? 1u : 0u;
            cameracontrol__v1__input_event__free_unpacked(ev, NULL);
        }
    }
    return n;
}

static void test_full_press_plays_nothing(void)
{
    harness_t *h = hx_setup();
    REQUIRE(hx_handshake(h, CC_PROTOCOL_MINOR));
    hx_request(h, 2, CC_SERVICE_INPUT_SERVICE, CC_METHOD_INPUT_SERVICE_STREAM_INPUT_EVENTS, NULL);
    hx_advance_alive(h, 200000);   /* the tare, at rest */
    h->reading.force_raw_mn = 3500;   /* a full press of the force sensor: a device with an actuator clicks */
    hx_advance_alive(h, 60000);
    h->reading.force_raw_mn = 0;
    hx_advance_alive(h, 60000);
    CHECK(streamed(h, 2, KIND(FULL_PRESS_DOWN)) >= 1u);   /* reliable: copies until acknowledged */
    CHECK(streamed(h, 2, KIND(FULL_PRESS_UP)) >= 1u);
#if defined(CC_HAL_NO_HAPTIC)
    CHECK_EQ(h->haptic_calls, 0);
#else
    CHECK_EQ(h->haptic_calls, 2);   /* the click and the release */
#endif
}

/* The pipeline alone: every event it queued since the last call. */
static uint32_t drain(cc_input_t *in)
{
    cc_input_event_t e;
    uint32_t n = 0;
    while (cc_input_pop_event(in, &e)) {
        n++;
    }
    return n;
}

static void run(cc_input_t *in, uint64_t *t, int32_t force, uint32_t buttons, uint32_t remote_clicks, unsigned samples)
{
    cc_sensor_reading_t r;
    unsigned i;
    for (i = 0; i < samples; i++) {
        r.force_raw_mn = force;
        r.position = 0u;
        r.touched = false;
        r.buttons = buttons;
        r.remote_clicks = remote_clicks;
        *t += 1000u;
        (void)cc_input_step(in, *t, &r);
    }
}

static void test_remote_clicks_and_shutter_switch_are_ignored(void)
{
    static cc_input_t in;
    cc_input_config_t cfg;
    cc_raw_sample_t sample;
    uint64_t t = 0;
    cc_input_default_config(&cfg);
    cc_input_init(&in, &cfg);
    run(&in, &t, 0, 0u, 0u, 200u);   /* the tare */
    (void)drain(&in);
    run(&in, &t, 0, 0u, 3u, 1u);   /* three remote clicks: three REMOTE_CLICKs with a remote */
#if defined(CC_HAL_NO_REMOTE)
    CHECK_EQ(drain(&in), 0);
#else
    CHECK_EQ(drain(&in), 3);
#endif
    run(&in, &t, 0, CC_BUTTON_SHUTTER_SWITCH, 0u, 100u);   /* a full press with a shutter switch */
    REQUIRE(cc_input_last_sample(&in, &sample));
#if defined(CC_HAL_NO_SHUTTER_SWITCH)
    CHECK_EQ(drain(&in), 0);
    CHECK_EQ(sample.buttons, 0);   /* no level of it in raw samples either */
#else
    CHECK(drain(&in) >= 1u);
    CHECK_EQ(sample.buttons, CC_BUTTON_SHUTTER_SWITCH);
#endif
    run(&in, &t, 0, CC_BUTTON_SHUTTER_SWITCH | CC_BUTTON_VOLUME_UP, 0u, 100u);   /* the other buttons stay */
    CHECK_EQ(drain(&in), 1);
    REQUIRE(cc_input_last_sample(&in, &sample));
#if defined(CC_HAL_NO_SHUTTER_SWITCH)
    CHECK_EQ(sample.buttons, CC_BUTTON_VOLUME_UP);
#else
    CHECK_EQ(sample.buttons, CC_BUTTON_SHUTTER_SWITCH | CC_BUTTON_VOLUME_UP);
#endif
}

/* The sensors read and the dropped bytes counted through the HAL, as by the
 * full core: a core built with CC_HAL_WITH_SENSORS and CC_HAL_WITH_OVERRUNS
 * calls read_sensors and uart_take_overruns without asking, one built without
 * asks first; both take what the harness's HAL reports. */
static void test_sensors_read_and_overruns_counted(void)
{
    harness_t *h = hx_setup();
    cc_raw_sample_t sample;
    h->buttons = CC_BUTTON_VOLUME_UP;
    hx_advance(h, 20000u);   /* samples: the level read through read_sensors */
    REQUIRE(cc_input_last_sample(&h->dev.input, &sample));
    CHECK_EQ(sample.buttons, CC_BUTTON_VOLUME_UP);
    h->overruns = 37;
    hx_heartbeat(h);   /* bytes to read: the dropped ones are counted with them */
    hx_poll(h);
    CHECK_EQ(cc_device_counters(&h->dev)->rx_overruns, 37);
}

#if defined(CC_HAL_BOARD_INFO)
#include "board_info.h"
char port_serial_number[] = "SERIAL-42";   /* the port's (CC_BOARD_SERIAL), read at boot on the board */
/* A board core with its board's information at compile time (the port's
 * board_info.h): the handshake announces the board's values and the port's
 * serial number, whatever the info given to cc_device_init says. */
static void test_board_info_announced(void)
{
    static const cc_device_info_t board = CC_BOARD_INFO(NULL);
    harness_t *h = hx_setup();
    Cameracontrol__V1__HandshakeResponse *resp;
    const hx_packet_t *p;

    h->info.model = "not the board";
    h->info.serial_number = "not the board's";
    h->info.force_max_mn = board.force_max_mn + 1u;
    h->info.slide_resolution = board.slide_resolution + 1u;
    h->info.has_indicator_led = !board.has_indicator_led;
    p = hx_handshake_response(h, CC_PROTOCOL_MINOR);
    REQUIRE(p != NULL);
    resp = cameracontrol__v1__handshake_response__unpack(NULL, p->payload_len, p->payload);
    REQUIRE(resp != NULL && resp->identity != NULL && resp->capabilities != NULL);
    CHECK(strcmp(resp->identity->vendor, board.vendor) == 0);
    CHECK(strcmp(resp->identity->model, board.model) == 0);
    CHECK(strcmp(resp->identity->serial_number, "SERIAL-42") == 0);
    CHECK_EQ(resp->identity->usb_vendor_id, board.usb_vendor_id);
    CHECK_EQ(resp->capabilities->force_max_mn, board.force_max_mn);
    CHECK_EQ(resp->capabilities->slide_resolution, board.slide_resolution);
    CHECK_EQ(resp->capabilities->n_buttons, 3);
    CHECK(resp->capabilities->has_indicator_led == board.has_indicator_led);
    cameracontrol__v1__handshake_response__free_unpacked(resp, NULL);
}
#endif

/* Counters.uptime_us: the HAL's clock itself when it is known to start at
 * boot (CC_HAL_CLOCK_FROM_BOOT: the core keeps no boot time), else the time
 * since cc_device_init (hx_setup boots at 1 s of the harness's clock). */
static void test_uptime(void)
{
    harness_t *h = hx_setup();
    const hx_packet_t *p;
    Cameracontrol__V1__Counters *c;
    h->now_us += 5000000u;
    REQUIRE(hx_handshake(h, 0));
    hx_request(h, 2, CC_SERVICE_DIAGNOSTICS_SERVICE, CC_METHOD_DIAGNOSTICS_SERVICE_GET_COUNTERS, NULL);
    hx_poll(h);
    p = hx_find(h, CC_PKT_RESPONSE, 2);
    REQUIRE(p != NULL);
    c = cameracontrol__v1__counters__unpack(NULL, p->payload_len, p->payload);
    REQUIRE(c != NULL);
#if defined(CC_HAL_CLOCK_FROM_BOOT)
    CHECK_EQ(c->uptime_us, h->now_us);
#else
    CHECK_EQ(c->uptime_us, 5000000u);
#endif
    cameracontrol__v1__counters__free_unpacked(c, NULL);
}

/* SetSettings, then a reset: the settings survive it with a store, not without. */
static void test_settings_store(void)
{
    harness_t *h = hx_setup();   /* a HAL with a store */
    Cameracontrol__V1__SetSettingsRequest req = CAMERACONTROL__V1__SET_SETTINGS_REQUEST__INIT;
    Cameracontrol__V1__Settings s = CAMERACONTROL__V1__SETTINGS__INIT;
    Cameracontrol__V1__SettingsResponse *r;
    const hx_packet_t *p;

    REQUIRE(hx_handshake(h, CC_PROTOCOL_MINOR));
    s.light_press_force = CAMERACONTROL__V1__LIGHT_PRESS_FORCE__LIGHT_PRESS_FORCE_FIRMER;
    req.settings = &s;
    hx_request(h, 2, CC_SERVICE_CONFIG_SERVICE, CC_METHOD_CONFIG_SERVICE_SET_SETTINGS, &req.base);
    hx_poll(h);
    p = hx_find(h, CC_PKT_RESPONSE, 2);
    REQUIRE(p != NULL);
    r = cameracontrol__v1__settings_response__unpack(NULL, p->payload_len, p->payload);
    REQUIRE(r != NULL && r->settings != NULL);
    CHECK_EQ(r->settings->light_press_force, CAMERACONTROL__V1__LIGHT_PRESS_FORCE__LIGHT_PRESS_FORCE_FIRMER);
    CHECK_EQ(r->origin, STORED ? CAMERACONTROL__V1__SETTINGS_ORIGIN__SETTINGS_ORIGIN_EMPTY
                               : CAMERACONTROL__V1__SETTINGS_ORIGIN__SETTINGS_ORIGIN_VOLATILE);
    CHECK_EQ(r->writes, STORED ? 1u : 0u);
    cameracontrol__v1__settings_response__free_unpacked(r, NULL);
    CHECK_EQ(h->store_writes, STORED ? 1u : 0u);
    CHECK_EQ(cc_device_config(&h->dev)->light_press_on_mn, 1100u);
#if defined(CC_HAL_NO_STORE)
    {
        /* the HAL's store holds a valid copy (FIRMER), newer than any: a core built without a store
         * must not read it, nor write (above) */
        cc_settings_t firmer;
        cc_settings_defaults(&firmer);
        firmer.light_press_force = (uint8_t)CAMERACONTROL__V1__LIGHT_PRESS_FORCE__LIGHT_PRESS_FORCE_FIRMER;
        cc_settings_encode(&firmer, 7u, h->store[0]);
        cc_settings_encode(&firmer, 8u, h->store[1]);
    }
#endif
    hx_reboot(h);
    CHECK_EQ(cc_device_config(&h->dev)->light_press_on_mn, STORED ? 1100u : 800u);
}

int main(void)
{
    static const cc_test_case_t cases[] = {
        {"capabilities_announce_neither", test_capabilities_announce_neither},
        {"feedback_answers_as_without_the_parts", test_feedback_answers_as_without_the_parts},
        {"full_press_plays_nothing", test_full_press_plays_nothing},
        {"remote_clicks_and_shutter_switch_are_ignored", test_remote_clicks_and_shutter_switch_are_ignored},
        {"settings_store", test_settings_store},
        {"sensors_read_and_overruns_counted", test_sensors_read_and_overruns_counted},
        {"uptime", test_uptime},
#if defined(CC_HAL_BOARD_INFO)
        {"board_info_announced", test_board_info_announced},
#endif
    };
    unsigned passed = 0;
    unsigned failed = 0;
    cc_test_run("board_core", cases, CC_TEST_COUNT(cases), &passed, &failed);
    printf("%u passed, %u failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}
