/* CameraControl firmware core: the v1 methods (DeviceService, InputService,
 * ConfigService, FeedbackService, DiagnosticsService). */
#include "cc_services.h"

#include <stddef.h>
#include <string.h>

#include "cc_ids.h"
#include "cc_link.h"
#include "cc_pb.h"
#include "cc_rpc_reply.h"
#include "cc_settings.h"
#include "cc_streams.h"
#include "cc_text.h"
#include "cc_wire.h"

/* What the device announces: the port's constants in a board core built with
 * CC_HAL_BOARD_INFO (cc_device_info.h), with the port's serial number
 * (CC_BOARD_SERIAL); else the info given to cc_device_init. */
#if defined(CC_HAL_BOARD_INFO)
#include "board_info.h"
static const cc_device_info_t k_board_info = CC_BOARD_INFO(CC_BOARD_SERIAL);   /* its serial number read at boot */
#define INFO(dev) ((void)(dev), &k_board_info)
#else
#define INFO(dev) ((dev)->info)
#endif

/* Sample rates Configure accepts (cc_input_validate_config), announced in Capabilities. */
static const uint32_t k_sample_rates_hz[] = {100u, 250u, 500u, 1000u};
#define SAMPLE_RATE_COUNT (sizeof k_sample_rates_hz / sizeof k_sample_rates_hz[0])

/* Largest value of IndicatorMode and Sound, and of an 0xRRGGBB colour. */
#define INDICATOR_MODE_MAX ((uint32_t)CC_PB_INDICATOR_MODE_MAX)
#define SOUND_MAX ((uint32_t)CC_PB_SOUND_MAX)
#define HAPTIC_PATTERN_MAX ((uint32_t)CC_PB_HAPTIC_PATTERN_MAX)
#define RGB_MAX 0xFFFFFFu
#define INTENSITY_MAX 100u

bool cc_services_sample_rate_supported(uint32_t hz)
{
    size_t i;
    for (i = 0; i < SAMPLE_RATE_COUNT; i++) {
        if (k_sample_rates_hz[i] == hz) {
            return true;
        }
    }
    return false;
}

/* ---- small helpers ---- */

static uint32_t min_u32(uint32_t a, uint32_t b)
{
    return a < b ? a : b;
}

static uint32_t mix32(uint32_t x)
{
    x ^= x >> 16;
    x *= 0x7FEB352Du;
    x ^= x >> 15;
    x *= 0x846CA68Bu;
    x ^= x >> 16;
    return x;
}

/* The messages the device sends are filled in as the generated view structs
 * of cc_pb.h and written by their generated writers; requests are read by the
 * generated readers. CC_PB_FILLED(message, n) stops the build when the schema
 * gives a message a field this file does not fill yet. */
#define CC_PB_FILLED(name, count, n) typedef char cc_pb_filled_##name[(count) == (n) ? 1 : -1]

/* Thresholds (common.proto) from a configuration. */
CC_PB_FILLED(thresholds, CC_PB_THRESHOLDS_FIELD_COUNT, 5u);
/* A view struct copied whole from the start of a core struct: the member lies
 * at the same offset with the same size in both, and has the same type (a
 * comparison of distinct pointer types is a diagnostic, an error under -Werror;
 * checked at compile time, nothing is evaluated). */
#define SAME_MEMBER(view, core, name)                                                                           \
    typedef char cc_same_##core##_##name[offsetof(view, name) == offsetof(core, name)                           \
                                                 && sizeof(((view *)0)->name) == sizeof(((core *)0)->name)      \
                                             ? 1                                                                \
                                             : -1];                                                             \
    typedef char cc_same_type_##core##_##name[sizeof(&((view *)0)->name == &((core *)0)->name)]
#define VIEW_FITS(view, core) typedef char cc_fits_##view[sizeof(view) <= sizeof(core) ? 1 : -1]

/* cc_input_config_t begins with the thresholds, member for member, so they are
 * copied whole: 20 bytes less flash on the micro:bit than five copies, in the
 * handshake and in respond_config. */
VIEW_FITS(cc_pb_thresholds_t, cc_input_config_t);
SAME_MEMBER(cc_pb_thresholds_t, cc_input_config_t, light_press_on_mn);
SAME_MEMBER(cc_pb_thresholds_t, cc_input_config_t, light_press_off_mn);
SAME_MEMBER(cc_pb_thresholds_t, cc_input_config_t, full_press_on_mn);
SAME_MEMBER(cc_pb_thresholds_t, cc_input_config_t, full_press_off_mn);
SAME_MEMBER(cc_pb_thresholds_t, cc_input_config_t, min_stage_gap_mn);
static void thresholds_of(cc_pb_thresholds_t *t, const cc_input_config_t *cfg)
{
    memcpy(t, cfg, sizeof *t);
}

/* ---- DeviceService ---- */

/* "device speaks protocol 1.2, host ": the device's version is text at compile
 * time (one string, not four appends); the digits are checked against the numbers. */
