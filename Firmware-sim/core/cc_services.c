/* CameraControl firmware core: the v1 methods (DeviceService, InputService,
 * ConfigService, FeedbackService, DiagnosticsService). */
#include "cc_services.h"

#include <string.h>

#include "CameraControlProto.h"
#include "cc_link.h"
#include "cc_rpc_reply.h"
#include "cc_streams.h"
#include "cc_text.h"
#include "cc_wire.h"

/* Sample rates Configure accepts, announced in Capabilities. */
static const uint32_t k_sample_rates_hz[] = {100u, 250u, 500u, 1000u};
#define SAMPLE_RATE_COUNT (sizeof k_sample_rates_hz / sizeof k_sample_rates_hz[0])

/* Largest value of IndicatorMode and Sound, and of an 0xRRGGBB colour. */
#define INDICATOR_MODE_MAX ((uint32_t)CAMERACONTROL__V1__INDICATOR_MODE__INDICATOR_MODE_BLINK)
#define SOUND_MAX ((uint32_t)CAMERACONTROL__V1__SOUND__SOUND_END_VIDEO_RECORDING)
#define HAPTIC_PATTERN_MAX ((uint32_t)CAMERACONTROL__V1__HAPTIC_PATTERN__HAPTIC_PATTERN_LIMIT)
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

/* The messages the device sends are written with cc_pbw.h (the field numbers
 * of Proto/cameracontrol/v1/, in order); protobuf-c only unpacks requests.
 * Firmware-sim/tests check every one against protobuf-c's packing. */

/* Thresholds (common.proto) as embedded message field `field`. */
static void write_thresholds(cc_pbw_t *w, uint32_t field, const cc_input_config_t *cfg)
{
    cc_pbw_begin(w, field);
    cc_pbw_varint(w, 1u, cfg->light_press_on_mn);
    cc_pbw_varint(w, 2u, cfg->light_press_off_mn);
    cc_pbw_varint(w, 3u, cfg->full_press_on_mn);
    cc_pbw_varint(w, 4u, cfg->full_press_off_mn);
    cc_pbw_varint(w, 5u, cfg->min_stage_gap_mn);
    cc_pbw_end(w);
}

/* ---- DeviceService ---- */

