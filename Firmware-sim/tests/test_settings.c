/* The user's settings: the two-slot store (cc_settings.c), GetSettings and
 * SetSettings, the settings surviving a reset, torn and corrupt copies, and
 * the gates of the input pipeline. */
#include <string.h>

#include "cc_ids.h"
#include "cc_pb.h"
#include "cc_settings.h"
#include "cc_test.h"
#include "cc_wire.h"
#include "harness.h"

#define LIGHTER CAMERACONTROL__V1__LIGHT_PRESS_FORCE__LIGHT_PRESS_FORCE_LIGHTER
#define FIRMER CAMERACONTROL__V1__LIGHT_PRESS_FORCE__LIGHT_PRESS_FORCE_FIRMER
#define SLOWEST CAMERACONTROL__V1__DOUBLE_LIGHT_PRESS_SPEED__DOUBLE_LIGHT_PRESS_SPEED_SLOWEST
#define SW_ON CAMERACONTROL__V1__SETTING_SWITCH__SETTING_SWITCH_ON
#define SW_OFF CAMERACONTROL__V1__SETTING_SWITCH__SETTING_SWITCH_OFF

static cc_settings_t settings_of(uint8_t force, uint8_t speed, uint8_t control, uint8_t adjustments)
{
    cc_settings_t s;
    s.light_press_force = force;
    s.double_light_press_speed = speed;
    s.camera_control = control;
    s.camera_adjustments = adjustments;
    return s;
}

/* ---- the store, pure ---- */

static void test_slot_round_trip_and_blank(void)
{
    uint8_t slot[CC_SETTINGS_SLOT_BYTES];
    cc_settings_t in = settings_of(3u, 2u, 1u, 2u);
    cc_settings_t out;
    uint32_t seq = 0;
    cc_settings_encode(&in, 0xA1B2C3D4u, slot);
    CHECK(cc_settings_decode(slot, &out, &seq));
    CHECK(cc_settings_equal(&in, &out));
    CHECK_EQ(seq, 0xA1B2C3D4u);
    CHECK(!cc_settings_blank(slot));
    memset(slot, 0xFF, sizeof slot);
    CHECK(cc_settings_blank(slot));
    CHECK(!cc_settings_decode(slot, &out, &seq));
    memset(slot, 0x00, sizeof slot);
    CHECK(cc_settings_blank(slot));
    CHECK(!cc_settings_decode(slot, &out, &seq));
}

static void test_every_damaged_byte_is_refused(void)
{
    uint8_t slot[CC_SETTINGS_SLOT_BYTES];
    cc_settings_t in = settings_of(1u, 3u, 2u, 1u);
    cc_settings_t out;
    uint32_t seq;
    size_t i;
    unsigned bit;
    for (i = 0; i < CC_SETTINGS_SLOT_BYTES; i++) {
        for (bit = 0; bit < 8u; bit++) {
            cc_settings_encode(&in, 7u, slot);
            slot[i] = (uint8_t)(slot[i] ^ (1u << bit));
            CHECK(!cc_settings_decode(slot, &out, &seq));
        }
    }
}

static void test_a_value_out_of_range_with_a_good_crc_is_refused(void)
{
    uint8_t slot[CC_SETTINGS_SLOT_BYTES];
    cc_settings_t bad = settings_of(4u, 1u, 1u, 1u);   /* no LightPressForce 4 */
    cc_settings_t out;
    uint32_t seq;
    cc_settings_encode(&bad, 1u, slot);
    CHECK(!cc_settings_decode(slot, &out, &seq));
}