#define DEVICE_MAJOR 1
#define DEVICE_MINOR 2
#if DEVICE_MAJOR != CC_PROTOCOL_MAJOR || DEVICE_MINOR != CC_PROTOCOL_MINOR
#error "DEVICE_MAJOR and DEVICE_MINOR must be CC_PROTOCOL_MAJOR and CC_PROTOCOL_MINOR"
#endif
#define TEXT_OF(x) #x
#define TEXT(x) TEXT_OF(x)
#define DEVICE_SPEAKS "device speaks protocol " TEXT(DEVICE_MAJOR) "." TEXT(DEVICE_MINOR) ", host "

static void handshake_mismatch(cc_device_t *dev, const cc_request_t *rq, uint32_t host_major, uint32_t host_minor)
{
    char message[64];
    size_t pos = cc_text_append(message, 0, sizeof message, DEVICE_SPEAKS);
    pos = cc_text_append_u32(message, pos, sizeof message, host_major);
    pos = cc_text_append(message, pos, sizeof message, ".");
    (void)cc_text_append_u32(message, pos, sizeof message, host_minor);
    cc_rpc_fail(dev, rq, CC_STATUS_FAILED_PRECONDITION, message);
}

static uint32_t next_session_id(cc_device_t *dev, uint64_t now_us)
{
    uint32_t id;
    dev->handshakes++;
    id = mix32((uint32_t)now_us ^ mix32((uint32_t)(now_us >> 32) ^ (dev->handshakes * 0x9E3779B9u)));
    if (id == 0u || id == dev->session_id) {
        id = dev->session_id + 1u;
        if (id == 0u) {
            id = 1u;
        }
    }
    return id;
}

CC_PB_FILLED(handshake_response, CC_PB_HANDSHAKE_RESPONSE_FIELD_COUNT, 6u);
CC_PB_FILLED(protocol_version, CC_PB_PROTOCOL_VERSION_FIELD_COUNT, 2u);
CC_PB_FILLED(device_identity, CC_PB_DEVICE_IDENTITY_FIELD_COUNT, 6u);
CC_PB_FILLED(capabilities, CC_PB_CAPABILITIES_FIELD_COUNT, 20u);
/* cc_device_info_t begins with the identity's members, so the handshake copies
 * them whole: 16 bytes less flash on the micro:bit than six copies. */
VIEW_FITS(cc_pb_device_identity_t, cc_device_info_t);
SAME_MEMBER(cc_pb_device_identity_t, cc_device_info_t, vendor);
SAME_MEMBER(cc_pb_device_identity_t, cc_device_info_t, model);
SAME_MEMBER(cc_pb_device_identity_t, cc_device_info_t, serial_number);
SAME_MEMBER(cc_pb_device_identity_t, cc_device_info_t, firmware_version);
SAME_MEMBER(cc_pb_device_identity_t, cc_device_info_t, usb_vendor_id);
SAME_MEMBER(cc_pb_device_identity_t, cc_device_info_t, usb_product_id);

/* Capabilities' singular uint32 and bool fields, by field number (cc_pb.h: the
 * view struct's value array; a bool as 0 or 1) */
#define CAP(field) caps.value[CC_PB_CAPABILITIES_##field]