static void handshake_mismatch(cc_device_t *dev, uint32_t call_id, uint32_t host_major, uint32_t host_minor,
                               uint64_t now_us)
{
    char message[64];
    size_t pos = 0;
    pos = cc_text_append(message, pos, sizeof message, "device speaks protocol ");
    pos = cc_text_append_u32(message, pos, sizeof message, CC_PROTOCOL_MAJOR);
    pos = cc_text_append(message, pos, sizeof message, ".");
    pos = cc_text_append_u32(message, pos, sizeof message, CC_PROTOCOL_MINOR);
    pos = cc_text_append(message, pos, sizeof message, ", host ");
    pos = cc_text_append_u32(message, pos, sizeof message, host_major);
    pos = cc_text_append(message, pos, sizeof message, ".");
    (void)cc_text_append_u32(message, pos, sizeof message, host_minor);
    cc_rpc_error(dev, call_id, CC_STATUS_FAILED_PRECONDITION, message, now_us);
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

static void handle_handshake(cc_device_t *dev, const cc_envelope_t *env, const ProtobufCMessage *request,
                             uint64_t now_us)
{
    const Cameracontrol__V1__HandshakeRequest *req = (const Cameracontrol__V1__HandshakeRequest *)request;
    const cc_device_info_t *info = dev->info;
    const cc_hal_t *hal = dev->hal;
    uint32_t host_major = req->host_version != NULL ? req->host_version->major : 0u;
    uint32_t host_minor = req->host_version != NULL ? req->host_version->minor : 0u;

    cc_pbw_t w;
    uint32_t buttons[4];
    uint32_t patterns[HAPTIC_PATTERN_MAX];
    size_t n;
    uint32_t p;

    if (host_major != CC_PROTOCOL_MAJOR) {
        handshake_mismatch(dev, env->call_id, host_major, host_minor, now_us);
        return;
    }

    /* A new session: end every call (ERROR CANCELLED, before the response),
     * reset the sequence state, new id. Configuration is device state: it
     * survives (PROTOCOL.md §9). */
    cc_rpc_cancel_all_calls(dev, "new session", now_us);
    dev->negotiated_minor = min_u32(host_minor, CC_PROTOCOL_MINOR);
    dev->session_call_id = env->call_id;
    dev->session_id = next_session_id(dev, now_us);
    cc_link_start_session(&dev->link, env->sequence, now_us);

    /* HandshakeResponse (device.proto) */
    cc_rpc_begin_response(dev, env->call_id, &w);
    cc_pbw_begin(&w, 1u);   /* device_version: ProtocolVersion */
    cc_pbw_varint(&w, 1u, CC_PROTOCOL_MAJOR);
    cc_pbw_varint(&w, 2u, CC_PROTOCOL_MINOR);
    cc_pbw_end(&w);
    cc_pbw_begin(&w, 2u);   /* negotiated_version */
    cc_pbw_varint(&w, 1u, CC_PROTOCOL_MAJOR);
    cc_pbw_varint(&w, 2u, dev->negotiated_minor);
    cc_pbw_end(&w);
    cc_pbw_begin(&w, 3u);   /* identity: DeviceIdentity */
    cc_pbw_string(&w, 1u, info->vendor);
    cc_pbw_string(&w, 2u, info->model);
    cc_pbw_string(&w, 3u, info->serial_number);
    cc_pbw_string(&w, 4u, info->firmware_version);
    cc_pbw_varint(&w, 5u, info->usb_vendor_id);
    cc_pbw_varint(&w, 6u, info->usb_product_id);
    cc_pbw_end(&w);

    cc_pbw_begin(&w, 4u);   /* capabilities: Capabilities */
    cc_pbw_varint(&w, 1u, info->has_force_sensor ? 1u : 0u);
    cc_pbw_varint(&w, 2u, info->has_touch_sensor ? 1u : 0u);
    cc_pbw_varint(&w, 3u, info->has_slide_strip ? 1u : 0u);
    n = 0;
    if ((info->buttons & CC_BUTTON_VOLUME_UP) != 0u) {
        buttons[n++] = (uint32_t)CAMERACONTROL__V1__INPUT_SOURCE__INPUT_SOURCE_VOLUME_UP;
    }
    if ((info->buttons & CC_BUTTON_VOLUME_DOWN) != 0u) {
        buttons[n++] = (uint32_t)CAMERACONTROL__V1__INPUT_SOURCE__INPUT_SOURCE_VOLUME_DOWN;
    }
    if ((info->buttons & CC_BUTTON_ACTION) != 0u) {
        buttons[n++] = (uint32_t)CAMERACONTROL__V1__INPUT_SOURCE__INPUT_SOURCE_ACTION_BUTTON;
    }
    if (info->has_remote) {
        buttons[n++] = (uint32_t)CAMERACONTROL__V1__INPUT_SOURCE__INPUT_SOURCE_REMOTE;
    }
    cc_pbw_packed(&w, 4u, buttons, n);
    cc_pbw_varint(&w, 5u, info->force_max_mn);
    cc_pbw_varint(&w, 6u, info->slide_resolution);
    cc_pbw_varint(&w, 7u, info->slide_length_um);
    cc_pbw_packed(&w, 8u, k_sample_rates_hz, SAMPLE_RATE_COUNT);
    cc_pbw_varint(&w, 9u, CC_MAX_FRAME_BYTES);
    cc_pbw_varint(&w, 10u, CC_MAX_CONCURRENT_CALLS);
    cc_pbw_varint(&w, 11u, info->max_controls);
    cc_pbw_varint(&w, 12u, (info->has_force_sensor && info->has_touch_sensor && info->has_slide_strip) ? 1u : 0u);
    n = 0;
    if (hal->haptic_play != NULL) {
        for (p = 1u; p <= HAPTIC_PATTERN_MAX; p++) {
            if ((info->haptic_patterns & (1u << p)) != 0u) {
                patterns[n++] = p;
            }
        }
    }
    cc_pbw_packed(&w, 13u, patterns, n);
    cc_pbw_varint(&w, 14u, (info->has_speaker && hal->sound_play != NULL) ? 1u : 0u);
    cc_pbw_varint(&w, 15u, (info->has_indicator_led && hal->indicator_set != NULL) ? 1u : 0u);
    write_thresholds(&w, 16u, &dev->config);
    cc_pbw_varint(&w, 17u, CC_HEARTBEAT_INTERVAL_MS);
    cc_pbw_varint(&w, 18u, dev->is_simulator ? 1u : 0u);
    cc_pbw_end(&w);

    cc_pbw_varint(&w, 5u, now_us);   /* device_time_us */
    cc_pbw_varint(&w, 6u, dev->session_id);
    cc_rpc_respond_written(dev, env->call_id, &w, now_us);
}

static void handle_ping(cc_device_t *dev, const cc_envelope_t *env, const ProtobufCMessage *request,
                        uint64_t now_us)
{
    const Cameracontrol__V1__PingRequest *req = (const Cameracontrol__V1__PingRequest *)request;
    cc_pbw_t w;
    /* PingResponse (device.proto); the request sits in the arena, not in the payload buffer */
    cc_rpc_begin_response(dev, env->call_id, &w);
    cc_pbw_bytes(&w, 1u, req->payload.data, req->payload.len);
    cc_pbw_varint(&w, 2u, now_us);
    cc_rpc_respond_written(dev, env->call_id, &w, now_us);
}

/* ---- InputService ---- */

static void invalid_argument(cc_device_t *dev, uint32_t call_id, const char *why, uint64_t now_us);

static void handle_stream_input_events(cc_device_t *dev, const cc_envelope_t *env,
                                       const ProtobufCMessage *request, uint64_t now_us)
{
    (void)request;
    cc_streams_open_events(dev, env->call_id);
    cc_rpc_confirm_stream(dev, env->call_id, now_us);
}

static void handle_stream_raw_samples(cc_device_t *dev, const cc_envelope_t *env,
                                      const ProtobufCMessage *request, uint64_t now_us)
{
    const Cameracontrol__V1__StreamRawSamplesRequest *req =
        (const Cameracontrol__V1__StreamRawSamplesRequest *)request;
    if (!cc_streams_open_raw(dev, env->call_id, req->samples_per_batch)) {
        invalid_argument(dev, env->call_id, "samples_per_batch must be 0 or 1..32", now_us);
        return;
    }
    cc_rpc_confirm_stream(dev, env->call_id, now_us);
}

/* ---- ConfigService ---- */

static void respond_config(cc_device_t *dev, uint32_t call_id, uint64_t now_us)
{
    cc_pbw_t w;
    /* Config (config.proto) */
    cc_rpc_begin_response(dev, call_id, &w);
    write_thresholds(&w, 1u, &dev->config);
    cc_pbw_varint(&w, 2u, dev->config.sample_rate_hz);
    cc_pbw_varint(&w, 3u, dev->config.slide_interval_ms);
    cc_pbw_varint(&w, 4u, dev->config.debounce_ms);
    cc_rpc_respond_written(dev, call_id, &w, now_us);
}

static void handle_get_config(cc_device_t *dev, const cc_envelope_t *env, const ProtobufCMessage *request,
                              uint64_t now_us)
{
    (void)request;
    respond_config(dev, env->call_id, now_us);
}

static void invalid_argument(cc_device_t *dev, uint32_t call_id, const char *why, uint64_t now_us)
{
    dev->counters.invalid_arguments++;
    cc_rpc_error(dev, call_id, CC_STATUS_INVALID_ARGUMENT, why, now_us);
}

static void handle_configure(cc_device_t *dev, const cc_envelope_t *env, const ProtobufCMessage *request,
                             uint64_t now_us)
{
    const Cameracontrol__V1__ConfigureRequest *req = (const Cameracontrol__V1__ConfigureRequest *)request;
    const Cameracontrol__V1__Config *c = req->config;
    cc_input_config_t cfg;
    const char *why = NULL;

    if (c == NULL || c->thresholds == NULL) {
        invalid_argument(dev, env->call_id, "config and thresholds are required", now_us);
        return;
    }
    cfg.light_press_on_mn = c->thresholds->light_press_on_mn;
    cfg.light_press_off_mn = c->thresholds->light_press_off_mn;
    cfg.full_press_on_mn = c->thresholds->full_press_on_mn;
    cfg.full_press_off_mn = c->thresholds->full_press_off_mn;
    cfg.min_stage_gap_mn = c->thresholds->min_stage_gap_mn;
    cfg.sample_rate_hz = c->sample_rate_hz;
    cfg.slide_interval_ms = c->slide_interval_ms;
    cfg.debounce_ms = c->debounce_ms;
    if (cfg.light_press_on_mn == 0u || cfg.light_press_off_mn == 0u || cfg.full_press_on_mn == 0u
        || cfg.full_press_off_mn == 0u || cfg.min_stage_gap_mn == 0u || cfg.sample_rate_hz == 0u
        || cfg.slide_interval_ms == 0u || cfg.debounce_ms == 0u) {
        invalid_argument(dev, env->call_id, "zero is not a valid value", now_us);
        return;
    }
    if (!cc_services_sample_rate_supported(cfg.sample_rate_hz)) {
        invalid_argument(dev, env->call_id, "unsupported sample_rate_hz", now_us);
        return;
    }
    if (cc_input_validate_config(&cfg, &why) != 0) {
        invalid_argument(dev, env->call_id, why != NULL ? why : "invalid config", now_us);
        return;
    }
    dev->apply_config(dev, &cfg, now_us);   /* installed by cc_device_init */
    respond_config(dev, env->call_id, now_us);
}

/* ---- FeedbackService ---- */

static void respond_feedback(cc_device_t *dev, uint32_t call_id, uint64_t now_us)
{
    cc_pbw_t w;
    /* FeedbackResponse (feedback.proto) */
    cc_rpc_begin_response(dev, call_id, &w);
    cc_pbw_varint(&w, 1u, now_us);   /* device_time_us */
    cc_rpc_respond_written(dev, call_id, &w, now_us);
}

static void handle_play_haptic(cc_device_t *dev, const cc_envelope_t *env, const ProtobufCMessage *request,
                               uint64_t now_us)
{
    const Cameracontrol__V1__PlayHapticRequest *req = (const Cameracontrol__V1__PlayHapticRequest *)request;
    uint32_t pattern = (uint32_t)req->pattern;
    uint32_t intensity = req->intensity_percent;

    if (dev->hal->haptic_play == NULL) {
        cc_rpc_error(dev, env->call_id, CC_STATUS_FAILED_PRECONDITION, "no haptic actuator", now_us);
        return;
    }
    if (pattern == 0u || pattern > HAPTIC_PATTERN_MAX) {
        invalid_argument(dev, env->call_id, "unknown haptic pattern", now_us);
        return;
    }
    if ((dev->info->haptic_patterns & (1u << pattern)) == 0u) {
        cc_rpc_error(dev, env->call_id, CC_STATUS_FAILED_PRECONDITION, "haptic pattern not playable", now_us);
        return;
    }
    if (intensity > INTENSITY_MAX) {
        invalid_argument(dev, env->call_id, "intensity_percent must be 0..100", now_us);
        return;
    }
    if (intensity == 0u) {
        intensity = CC_DEFAULT_HAPTIC_INTENSITY;
    }
    dev->hal->haptic_play(dev->hal->ctx, pattern, intensity);
    respond_feedback(dev, env->call_id, now_us);
}

static void handle_play_sound(cc_device_t *dev, const cc_envelope_t *env, const ProtobufCMessage *request,
                              uint64_t now_us)
{
    const Cameracontrol__V1__PlaySoundRequest *req = (const Cameracontrol__V1__PlaySoundRequest *)request;
    uint32_t sound = (uint32_t)req->sound;

    if (dev->hal->sound_play == NULL || !dev->info->has_speaker) {
        cc_rpc_error(dev, env->call_id, CC_STATUS_FAILED_PRECONDITION, "no speaker", now_us);
        return;
    }
    if (sound == 0u || sound > SOUND_MAX) {
        invalid_argument(dev, env->call_id, "unknown sound", now_us);
        return;
    }
    dev->hal->sound_play(dev->hal->ctx, sound);
    respond_feedback(dev, env->call_id, now_us);
}

static void handle_set_indicator(cc_device_t *dev, const cc_envelope_t *env, const ProtobufCMessage *request,
                                 uint64_t now_us)
{
    const Cameracontrol__V1__SetIndicatorRequest *req = (const Cameracontrol__V1__SetIndicatorRequest *)request;
    uint32_t mode = (uint32_t)req->mode;

    if (dev->hal->indicator_set == NULL || !dev->info->has_indicator_led) {
        cc_rpc_error(dev, env->call_id, CC_STATUS_FAILED_PRECONDITION, "no indicator LED", now_us);
        return;
    }
    if (mode > INDICATOR_MODE_MAX) {
        invalid_argument(dev, env->call_id, "unknown indicator mode", now_us);
        return;
    }
    if (req->rgb > RGB_MAX) {
        invalid_argument(dev, env->call_id, "rgb must be 0xRRGGBB", now_us);
        return;
    }
    dev->hal->indicator_set(dev->hal->ctx, mode, req->rgb);
    respond_feedback(dev, env->call_id, now_us);
}

/* ---- DiagnosticsService ---- */

/* Counters (diagnostics.proto): uptime_us is field 1 and the counters are
 * fields 2, 3, ... in CC_COUNTER_FIELDS' order (the schema's numbers follow
 * it; scripts/generate-proto writes the list), every one a varint. */
static void respond_counters(cc_device_t *dev, uint32_t call_id, const cc_counters_t *c, uint64_t now_us)
{
#define CC_COUNTER_OFFSET(name) (uint8_t) offsetof(cc_counters_t, name),
    static const uint8_t offsets[CC_COUNTER_COUNT] = {CC_COUNTER_FIELDS(CC_COUNTER_OFFSET)};
#undef CC_COUNTER_OFFSET
    cc_pbw_t w;
    uint32_t i;
    cc_rpc_begin_response(dev, call_id, &w);
    cc_pbw_varint(&w, 1u, now_us);
    for (i = 0; i < CC_COUNTER_COUNT; i++) {
        /* each counter is a uint32_t member: read as one */
        cc_pbw_varint(&w, i + 2u, *(const uint32_t *)(const void *)((const uint8_t *)c + offsets[i]));
    }
    cc_rpc_respond_written(dev, call_id, &w, now_us);
}

static void handle_get_counters(cc_device_t *dev, const cc_envelope_t *env, const ProtobufCMessage *request,
                                uint64_t now_us)
{
    (void)request;
    respond_counters(dev, env->call_id, &dev->counters, now_us);
}

static void handle_reset_counters(cc_device_t *dev, const cc_envelope_t *env, const ProtobufCMessage *request,
                                  uint64_t now_us)
{
    cc_counters_t before = dev->counters;
    (void)request;
    memset(&dev->counters, 0, sizeof dev->counters);
    respond_counters(dev, env->call_id, &before, now_us);   /* the values that were cleared */
}

/* ---- the table ---- */

static const cc_method_t k_methods[] = {
    {CC_SERVICE_DEVICE_SERVICE, CC_METHOD_DEVICE_SERVICE_HANDSHAKE,
     &cameracontrol__v1__handshake_request__descriptor, handle_handshake},
    {CC_SERVICE_DEVICE_SERVICE, CC_METHOD_DEVICE_SERVICE_PING,
     &cameracontrol__v1__ping_request__descriptor, handle_ping},
    {CC_SERVICE_INPUT_SERVICE, CC_METHOD_INPUT_SERVICE_STREAM_INPUT_EVENTS,
     &cameracontrol__v1__stream_input_events_request__descriptor, handle_stream_input_events},
    {CC_SERVICE_INPUT_SERVICE, CC_METHOD_INPUT_SERVICE_STREAM_RAW_SAMPLES,
     &cameracontrol__v1__stream_raw_samples_request__descriptor, handle_stream_raw_samples},
    {CC_SERVICE_CONFIG_SERVICE, CC_METHOD_CONFIG_SERVICE_GET_CONFIG,
     &cameracontrol__v1__get_config_request__descriptor, handle_get_config},
    {CC_SERVICE_CONFIG_SERVICE, CC_METHOD_CONFIG_SERVICE_CONFIGURE,
     &cameracontrol__v1__configure_request__descriptor, handle_configure},
    {CC_SERVICE_FEEDBACK_SERVICE, CC_METHOD_FEEDBACK_SERVICE_PLAY_HAPTIC,
     &cameracontrol__v1__play_haptic_request__descriptor, handle_play_haptic},
    {CC_SERVICE_FEEDBACK_SERVICE, CC_METHOD_FEEDBACK_SERVICE_PLAY_SOUND,
     &cameracontrol__v1__play_sound_request__descriptor, handle_play_sound},
    {CC_SERVICE_FEEDBACK_SERVICE, CC_METHOD_FEEDBACK_SERVICE_SET_INDICATOR,
     &cameracontrol__v1__set_indicator_request__descriptor, handle_set_indicator},
    {CC_SERVICE_DIAGNOSTICS_SERVICE, CC_METHOD_DIAGNOSTICS_SERVICE_GET_COUNTERS,
     &cameracontrol__v1__get_counters_request__descriptor, handle_get_counters},
    {CC_SERVICE_DIAGNOSTICS_SERVICE, CC_METHOD_DIAGNOSTICS_SERVICE_RESET_COUNTERS,
     &cameracontrol__v1__reset_counters_request__descriptor, handle_reset_counters},
};

const cc_method_t *cc_services_methods(size_t *count)
{
    *count = sizeof k_methods / sizeof k_methods[0];
    return k_methods;
}