static void test_newest_valid_slot_wins(void)
{
    uint8_t a[CC_SETTINGS_SLOT_BYTES];
    uint8_t b[CC_SETTINGS_SLOT_BYTES];
    cc_settings_t old = settings_of(1u, 1u, 1u, 1u);
    cc_settings_t new_ = settings_of(3u, 3u, 2u, 2u);
    cc_settings_store_t st;

    cc_settings_encode(&old, 4u, a);
    cc_settings_encode(&new_, 5u, b);
    cc_settings_load(&st, true, a, b);
    CHECK(cc_settings_equal(&st.current, &new_));
    CHECK_EQ(st.origin, CC_PB_SETTINGS_ORIGIN_LOADED);
    CHECK_EQ(st.sequence, 5u);
    CHECK_EQ(st.next_slot, 0u);   /* the slot that does not hold the copy in force */
    cc_settings_load(&st, true, b, a);
    CHECK(cc_settings_equal(&st.current, &new_));
    CHECK_EQ(st.next_slot, 1u);

    /* across the wrap of the sequence number */
    cc_settings_encode(&old, 0xFFFFFFFFu, a);
    cc_settings_encode(&new_, 1u, b);
    cc_settings_load(&st, true, a, b);
    CHECK(cc_settings_equal(&st.current, &new_));
}

static void test_corrupt_slot_falls_back_to_the_other(void)
{
    uint8_t a[CC_SETTINGS_SLOT_BYTES];
    uint8_t b[CC_SETTINGS_SLOT_BYTES];
    cc_settings_t old = settings_of(1u, 2u, 1u, 1u);
    cc_settings_t new_ = settings_of(3u, 3u, 2u, 2u);
    cc_settings_store_t st;

    cc_settings_encode(&old, 4u, a);
    cc_settings_encode(&new_, 5u, b);
    b[9] ^= 0x40u;   /* the newer copy damaged */
    cc_settings_load(&st, true, a, b);
    CHECK(cc_settings_equal(&st.current, &old));
    CHECK_EQ(st.origin, CC_PB_SETTINGS_ORIGIN_RECOVERED);
    CHECK_EQ(st.next_slot, 1u);   /* the next write replaces the damaged copy */

    /* an unreadable slot counts as blank */
    cc_settings_load(&st, true, NULL, b);
    CHECK_EQ(st.origin, CC_PB_SETTINGS_ORIGIN_CORRUPT);
    cc_settings_load(&st, true, a, NULL);
    CHECK(cc_settings_equal(&st.current, &old));
    CHECK_EQ(st.origin, CC_PB_SETTINGS_ORIGIN_LOADED);
}

static void test_both_bad_gives_the_defaults_and_says_so(void)
{
    uint8_t a[CC_SETTINGS_SLOT_BYTES];
    uint8_t b[CC_SETTINGS_SLOT_BYTES];
    cc_settings_t s = settings_of(3u, 3u, 2u, 2u);
    cc_settings_t defaults;
    cc_settings_store_t st;

    cc_settings_defaults(&defaults);
    cc_settings_encode(&s, 4u, a);
    cc_settings_encode(&s, 5u, b);
    a[14] ^= 1u;
    b[0] = 0x12u;
    cc_settings_load(&st, true, a, b);
    CHECK(cc_settings_equal(&st.current, &defaults));
    CHECK_EQ(st.origin, CC_PB_SETTINGS_ORIGIN_CORRUPT);
    CHECK_EQ(st.sequence, 0u);

    memset(a, 0xFF, sizeof a);
    memset(b, 0xFF, sizeof b);
    cc_settings_load(&st, true, a, b);
    CHECK(cc_settings_equal(&st.current, &defaults));
    CHECK_EQ(st.origin, CC_PB_SETTINGS_ORIGIN_EMPTY);

    cc_settings_load(&st, false, NULL, NULL);
    CHECK(cc_settings_equal(&st.current, &defaults));
    CHECK_EQ(st.origin, CC_PB_SETTINGS_ORIGIN_VOLATILE);
}

/* ---- the device: GetSettings, SetSettings, a reset ---- */

static void set_settings(harness_t *h, uint32_t call_id, int force, int speed, int control, int adjustments)
{
    Cameracontrol__V1__SetSettingsRequest req = CAMERACONTROL__V1__SET_SETTINGS_REQUEST__INIT;
    Cameracontrol__V1__Settings s = CAMERACONTROL__V1__SETTINGS__INIT;
    s.light_press_force = (Cameracontrol__V1__LightPressForce)force;
    s.double_light_press_speed = (Cameracontrol__V1__DoubleLightPressSpeed)speed;
    s.camera_control = (Cameracontrol__V1__SettingSwitch)control;
    s.camera_adjustments = (Cameracontrol__V1__SettingSwitch)adjustments;
    req.settings = &s;
    hx_request(h, call_id, CC_SERVICE_CONFIG_SERVICE, CC_METHOD_CONFIG_SERVICE_SET_SETTINGS, &req.base);
    hx_poll(h);
}