static void handle_handshake(cc_device_t *dev, const cc_request_t *rq)
{
    const cc_envelope_t *env = rq->env;
    cc_pb_handshake_request_in_t req;
    const cc_device_info_t *info = INFO(dev);
    const cc_hal_t *hal = dev->hal;
    uint32_t host_major;
    uint32_t host_minor;

    cc_pbw_t w;
    int32_t buttons[4];
    int32_t patterns[HAPTIC_PATTERN_MAX];
    uint32_t p;
    cc_pb_protocol_version_t device_version = {CC_PROTOCOL_MAJOR, CC_PROTOCOL_MINOR};
    cc_pb_protocol_version_t negotiated;
    cc_pb_device_identity_t identity;
    cc_pb_thresholds_t thresholds;
    cc_pb_capabilities_t caps;
    cc_pb_handshake_response_t resp;

    if (!cc_rpc_read(dev, rq, cc_pbr_read_handshake_request(&req, env->payload, env->payload_len))) {
        return;
    }
    host_major = req.host_version.major;   /* 0 when absent */
    host_minor = req.host_version.minor;
    if (host_major != CC_PROTOCOL_MAJOR) {
        handshake_mismatch(dev, rq, host_major, host_minor);
        return;
    }

    /* A new session: end every call (ERROR CANCELLED, before the response),
     * reset the sequence state, new id. Configuration is device state: it
     * survives (PROTOCOL.md §9). */
    cc_rpc_cancel_all_calls(dev, "new session", rq->now_us);
    dev->negotiated_minor = min_u32(host_minor, CC_PROTOCOL_MINOR);
    dev->session_call_id = env->call_id;
    dev->session_id = next_session_id(dev, rq->now_us);
    cc_link_start_session(&dev->link, env->sequence, rq->now_us);

    negotiated.major = CC_PROTOCOL_MAJOR;
    negotiated.minor = dev->negotiated_minor;
    memcpy(&identity, info, sizeof identity);   /* the identity's members begin cc_device_info_t (checked above) */

    CAP(HAS_FORCE_SENSOR) = info->has_force_sensor;
    CAP(HAS_TOUCH_SENSOR) = info->has_touch_sensor;
    CAP(HAS_SLIDE_STRIP) = info->has_slide_strip;
    caps.buttons = buttons;
    caps.buttons_count = 0;
    if ((info->buttons & CC_BUTTON_VOLUME_UP) != 0u) {
        buttons[caps.buttons_count++] = CC_PB_INPUT_SOURCE_VOLUME_UP;
    }
    if ((info->buttons & CC_BUTTON_VOLUME_DOWN) != 0u) {
        buttons[caps.buttons_count++] = CC_PB_INPUT_SOURCE_VOLUME_DOWN;
    }
    if ((info->buttons & CC_BUTTON_ACTION) != 0u) {
        buttons[caps.buttons_count++] = CC_PB_INPUT_SOURCE_ACTION_BUTTON;
    }
#if !defined(CC_HAL_NO_REMOTE)   /* a board core without a remote announces none (cc_hal.h): it sends no REMOTE event */
    if (info->has_remote) {
        buttons[caps.buttons_count++] = CC_PB_INPUT_SOURCE_REMOTE;
    }
#endif
    CAP(FORCE_MAX_MN) = info->force_max_mn;
    CAP(SLIDE_RESOLUTION) = info->slide_resolution;
    CAP(SLIDE_LENGTH_UM) = info->slide_length_um;
    caps.sample_rates_hz = k_sample_rates_hz;
    caps.sample_rates_hz_count = SAMPLE_RATE_COUNT;
    CAP(MAX_FRAME_BYTES) = CC_MAX_FRAME_BYTES;
    CAP(MAX_CONCURRENT_CALLS) = CC_MAX_CONCURRENT_CALLS;
    CAP(MAX_CONTROLS) = info->max_controls;
    CAP(SUPPORTS_CONTROLS) = info->has_force_sensor && info->has_touch_sensor && info->has_slide_strip;
    caps.haptic_patterns = patterns;
    caps.haptic_patterns_count = 0;
    if (CC_HAL_HAS_HAPTIC(hal)) {
        for (p = 1u; p <= HAPTIC_PATTERN_MAX; p++) {
            if ((info->haptic_patterns & (1u << p)) != 0u) {
                patterns[caps.haptic_patterns_count++] = (int32_t)p;
            }
        }
    }
    CAP(HAS_SPEAKER) = info->has_speaker && CC_HAL_HAS_SOUND(hal);
    CAP(HAS_INDICATOR_LED) = info->has_indicator_led && CC_HAL_HAS_INDICATOR(hal);
    thresholds_of(&thresholds, &dev->config);
    caps.thresholds = &thresholds;
    CAP(HEARTBEAT_INTERVAL_MS) = CC_HEARTBEAT_INTERVAL_MS;
    CAP(IS_SIMULATOR) = dev->is_simulator;
    CAP(HAS_SETTINGS) = 1u;
    CAP(SETTINGS_PERSIST) = CC_HAL_HAS_STORE(hal);

    resp.device_version = &device_version;
    resp.negotiated_version = &negotiated;
    resp.identity = &identity;
    resp.capabilities = &caps;
    resp.device_time_us = rq->now_us;
    resp.session_id = dev->session_id;
    cc_rpc_begin_response(dev, rq, &w);
    cc_pbw_write_handshake_response(&w, &resp);
    cc_rpc_respond_written(dev, rq, &w);
}

CC_PB_FILLED(ping_response, CC_PB_PING_RESPONSE_FIELD_COUNT, 2u);

static void handle_ping(cc_device_t *dev, const cc_request_t *rq)
{
    const cc_envelope_t *env = rq->env;
    cc_pb_ping_request_in_t req;
    cc_pb_ping_response_t resp;
    cc_pbw_t w;
    if (!cc_rpc_read(dev, rq, cc_pbr_read_ping_request(&req, env->payload, env->payload_len))) {
        return;
    }
    /* the payload is a view into the received frame, not into the link's payload buffer */
    resp.payload = req.payload;
    resp.device_time_us = rq->now_us;
    cc_rpc_begin_response(dev, rq, &w);
    cc_pbw_write_ping_response(&w, &resp);
    cc_rpc_respond_written(dev, rq, &w);
}

/* ---- InputService ---- */

static void invalid_argument(cc_device_t *dev, const cc_request_t *rq, const char *why);