/* The SettingsResponse of call_id (NULL when there is none); free it. */
static Cameracontrol__V1__SettingsResponse *settings_reply(harness_t *h, uint32_t call_id)
{
    const hx_packet_t *p = hx_find(h, CC_PKT_RESPONSE, call_id);
    if (p == NULL) {
        return NULL;
    }
    return cameracontrol__v1__settings_response__unpack(NULL, p->payload_len, p->payload);
}

static Cameracontrol__V1__SettingsResponse *get_settings(harness_t *h, uint32_t call_id)
{
    hx_request(h, call_id, CC_SERVICE_CONFIG_SERVICE, CC_METHOD_CONFIG_SERVICE_GET_SETTINGS, NULL);
    hx_poll(h);
    return settings_reply(h, call_id);
}

static void test_handshake_announces_settings(void)
{
    harness_t *h;
    int with_store;
    for (with_store = 0; with_store < 2; with_store++) {
        Cameracontrol__V1__HandshakeResponse *resp;
        const hx_packet_t *p;
        h = with_store ? hx_setup() : hx_setup_without_store();
        p = hx_handshake_response(h, 2u);
        REQUIRE(p != NULL);
        resp = cameracontrol__v1__handshake_response__unpack(NULL, p->payload_len, p->payload);
        REQUIRE(resp != NULL && resp->capabilities != NULL);
        CHECK(resp->capabilities->has_settings);
        CHECK_EQ(resp->capabilities->settings_persist, with_store);
        cameracontrol__v1__handshake_response__free_unpacked(resp, NULL);
    }
}

static void test_defaults_on_a_blank_store(void)
{
    harness_t *h = hx_setup();
    Cameracontrol__V1__SettingsResponse *r;
    REQUIRE(hx_handshake(h, 2));
    r = get_settings(h, 2);
    REQUIRE(r != NULL && r->settings != NULL);
    CHECK_EQ(r->settings->light_press_force, CAMERACONTROL__V1__LIGHT_PRESS_FORCE__LIGHT_PRESS_FORCE_DEFAULT);
    CHECK_EQ(r->settings->double_light_press_speed,
             CAMERACONTROL__V1__DOUBLE_LIGHT_PRESS_SPEED__DOUBLE_LIGHT_PRESS_SPEED_DEFAULT);
    CHECK_EQ(r->settings->camera_control, SW_ON);
    CHECK_EQ(r->settings->camera_adjustments, SW_ON);
    CHECK_EQ(r->origin, CAMERACONTROL__V1__SETTINGS_ORIGIN__SETTINGS_ORIGIN_EMPTY);
    CHECK_EQ(r->writes, 0u);
    cameracontrol__v1__settings_response__free_unpacked(r, NULL);
    CHECK_EQ(cc_device_config(&h->dev)->light_press_on_mn, 800u);
    CHECK_EQ(h->store_writes, 0u);
}

static void test_settings_survive_a_reset(void)
{
    harness_t *h = hx_setup();
    Cameracontrol__V1__SettingsResponse *r;
    REQUIRE(hx_handshake(h, 2));
    set_settings(h, 2, FIRMER, SLOWEST, 0, SW_OFF);
    r = settings_reply(h, 2);
    REQUIRE(r != NULL && r->settings != NULL);
    CHECK_EQ(r->settings->light_press_force, FIRMER);
    CHECK_EQ(r->settings->double_light_press_speed, SLOWEST);
    CHECK_EQ(r->settings->camera_control, SW_ON);   /* left unspecified: kept */
    CHECK_EQ(r->settings->camera_adjustments, SW_OFF);
    CHECK_EQ(r->writes, 1u);
    cameracontrol__v1__settings_response__free_unpacked(r, NULL);
    CHECK_EQ(cc_device_config(&h->dev)->light_press_on_mn, 1100u);
    CHECK_EQ(cc_device_config(&h->dev)->light_press_off_mn, 700u);
    CHECK_EQ(cc_device_config(&h->dev)->full_press_on_mn, 2500u);

    hx_reboot(h);
    CHECK_EQ(cc_device_config(&h->dev)->light_press_on_mn, 1100u);
    REQUIRE(hx_handshake(h, 2));
    r = get_settings(h, 2);
    REQUIRE(r != NULL && r->settings != NULL);
    CHECK_EQ(r->settings->light_press_force, FIRMER);
    CHECK_EQ(r->settings->double_light_press_speed, SLOWEST);
    CHECK_EQ(r->settings->camera_adjustments, SW_OFF);
    CHECK_EQ(r->origin, CAMERACONTROL__V1__SETTINGS_ORIGIN__SETTINGS_ORIGIN_LOADED);
    CHECK_EQ(r->writes, 0u);
    cameracontrol__v1__settings_response__free_unpacked(r, NULL);

    /* the second copy goes to the other slot, and wins at the next boot */
    set_settings(h, 3, LIGHTER, 0, 0, SW_ON);
    CHECK_EQ(h->store_writes, 2u);
    CHECK(!cc_settings_blank(h->store[0]) && !cc_settings_blank(h->store[1]));
    hx_reboot(h);
    CHECK_EQ(cc_device_config(&h->dev)->light_press_on_mn, 600u);
    CHECK_EQ(cc_device_config(&h->dev)->light_press_off_mn, 400u);
}

static void test_a_write_cut_at_every_byte_keeps_the_last_good_copy(void)
{
    int cut;
    for (cut = 0; cut < (int)CC_SETTINGS_SLOT_BYTES; cut++) {
        harness_t *h = hx_setup();
        Cameracontrol__V1__SettingsResponse *r;
        REQUIRE(hx_handshake(h, 2));
        set_settings(h, 2, FIRMER, 0, 0, 0);       /* the good copy, slot 0 */
        set_settings(h, 3, LIGHTER, SLOWEST, 0, 0); /* slot 1 */
        h->store_cut_after = cut;
        set_settings(h, 4, CAMERACONTROL__V1__LIGHT_PRESS_FORCE__LIGHT_PRESS_FORCE_DEFAULT, 0, SW_OFF, 0);
        CHECK(hx_find(h, CC_PKT_ERROR, 4) != NULL);   /* the write failed: nothing changed */
        CHECK_EQ(cc_device_config(&h->dev)->light_press_on_mn, 600u);
        hx_reboot(h);
        REQUIRE(hx_handshake(h, 2));
        r = get_settings(h, 2);
        REQUIRE(r != NULL && r->settings != NULL);
        CHECK_EQ(r->settings->light_press_force, LIGHTER);
        CHECK_EQ(r->settings->double_light_press_speed, SLOWEST);
        CHECK_EQ(r->settings->camera_control, SW_ON);
        CHECK_EQ(r->origin, cut == 0 ? CAMERACONTROL__V1__SETTINGS_ORIGIN__SETTINGS_ORIGIN_LOADED
                                     : CAMERACONTROL__V1__SETTINGS_ORIGIN__SETTINGS_ORIGIN_RECOVERED);
        cameracontrol__v1__settings_response__free_unpacked(r, NULL);
        CHECK_EQ(cc_device_config(&h->dev)->light_press_on_mn, 600u);
    }
}

static void test_a_corrupt_store_boots_with_the_defaults(void)
{
    harness_t *h = hx_setup();
    Cameracontrol__V1__SettingsResponse *r;
    REQUIRE(hx_handshake(h, 2));
    set_settings(h, 2, FIRMER, 0, 0, 0);
    set_settings(h, 3, LIGHTER, 0, 0, 0);
    h->store[0][5] ^= 0x10u;
    h->store[1][12] = 0x55u;
    hx_reboot(h);
    CHECK_EQ(cc_device_config(&h->dev)->light_press_on_mn, 800u);
    REQUIRE(hx_handshake(h, 2));
    r = get_settings(h, 2);
    REQUIRE(r != NULL && r->settings != NULL);
    CHECK_EQ(r->settings->light_press_force, CAMERACONTROL__V1__LIGHT_PRESS_FORCE__LIGHT_PRESS_FORCE_DEFAULT);
    CHECK_EQ(r->origin, CAMERACONTROL__V1__SETTINGS_ORIGIN__SETTINGS_ORIGIN_CORRUPT);
    cameracontrol__v1__settings_response__free_unpacked(r, NULL);
    /* a new write repairs it */
    set_settings(h, 3, FIRMER, 0, 0, 0);
    hx_reboot(h);
    CHECK_EQ(cc_device_config(&h->dev)->light_press_on_mn, 1100u);
}