/* Opens a stream and confirms it (both InputService methods, one body). */
static void open_stream(cc_device_t *dev, const cc_request_t *rq, cc_call_kind_t kind, uint32_t samples_per_batch)
{
    if (!cc_streams_open(dev, rq->env->call_id, kind, samples_per_batch)) {
        invalid_argument(dev, rq, "samples_per_batch must be 0..32");
        return;
    }
    cc_rpc_confirm_stream(dev, rq);
}

static void handle_stream_input_events(cc_device_t *dev, const cc_request_t *rq)
{
    const cc_envelope_t *env = rq->env;
    cc_pb_stream_input_events_request_in_t req;
    if (!cc_rpc_read(dev, rq, cc_pbr_read_stream_input_events_request(&req, env->payload, env->payload_len))) {
        return;
    }
    open_stream(dev, rq, CC_CALL_EVENT_STREAM, 0u);
}

static void handle_stream_raw_samples(cc_device_t *dev, const cc_request_t *rq)
{
    const cc_envelope_t *env = rq->env;
    cc_pb_stream_raw_samples_request_in_t req;
    if (!cc_rpc_read(dev, rq, cc_pbr_read_stream_raw_samples_request(&req, env->payload, env->payload_len))) {
        return;
    }
    open_stream(dev, rq, CC_CALL_RAW_STREAM, req.samples_per_batch);
}

/* ---- ConfigService ---- */

CC_PB_FILLED(config, CC_PB_CONFIG_FIELD_COUNT, 4u);

static void respond_config(cc_device_t *dev, const cc_request_t *rq)
{
    cc_pbw_t w;
    cc_pb_thresholds_t thresholds;
    cc_pb_config_t config;
    thresholds_of(&thresholds, &dev->config);
    config.thresholds = &thresholds;
    config.sample_rate_hz = dev->config.sample_rate_hz;
    config.slide_interval_ms = dev->config.slide_interval_ms;
    config.debounce_ms = dev->config.debounce_ms;
    cc_rpc_begin_response(dev, rq, &w);
    cc_pbw_write_config(&w, &config);
    cc_rpc_respond_written(dev, rq, &w);
}

static void handle_get_config(cc_device_t *dev, const cc_request_t *rq)
{
    const cc_envelope_t *env = rq->env;
    cc_pb_get_config_request_in_t req;
    if (!cc_rpc_read(dev, rq, cc_pbr_read_get_config_request(&req, env->payload, env->payload_len))) {
        return;
    }
    respond_config(dev, rq);
}

static void invalid_argument(cc_device_t *dev, const cc_request_t *rq, const char *why)
{
    dev->counters.invalid_arguments++;
    cc_rpc_fail(dev, rq, CC_STATUS_INVALID_ARGUMENT, why);
}

/* A received Config holds, from its thresholds on, the members of
 * cc_input_config_t in the same order with the same types (the thresholds'
 * five, then sample_rate_hz, slide_interval_ms, debounce_ms), so Configure
 * copies them whole, and every member is a uint32_t, so one loop finds a zero:
 * 28 bytes less flash on the micro:bit than eight copies and eight compares
 * (alone, the copy costs 4 bytes and the loop saves 4). Checked at compile
 * time, as SAME_MEMBER. */
#define CONFIG_AT offsetof(cc_pb_config_in_t, thresholds)
#define SAME_CONFIG_MEMBER(in, name)                                                                          \
    typedef char cc_same_config_##name[offsetof(cc_pb_config_in_t, in) == CONFIG_AT + offsetof(cc_input_config_t, name) \
                                               && sizeof(((cc_pb_config_in_t *)0)->in) == sizeof(uint32_t)    \
                                           ? 1                                                                \
                                           : -1];                                                             \
    typedef char cc_same_config_type_##name[sizeof(&((cc_pb_config_in_t *)0)->in == &((cc_input_config_t *)0)->name)]
SAME_CONFIG_MEMBER(thresholds.light_press_on_mn, light_press_on_mn);
SAME_CONFIG_MEMBER(thresholds.light_press_off_mn, light_press_off_mn);
SAME_CONFIG_MEMBER(thresholds.full_press_on_mn, full_press_on_mn);
SAME_CONFIG_MEMBER(thresholds.full_press_off_mn, full_press_off_mn);
SAME_CONFIG_MEMBER(thresholds.min_stage_gap_mn, min_stage_gap_mn);
SAME_CONFIG_MEMBER(sample_rate_hz, sample_rate_hz);
SAME_CONFIG_MEMBER(slide_interval_ms, slide_interval_ms);
SAME_CONFIG_MEMBER(debounce_ms, debounce_ms);
typedef char cc_input_config_words[sizeof(cc_input_config_t) == 8u * sizeof(uint32_t) ? 1 : -1];

static void handle_configure(cc_device_t *dev, const cc_request_t *rq)
{
    const cc_envelope_t *env = rq->env;
    cc_pb_configure_request_in_t req;
    const cc_pb_config_in_t *c = &req.config;
    cc_input_config_t cfg;
    const char *why = NULL;

    if (!cc_rpc_read(dev, rq, cc_pbr_read_configure_request(&req, env->payload, env->payload_len))) {
        return;
    }
    if (!req.has_config || !c->has_thresholds) {
        invalid_argument(dev, rq, "need config and thresholds");
        return;
    }
    memcpy(&cfg, (const unsigned char *)c + CONFIG_AT, sizeof cfg);   /* the same members (checked above) */
    /* a zero member (its text names it), the orderings, the force range, the sample rate (the rates
     * announced in Capabilities: tests/test_services.c) and the two intervals */
    if (cc_input_validate_config(&cfg, INFO(dev)->force_max_mn, &why) != 0) {
        invalid_argument(dev, rq, why);   /* set with every refusal (cc_input.h) */
        return;
    }
    dev->apply_config(dev, &cfg, rq->now_us);   /* installed by cc_device_init */
    respond_config(dev, rq);
}

/* ---- ConfigService: the user's settings (v1.2) ---- */

static bool has_store(const cc_device_t *dev)
{
    return CC_HAL_HAS_STORE(dev->hal);
}

/* The configuration c with the light-press thresholds of force. */
static void with_force(cc_input_config_t *c, uint8_t force)
{
    uint32_t on = c->light_press_on_mn;
    uint32_t off = c->light_press_off_mn;
    (void)cc_settings_light_press_mn(force, &on, &off);
    c->light_press_on_mn = on;
    c->light_press_off_mn = off;
}

static void apply_gates(cc_device_t *dev, const cc_settings_t *s)
{
    cc_input_set_gates(&dev->input, s->camera_control == (uint8_t)CC_PB_SETTING_SWITCH_ON,
                       s->camera_adjustments == (uint8_t)CC_PB_SETTING_SWITCH_ON);
}

void cc_services_load_settings(cc_device_t *dev, uint64_t now_us)
{
    const cc_hal_t *hal = dev->hal;
    uint8_t slots[CC_SETTINGS_SLOTS][CC_SETTINGS_SLOT_BYTES];
    const uint8_t *read[CC_SETTINGS_SLOTS] = {NULL, NULL};
    cc_input_config_t cfg = dev->config;
    uint32_t i;

    if (has_store(dev)) {
        for (i = 0; i < CC_SETTINGS_SLOTS; i++) {
            if (hal->settings_read(hal->ctx, i, slots[i], CC_SETTINGS_SLOT_BYTES)) {
                read[i] = slots[i];
            }
        }
    }
    cc_settings_load(&dev->settings, has_store(dev), read[0], read[1]);
    with_force(&cfg, dev->settings.current.light_press_force);
    if (cc_input_validate_config(&cfg, INFO(dev)->force_max_mn, NULL) == 0) {   /* always, from the default full press */
        dev->apply_config(dev, &cfg, now_us);
    }
    apply_gates(dev, &dev->settings.current);
}

CC_PB_FILLED(settings, CC_PB_SETTINGS_FIELD_COUNT, 4u);
CC_PB_FILLED(settings_response, CC_PB_SETTINGS_RESPONSE_FIELD_COUNT, 3u);

static void respond_settings(cc_device_t *dev, const cc_request_t *rq)
{
    cc_pbw_t w;
    cc_pb_settings_t settings;
    cc_pb_settings_response_t resp;
    const cc_settings_t *s = &dev->settings.current;
    settings.light_press_force = s->light_press_force;
    settings.double_light_press_speed = s->double_light_press_speed;
    settings.camera_control = s->camera_control;
    settings.camera_adjustments = s->camera_adjustments;
    resp.settings = &settings;
    resp.origin = dev->settings.origin;
    resp.writes = dev->settings.writes;
    cc_rpc_begin_response(dev, rq, &w);
    cc_pbw_write_settings_response(&w, &resp);
    cc_rpc_respond_written(dev, rq, &w);
}

static void handle_get_settings(cc_device_t *dev, const cc_request_t *rq)
{
    const cc_envelope_t *env = rq->env;
    cc_pb_get_settings_request_in_t req;
    if (!cc_rpc_read(dev, rq, cc_pbr_read_get_settings_request(&req, env->payload, env->payload_len))) {
        return;
    }
    respond_settings(dev, rq);
}

/* A requested field: 0 keeps *field, 1..max replaces it; false above max. */
static bool take_setting(uint8_t *field, int32_t requested, int32_t max)
{
    if (requested < 0 || requested > max) {
        return false;
    }
    if (requested != 0) {
        *field = (uint8_t)requested;
    }
    return true;
}