static void test_bad_values_change_nothing(void)
{
    harness_t *h = hx_setup();
    const hx_packet_t *p;
    REQUIRE(hx_handshake(h, 2));
    set_settings(h, 2, 4, 0, 0, 0);
    p = hx_find(h, CC_PKT_ERROR, 2);
    REQUIRE(p != NULL);
    CHECK_EQ(p->status, CC_STATUS_INVALID_ARGUMENT);
    set_settings(h, 3, FIRMER, 0, 3, 0);   /* one bad field: none applies */
    p = hx_find(h, CC_PKT_ERROR, 3);
    REQUIRE(p != NULL);
    CHECK_EQ(p->status, CC_STATUS_INVALID_ARGUMENT);
    set_settings(h, 4, 0, -1, 0, 0);
    CHECK(hx_find(h, CC_PKT_ERROR, 4) != NULL);
    CHECK_EQ(cc_device_counters(&h->dev)->invalid_arguments, 3u);
    CHECK_EQ(h->store_writes, 0u);
    CHECK_EQ(cc_device_config(&h->dev)->light_press_on_mn, 800u);

    /* nothing set, or the same values: answered, nothing written */
    hx_request(h, 5, CC_SERVICE_CONFIG_SERVICE, CC_METHOD_CONFIG_SERVICE_SET_SETTINGS, NULL);
    hx_poll(h);
    CHECK(hx_find(h, CC_PKT_RESPONSE, 5) != NULL);
    set_settings(h, 6, CAMERACONTROL__V1__LIGHT_PRESS_FORCE__LIGHT_PRESS_FORCE_DEFAULT, 0, SW_ON, 0);
    CHECK(hx_find(h, CC_PKT_RESPONSE, 6) != NULL);
    CHECK_EQ(h->store_writes, 0u);
}

/* Each field out of range is refused with its own text (SetSettings takes the
 * four by one loop over a table of maxima and texts): the first bad one in
 * field order. */
static void test_each_bad_field_is_named(void)
{
    static const char *const names[4] = {
        "unknown light_press_force", "unknown double_light_press_speed", "unknown camera_control",
        "unknown camera_adjustments",
    };
    harness_t *h = hx_setup();
    int bad[4];
    uint32_t i;
    REQUIRE(hx_handshake(h, 2));
    for (i = 0; i < 4u; i++) {
        const hx_packet_t *p;
        memset(bad, 0, sizeof bad);
        bad[i] = i < 2u ? 4 : 3;   /* one past the largest value */
        set_settings(h, 10u + i, bad[0], bad[1], bad[2], bad[3]);
        p = hx_find(h, CC_PKT_ERROR, 10u + i);
        REQUIRE(p != NULL);
        CHECK_EQ(p->status, CC_STATUS_INVALID_ARGUMENT);
        CHECK(p->payload_len == strlen(names[i]) && memcmp(p->payload, names[i], p->payload_len) == 0);
    }
    memset(bad, 0, sizeof bad);
    bad[1] = -1;
    bad[2] = 7;
    set_settings(h, 20u, bad[0], bad[1], bad[2], bad[3]);   /* two bad fields: the first is named */
    CHECK(hx_find(h, CC_PKT_ERROR, 20u) != NULL
          && hx_find(h, CC_PKT_ERROR, 20u)->payload_len == strlen(names[1])
          && memcmp(hx_find(h, CC_PKT_ERROR, 20u)->payload, names[1], strlen(names[1])) == 0);
    CHECK_EQ(h->store_writes, 0u);
}

static void test_a_failed_write_or_a_force_that_does_not_fit_changes_nothing(void)
{
    harness_t *h = hx_setup();
    const hx_packet_t *p;
    cc_input_config_t cfg = *cc_device_config(&h->dev);
    REQUIRE(hx_handshake(h, 2));
    h->store_fail = true;
    set_settings(h, 2, FIRMER, 0, 0, 0);
    p = hx_find(h, CC_PKT_ERROR, 2);
    REQUIRE(p != NULL);
    CHECK_EQ(p->status, CC_STATUS_INTERNAL);
    CHECK_EQ(cc_device_config(&h->dev)->light_press_on_mn, 800u);
    h->store_fail = false;

    /* a configured full press that leaves no room for the firmer light press */
    {
        Cameracontrol__V1__ConfigureRequest req = CAMERACONTROL__V1__CONFIGURE_REQUEST__INIT;
        Cameracontrol__V1__Config c = CAMERACONTROL__V1__CONFIG__INIT;
        Cameracontrol__V1__Thresholds t = CAMERACONTROL__V1__THRESHOLDS__INIT;
        t.light_press_on_mn = 800u;
        t.light_press_off_mn = 500u;
        t.full_press_on_mn = 1900u;
        t.full_press_off_mn = 1200u;
        t.min_stage_gap_mn = 1000u;
        c.thresholds = &t;
        c.sample_rate_hz = cfg.sample_rate_hz;
        c.slide_interval_ms = cfg.slide_interval_ms;
        c.debounce_ms = cfg.debounce_ms;
        req.config = &c;
        hx_request(h, 3, CC_SERVICE_CONFIG_SERVICE, CC_METHOD_CONFIG_SERVICE_CONFIGURE, &req.base);
        hx_poll(h);
        REQUIRE(hx_find(h, CC_PKT_RESPONSE, 3) != NULL);
    }
    set_settings(h, 4, FIRMER, 0, 0, 0);
    p = hx_find(h, CC_PKT_ERROR, 4);
    REQUIRE(p != NULL);
    CHECK_EQ(p->status, CC_STATUS_FAILED_PRECONDITION);
    CHECK_EQ(cc_device_config(&h->dev)->light_press_on_mn, 800u);
    CHECK_EQ(h->store_writes, 1u);   /* only the failed one */
    /* a switch alone leaves the configured thresholds alone */
    set_settings(h, 5, 0, 0, 0, SW_OFF);
    CHECK(hx_find(h, CC_PKT_RESPONSE, 5) != NULL);
    CHECK_EQ(cc_device_config(&h->dev)->full_press_on_mn, 1900u);
}

static void test_without_a_store_settings_last_until_a_reset(void)
{
    harness_t *h = hx_setup_without_store();
    Cameracontrol__V1__SettingsResponse *r;
    REQUIRE(hx_handshake(h, 2));
    set_settings(h, 2, FIRMER, 0, 0, 0);
    r = settings_reply(h, 2);
    REQUIRE(r != NULL && r->settings != NULL);
    CHECK_EQ(r->settings->light_press_force, FIRMER);
    CHECK_EQ(r->origin, CAMERACONTROL__V1__SETTINGS_ORIGIN__SETTINGS_ORIGIN_VOLATILE);
    CHECK_EQ(r->writes, 0u);
    cameracontrol__v1__settings_response__free_unpacked(r, NULL);
    CHECK_EQ(cc_device_config(&h->dev)->light_press_on_mn, 1100u);
    hx_reboot(h);
    CHECK_EQ(cc_device_config(&h->dev)->light_press_on_mn, 800u);
}

/* ---- the gates of the input pipeline ---- */

typedef struct kinds {
    uint32_t kind[64];
    uint32_t n;
    uint32_t last_number;
    bool numbers_consecutive;
} kinds_t;

static void step(cc_input_t *in, uint64_t *t, int32_t force, bool touched, uint16_t pos, uint32_t buttons,
                 unsigned samples, kinds_t *k)
{
    unsigned i;
    cc_sensor_reading_t r;
    cc_input_event_t e;
    for (i = 0; i < samples; i++) {
        r.force_raw_mn = force;
        r.touched = touched;
        r.position = pos;
        r.buttons = buttons;
        r.remote_clicks = 0u;
        *t += 1000u;
        (void)cc_input_step(in, *t, &r);
        while (cc_input_pop_event(in, &e)) {
            if (k->n < 64u) {
                k->kind[k->n++] = e.kind;
            }
            if (e.event_number != k->last_number + 1u) {
                k->numbers_consecutive = false;
            }
            k->last_number = e.event_number;
        }
    }
}