uint8_t cc_services_change_settings(cc_device_t *dev, const cc_settings_t *next, uint64_t now_us, const char **why)
{
    cc_input_config_t cfg = dev->config;
    bool stored = false;

    if (cc_settings_equal(next, &dev->settings.current)) {
        return CC_STATUS_OK;   /* nothing changes, nothing is written */
    }
    if (next->light_press_force != dev->settings.current.light_press_force) {
        with_force(&cfg, next->light_press_force);
        if (cc_input_validate_config(&cfg, INFO(dev)->force_max_mn, NULL) != 0) {
            *why = "light_press_force does not fit the full press";
            return CC_STATUS_FAILED_PRECONDITION;
        }
    }
    if (has_store(dev)) {
        uint8_t slot[CC_SETTINGS_SLOT_BYTES];
        uint32_t index = cc_settings_prepare(&dev->settings, next, slot);
        if (!dev->hal->settings_write(dev->hal->ctx, index, slot, sizeof slot)) {
            *why = "settings store write failed";
            return CC_STATUS_INTERNAL;
        }
        stored = true;
    }
    cc_settings_commit(&dev->settings, next, stored);
    if (cfg.light_press_on_mn != dev->config.light_press_on_mn
        || cfg.light_press_off_mn != dev->config.light_press_off_mn) {
        dev->apply_config(dev, &cfg, now_us);
    }
    apply_gates(dev, next);
    return CC_STATUS_OK;
}

/* Settings (config.proto) as received and as kept lie in the same order,
 * int32_t after int32_t and uint8_t after uint8_t: SetSettings takes them by
 * one loop over this table, in field order. Checked at compile time, member by
 * member: the k-th received one is an int32_t at the first's offset + 4k, the
 * k-th kept one a uint8_t at offset k. */
#define SETTING_IN_AT(member, k)                                                                      \
    (offsetof(cc_pb_settings_in_t, member)                                                            \
         == offsetof(cc_pb_settings_in_t, light_press_force) + (k) * sizeof(int32_t)                  \
     && sizeof(((const cc_pb_settings_in_t *)0)->member) == sizeof(int32_t))
#define SETTING_KEPT_AT(member, k) \
    (offsetof(cc_settings_t, member) == (k) && sizeof(((const cc_settings_t *)0)->member) == 1u)
typedef char cc_settings_in_run[SETTING_IN_AT(light_press_force, 0u) && SETTING_IN_AT(double_light_press_speed, 1u)
                                        && SETTING_IN_AT(camera_control, 2u) && SETTING_IN_AT(camera_adjustments, 3u)
                                    ? 1
                                    : -1];
typedef char cc_settings_run[SETTING_KEPT_AT(light_press_force, 0u) && SETTING_KEPT_AT(double_light_press_speed, 1u)
                                     && SETTING_KEPT_AT(camera_control, 2u) && SETTING_KEPT_AT(camera_adjustments, 3u)
                                 ? 1
                                 : -1];
static const struct {
    int32_t max;
    const char *unknown;
} k_setting_fields[4] = {
    {CC_PB_LIGHT_PRESS_FORCE_MAX, "unknown light_press_force"},
    {CC_PB_DOUBLE_LIGHT_PRESS_SPEED_MAX, "unknown double_light_press_speed"},
    {CC_PB_SETTING_SWITCH_MAX, "unknown camera_control"},
    {CC_PB_SETTING_SWITCH_MAX, "unknown camera_adjustments"},
};

static void handle_set_settings(cc_device_t *dev, const cc_request_t *rq)
{
    const cc_envelope_t *env = rq->env;
    cc_pb_set_settings_request_in_t req;
    /* the four, in order (checked above) */
    const unsigned char *requested = (const unsigned char *)&req.settings + offsetof(cc_pb_settings_in_t, light_press_force);
    cc_settings_t next = dev->settings.current;
    unsigned char *kept = (unsigned char *)&next;
    const char *why = NULL;
    uint8_t status;
    uint32_t i;

    if (!cc_rpc_read(dev, rq, cc_pbr_read_set_settings_request(&req, env->payload, env->payload_len))) {
        return;
    }
    for (i = 0; i < 4u && req.has_settings; i++) {
        if (!take_setting(&kept[i], *(const int32_t *)(const void *)(requested + i * sizeof(int32_t)),
                          k_setting_fields[i].max)) {
            invalid_argument(dev, rq, k_setting_fields[i].unknown);
            return;
        }
    }
    status = cc_services_change_settings(dev, &next, rq->now_us, &why);
    if (status != CC_STATUS_OK) {
        cc_rpc_fail(dev, rq, status, why);
        return;
    }
    respond_settings(dev, rq);
}

/* ---- FeedbackService ---- */

CC_PB_FILLED(feedback_response, CC_PB_FEEDBACK_RESPONSE_FIELD_COUNT, 1u);

static void respond_feedback(cc_device_t *dev, const cc_request_t *rq)
{
    cc_pbw_t w;
    cc_pb_feedback_response_t resp;
    resp.device_time_us = rq->now_us;
    cc_rpc_begin_response(dev, rq, &w);
    cc_pbw_write_feedback_response(&w, &resp);
    cc_rpc_respond_written(dev, rq, &w);
}

#if defined(CC_HAL_NO_HAPTIC) || defined(CC_HAL_NO_SOUND)
/* A method for a part the board core is built without (cc_hal.h): the request
 * is read, then refused. It is read as GetConfigRequest, a message without
 * fields: PlayHapticRequest's and PlaySoundRequest's fields are all varints,
 * which their own readers take and skip the same way (a field of another wire
 * type skipped), so the same requests are malformed; the values would not be
 * looked at. A field the schema adds to either stops the build here. */
typedef char cc_absent_parts_read_varints[CC_PB_PLAY_HAPTIC_REQUEST_FIELD_COUNT == 2u
                                                  && CC_PB_PLAY_SOUND_REQUEST_FIELD_COUNT == 1u
                                                  && CC_PB_GET_CONFIG_REQUEST_FIELD_COUNT == 0u
                                              ? 1
                                              : -1];
static void refuse_absent(cc_device_t *dev, const cc_request_t *rq, const char *why)
{
    cc_pb_get_config_request_in_t req;
    if (cc_rpc_read(dev, rq, cc_pbr_read_get_config_request(&req, rq->env->payload, rq->env->payload_len))) {
        cc_rpc_fail(dev, rq, CC_STATUS_FAILED_PRECONDITION, why);
    }
}
#endif

static void handle_play_haptic(cc_device_t *dev, const cc_request_t *rq)
{
#if defined(CC_HAL_NO_HAPTIC)
    refuse_absent(dev, rq, "no haptic actuator");
#else
    const cc_envelope_t *env = rq->env;
    cc_pb_play_haptic_request_in_t req;
    uint32_t pattern;
    uint32_t intensity;

    if (!cc_rpc_read(dev, rq, cc_pbr_read_play_haptic_request(&req, env->payload, env->payload_len))) {
        return;
    }
    pattern = (uint32_t)req.pattern;
    intensity = req.intensity_percent;

    if (!CC_HAL_HAS_HAPTIC(dev->hal)) {
        cc_rpc_fail(dev, rq, CC_STATUS_FAILED_PRECONDITION, "no haptic actuator");
        return;
    }
    if (pattern == 0u || pattern > HAPTIC_PATTERN_MAX) {
        invalid_argument(dev, rq, "unknown haptic pattern");
        return;
    }
    if (intensity > INTENSITY_MAX) {   /* an invalid argument before a pattern this actuator lacks (§7) */
        invalid_argument(dev, rq, "intensity_percent must be 0..100");
        return;
    }
    if ((INFO(dev)->haptic_patterns & (1u << pattern)) == 0u) {
        cc_rpc_fail(dev, rq, CC_STATUS_FAILED_PRECONDITION, "haptic pattern not playable");
        return;
    }
    if (intensity == 0u) {
        intensity = CC_DEFAULT_HAPTIC_INTENSITY;
    }
    dev->hal->haptic_play(dev->hal->ctx, pattern, intensity);
    respond_feedback(dev, rq);
#endif
}

static void handle_play_sound(cc_device_t *dev, const cc_request_t *rq)
{
#if defined(CC_HAL_NO_SOUND)
    refuse_absent(dev, rq, "no speaker");
#else
    const cc_envelope_t *env = rq->env;
    cc_pb_play_sound_request_in_t req;
    uint32_t sound;

    if (!cc_rpc_read(dev, rq, cc_pbr_read_play_sound_request(&req, env->payload, env->payload_len))) {
        return;
    }
    sound = (uint32_t)req.sound;

    if (!CC_HAL_HAS_SOUND(dev->hal) || !INFO(dev)->has_speaker) {
        cc_rpc_fail(dev, rq, CC_STATUS_FAILED_PRECONDITION, "no speaker");
        return;
    }
    if (sound == 0u || sound > SOUND_MAX) {
        invalid_argument(dev, rq, "unknown sound");
        return;
    }
    dev->hal->sound_play(dev->hal->ctx, sound);
    respond_feedback(dev, rq);
#endif
}

static void handle_set_indicator(cc_device_t *dev, const cc_request_t *rq)
{
    const cc_envelope_t *env = rq->env;
    cc_pb_set_indicator_request_in_t req;
    uint32_t mode;

    if (!cc_rpc_read(dev, rq, cc_pbr_read_set_indicator_request(&req, env->payload, env->payload_len))) {
        return;
    }
    mode = (uint32_t)req.mode;

    if (!CC_HAL_HAS_INDICATOR(dev->hal) || !INFO(dev)->has_indicator_led) {
        cc_rpc_fail(dev, rq, CC_STATUS_FAILED_PRECONDITION, "no indicator LED");
        return;
    }
    if (mode > INDICATOR_MODE_MAX) {
        invalid_argument(dev, rq, "unknown indicator mode");
        return;
    }
    if (req.rgb > RGB_MAX) {
        invalid_argument(dev, rq, "rgb must be 0xRRGGBB");
        return;
    }
    dev->hal->indicator_set(dev->hal->ctx, mode, req.rgb);
    respond_feedback(dev, rq);
}

/* ---- DiagnosticsService ---- */