static uint32_t count_kind(const kinds_t *k, uint32_t kind)
{
    uint32_t i;
    uint32_t n = 0;
    for (i = 0; i < k->n; i++) {
        n += k->kind[i] == kind ? 1u : 0u;
    }
    return n;
}

/* A touch, a light press, a slide, a full press and a release, and a volume-down click. */
static void press_everything(cc_input_t *in, uint64_t *t, kinds_t *k)
{
    step(in, t, 0, true, 100u, 0u, 20u, k);
    step(in, t, 1200, true, 100u, 0u, 60u, k);
    step(in, t, 1200, true, 400u, 0u, 60u, k);
    step(in, t, 3500, true, 400u, 0u, 60u, k);
    step(in, t, 0, false, 400u, 0u, 60u, k);
    step(in, t, 0, false, 0u, CC_BUTTON_VOLUME_DOWN, 30u, k);
    step(in, t, 0, false, 0u, 0u, 30u, k);
}

static void gated_run(bool control, bool adjustments, kinds_t *k)
{
    static cc_input_t in;
    cc_input_config_t cfg;
    uint64_t t = 0;
    memset(k, 0, sizeof *k);
    k->numbers_consecutive = true;
    cc_input_default_config(&cfg);
    cc_input_init(&in, &cfg);
    step(&in, &t, 0, false, 0u, 0u, 100u, k);   /* tare */
    cc_input_set_gates(&in, control, adjustments);
    press_everything(&in, &t, k);
}

#define KIND(k) ((uint32_t)CC_PB_INPUT_EVENT_KIND_##k)

static void test_gates_open_report_everything(void)
{
    kinds_t k;
    gated_run(true, true, &k);
    CHECK_EQ(count_kind(&k, KIND(TOUCH_DOWN)), 1u);
    CHECK_EQ(count_kind(&k, KIND(LIGHT_PRESS_DOWN)), 1u);
    CHECK(count_kind(&k, KIND(SLIDE)) >= 1u);
    CHECK_EQ(count_kind(&k, KIND(FULL_PRESS_DOWN)), 1u);
    CHECK_EQ(count_kind(&k, KIND(FULL_PRESS_UP)), 1u);
    CHECK_EQ(count_kind(&k, KIND(BUTTON_DOWN)), 1u);
    CHECK(k.numbers_consecutive);
}

static void test_camera_control_off_reports_only_the_buttons(void)
{
    kinds_t k;
    gated_run(false, true, &k);
    CHECK_EQ(k.n, 2u);
    CHECK_EQ(count_kind(&k, KIND(BUTTON_DOWN)), 1u);
    CHECK_EQ(count_kind(&k, KIND(BUTTON_UP)), 1u);
    CHECK(k.numbers_consecutive);   /* suppressed events take no number */
}

static void test_adjustments_off_keeps_only_the_full_press(void)
{
    kinds_t k;
    gated_run(true, false, &k);
    CHECK_EQ(count_kind(&k, KIND(TOUCH_DOWN)) + count_kind(&k, KIND(TOUCH_UP)), 0u);
    CHECK_EQ(count_kind(&k, KIND(LIGHT_PRESS_DOWN)) + count_kind(&k, KIND(LIGHT_PRESS_UP)), 0u);
    CHECK_EQ(count_kind(&k, KIND(SLIDE)), 0u);
    CHECK_EQ(count_kind(&k, KIND(FULL_PRESS_DOWN)), 1u);
    CHECK_EQ(count_kind(&k, KIND(FULL_PRESS_UP)), 1u);
    CHECK_EQ(count_kind(&k, KIND(BUTTON_DOWN)), 1u);
    CHECK(k.numbers_consecutive);
}

static void test_a_gate_closing_mid_press_still_pairs_the_events(void)
{
    static cc_input_t in;
    cc_input_config_t cfg;
    uint64_t t = 0;
    kinds_t k;
    memset(&k, 0, sizeof k);
    k.numbers_consecutive = true;
    cc_input_default_config(&cfg);
    cc_input_init(&in, &cfg);
    step(&in, &t, 0, false, 0u, 0u, 100u, &k);
    step(&in, &t, 1200, true, 100u, 0u, 60u, &k);   /* touch and light press reported */
    cc_input_set_gates(&in, false, false);
    step(&in, &t, 3500, true, 400u, 0u, 60u, &k);   /* full press: not reported */
    cc_input_set_gates(&in, true, true);
    step(&in, &t, 0, false, 400u, 0u, 60u, &k);     /* its release neither; light and touch up are */
    CHECK_EQ(count_kind(&k, KIND(TOUCH_DOWN)), 1u);
    CHECK_EQ(count_kind(&k, KIND(TOUCH_UP)), 1u);
    CHECK_EQ(count_kind(&k, KIND(LIGHT_PRESS_DOWN)), 1u);
    CHECK_EQ(count_kind(&k, KIND(LIGHT_PRESS_UP)), 1u);
    CHECK_EQ(count_kind(&k, KIND(FULL_PRESS_DOWN)), 0u);
    CHECK_EQ(count_kind(&k, KIND(FULL_PRESS_UP)), 0u);
    CHECK_EQ(count_kind(&k, KIND(SLIDE)), 0u);
}

static void test_set_settings_gates_the_device(void)
{
    harness_t *h = hx_setup();
    REQUIRE(hx_handshake(h, 2));
    set_settings(h, 2, 0, 0, SW_OFF, 0);
    REQUIRE(hx_find(h, CC_PKT_RESPONSE, 2) != NULL);
    CHECK(!h->dev.input.gate_camera_control);
    CHECK(h->dev.input.gate_adjustments);
    hx_reboot(h);   /* and after a reset */
    CHECK(!h->dev.input.gate_camera_control);
    CHECK(h->dev.input.gate_adjustments);
}

const cc_test_case_t cc_tests_settings[] = {
    {"slot_round_trip_and_blank", test_slot_round_trip_and_blank},
    {"every_damaged_byte_is_refused", test_every_damaged_byte_is_refused},
    {"a_value_out_of_range_with_a_good_crc_is_refused", test_a_value_out_of_range_with_a_good_crc_is_refused},
    {"newest_valid_slot_wins", test_newest_valid_slot_wins},
    {"corrupt_slot_falls_back_to_the_other", test_corrupt_slot_falls_back_to_the_other},
    {"both_bad_gives_the_defaults_and_says_so", test_both_bad_gives_the_defaults_and_says_so},
    {"handshake_announces_settings", test_handshake_announces_settings},
    {"defaults_on_a_blank_store", test_defaults_on_a_blank_store},
    {"settings_survive_a_reset", test_settings_survive_a_reset},
    {"a_write_cut_at_every_byte_keeps_the_last_good_copy", test_a_write_cut_at_every_byte_keeps_the_last_good_copy},
    {"a_corrupt_store_boots_with_the_defaults", test_a_corrupt_store_boots_with_the_defaults},
    {"bad_values_change_nothing", test_bad_values_change_nothing},
    {"each_bad_field_is_named", test_each_bad_field_is_named},
    {"a_failed_write_or_a_force_that_does_not_fit_changes_nothing",
     test_a_failed_write_or_a_force_that_does_not_fit_changes_nothing},
    {"without_a_store_settings_last_until_a_reset", test_without_a_store_settings_last_until_a_reset},
    {"gates_open_report_everything", test_gates_open_report_everything},
    {"camera_control_off_reports_only_the_buttons", test_camera_control_off_reports_only_the_buttons},
    {"adjustments_off_keeps_only_the_full_press", test_adjustments_off_keeps_only_the_full_press},
    {"a_gate_closing_mid_press_still_pairs_the_events", test_a_gate_closing_mid_press_still_pairs_the_events},
    {"set_settings_gates_the_device", test_set_settings_gates_the_device},
};
const size_t cc_tests_settings_count = CC_TEST_COUNT(cc_tests_settings);