/* Counters (diagnostics.proto): uptime_us from the clock since boot, every other field
 * from cc_counters_t (CC_COUNTER_FIELDS: the schema's counters, generated).
 * cc_counters_t lies in cc_pb_counters_t after uptime_us member for member
 * (checked below), so it is copied whole: 88 bytes less flash on the micro:bit
 * than a copy field by field. */
CC_PB_FILLED(counters, CC_PB_COUNTERS_FIELD_COUNT, CC_COUNTER_COUNT + 1u);
#define COUNTERS_AT (offsetof(cc_pb_counters_t, uptime_us) + sizeof(uint64_t))   /* the counters after uptime_us */
typedef char cc_counters_fit[COUNTERS_AT + sizeof(cc_counters_t) <= sizeof(cc_pb_counters_t) ? 1 : -1];
#define CC_COUNTER_AT(name) \
    typedef char cc_counter_at_##name[offsetof(cc_pb_counters_t, name) == COUNTERS_AT + offsetof(cc_counters_t, name) \
                                          ? 1                                                                        \
                                          : -1];
CC_COUNTER_FIELDS(CC_COUNTER_AT)
#undef CC_COUNTER_AT

/* Answers with the counters; reset: clears them once they are in the answer
 * (it carries the values that were cleared). */
static void respond_counters(cc_device_t *dev, const cc_request_t *rq, bool reset)
{
    cc_pbw_t w;
    cc_pb_counters_t resp;
    resp.uptime_us = CC_UPTIME_US(dev, rq->now_us);
    memcpy((unsigned char *)&resp + COUNTERS_AT, &dev->counters, sizeof dev->counters);
    if (reset) {
        memset(&dev->counters, 0, sizeof dev->counters);
    }
    cc_rpc_begin_response(dev, rq, &w);
    cc_pbw_write_counters(&w, &resp);
    cc_rpc_respond_written(dev, rq, &w);
}

static void handle_get_counters(cc_device_t *dev, const cc_request_t *rq)
{
    const cc_envelope_t *env = rq->env;
    cc_pb_get_counters_request_in_t req;
    if (!cc_rpc_read(dev, rq, cc_pbr_read_get_counters_request(&req, env->payload, env->payload_len))) {
        return;
    }
    respond_counters(dev, rq, false);
}

static void handle_reset_counters(cc_device_t *dev, const cc_request_t *rq)
{
    const cc_envelope_t *env = rq->env;
    cc_pb_reset_counters_request_in_t req;
    if (!cc_rpc_read(dev, rq, cc_pbr_read_reset_counters_request(&req, env->payload, env->payload_len))) {
        return;
    }
    respond_counters(dev, rq, true);
}

/* ---- the table ---- */

static const cc_method_t k_methods[] = {
    {CC_SERVICE_DEVICE_SERVICE, CC_METHOD_DEVICE_SERVICE_HANDSHAKE, handle_handshake},
    {CC_SERVICE_DEVICE_SERVICE, CC_METHOD_DEVICE_SERVICE_PING, handle_ping},
    {CC_SERVICE_INPUT_SERVICE, CC_METHOD_INPUT_SERVICE_STREAM_INPUT_EVENTS, handle_stream_input_events},
    {CC_SERVICE_INPUT_SERVICE, CC_METHOD_INPUT_SERVICE_STREAM_RAW_SAMPLES, handle_stream_raw_samples},
    {CC_SERVICE_CONFIG_SERVICE, CC_METHOD_CONFIG_SERVICE_GET_CONFIG, handle_get_config},
    {CC_SERVICE_CONFIG_SERVICE, CC_METHOD_CONFIG_SERVICE_CONFIGURE, handle_configure},
    {CC_SERVICE_CONFIG_SERVICE, CC_METHOD_CONFIG_SERVICE_GET_SETTINGS, handle_get_settings},
    {CC_SERVICE_CONFIG_SERVICE, CC_METHOD_CONFIG_SERVICE_SET_SETTINGS, handle_set_settings},
    {CC_SERVICE_FEEDBACK_SERVICE, CC_METHOD_FEEDBACK_SERVICE_PLAY_HAPTIC, handle_play_haptic},
    {CC_SERVICE_FEEDBACK_SERVICE, CC_METHOD_FEEDBACK_SERVICE_PLAY_SOUND, handle_play_sound},
    {CC_SERVICE_FEEDBACK_SERVICE, CC_METHOD_FEEDBACK_SERVICE_SET_INDICATOR, handle_set_indicator},
    {CC_SERVICE_DIAGNOSTICS_SERVICE, CC_METHOD_DIAGNOSTICS_SERVICE_GET_COUNTERS, handle_get_counters},
    {CC_SERVICE_DIAGNOSTICS_SERVICE, CC_METHOD_DIAGNOSTICS_SERVICE_RESET_COUNTERS, handle_reset_counters},
};

const cc_method_t *cc_services_methods(size_t *count)
{
    *count = sizeof k_methods / sizeof k_methods[0];
    return k_methods;
}
