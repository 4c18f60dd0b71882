/* Test harness: mock HAL and test host. */
#include "harness.h"

#include <string.h>

#include "cc_ids.h"
#include "cc_wire.h"

static harness_t g_harness;

/* ---- mock HAL ---- */

static uint64_t mock_now_us(void *ctx)
{
    return ((harness_t *)ctx)->now_us;
}

static void host_receive_byte(harness_t *h, uint8_t byte)
{
    cc_frame_result_t r = cc_frame_decoder_feed(&h->host_decoder, byte);
    if (r == CC_FRAME_OK) {
        size_t len;
        const uint8_t *body = cc_frame_decoder_body(&h->host_decoder, &len);
        cc_envelope_t env;
        hx_packet_t *p;
        if (cc_envelope_parse(body, len, &env) != CC_ENVELOPE_OK || h->npackets >= HX_MAX_PACKETS) {
            h->host_decode_errors++;
            return;
        }
        p = &h->packets[h->npackets++];
        p->type = env.type;
        p->flags = env.flags;
        p->sequence = env.sequence;
        p->call_id = env.call_id;
        p->status = env.status;
        p->received_us = h->now_us;
        p->payload_len = env.payload_len;
        memcpy(p->payload, env.payload, env.payload_len);
        if (h->ack_replies && (env.flags & CC_WIRE_FLAG_RELIABLE) != 0u
            && (env.type == CC_PKT_RESPONSE || env.type == CC_PKT_ERROR)) {
            hx_ack(h, env.sequence);
        }
    } else if (r != CC_FRAME_NEED_MORE && r != CC_FRAME_EMPTY) {
        h->host_decode_errors++;
    }
}

static size_t mock_uart_read(void *ctx, uint8_t *buf, size_t cap)
{
    harness_t *h = (harness_t *)ctx;
    size_t n = h->rx_len - h->rx_pos;
    if (n > cap) {
        n = cap;
    }
    if (h->rx_split_seed != 0u) {
        size_t limit;
        h->rx_split_seed = h->rx_split_seed * 1664525u + 1013904223u;
        limit = 1u + (h->rx_split_seed >> 16) % 17u;
        if (n > limit) {
            n = limit;
        }
    }
    memcpy(buf, h->rx + h->rx_pos, n);
    h->rx_pos += n;
    if (h->rx_pos == h->rx_len) {
        h->rx_pos = 0;
        h->rx_len = 0;
    }
    return n;
}

static size_t mock_uart_write(void *ctx, const uint8_t *buf, size_t len)
{
    harness_t *h = (harness_t *)ctx;
    size_t i;
    if (h->tx_blocked) {
        return 0;
    }
    if (h->tx_limit != 0u && len > h->tx_limit) {
        len = h->tx_limit;
    }
    if (h->tx_per_ms != 0u) {
        if (h->now_us / 1000u != h->tx_window_ms) {
            h->tx_window_ms = h->now_us / 1000u;
            h->tx_window_bytes = 0;
        }
        if (len > h->tx_per_ms - h->tx_window_bytes) {
            len = h->tx_per_ms - h->tx_window_bytes;
        }
        h->tx_window_bytes += len;
    }
    for (i = 0; i < len; i++) {
        host_receive_byte(h, buf[i]);
    }
    h->tx_bytes += len;
    return len;
}

static void mock_read_sensors(void *ctx, cc_sensor_reading_t *out)
{
    harness_t *h = (harness_t *)ctx;
    *out = h->reading;
    out->buttons = h->buttons;
    out->remote_clicks = h->remote_clicks;   /* taken: counted once */
    h->remote_clicks = 0;
}

static void mock_haptic_play(void *ctx, uint32_t pattern, uint32_t intensity)
{
    harness_t *h = (harness_t *)ctx;
    h->haptic_calls++;
    h->last_haptic_pattern = pattern;
    h->last_haptic_intensity = intensity;
}

static void mock_sound_play(void *ctx, uint32_t sound)
{
    harness_t *h = (harness_t *)ctx;
    h->sound_calls++;
    h->last_sound = sound;
}

static void mock_indicator_set(void *ctx, uint32_t mode, uint32_t rgb)
{
    harness_t *h = (harness_t *)ctx;
    h->indicator_calls++;
    h->last_indicator_mode = mode;
    h->last_indicator_rgb = rgb;
}

static uint32_t mock_uart_take_overruns(void *ctx)
{
    harness_t *h = (harness_t *)ctx;
    uint32_t n = h->overruns;
    h->overruns = 0;
    return n;
}

static bool mock_settings_read(void *ctx, uint32_t slot, uint8_t *buf, size_t len)
{
    harness_t *h = (harness_t *)ctx;
    if (slot >= CC_SETTINGS_SLOTS || len != CC_SETTINGS_SLOT_BYTES) {
        return false;
    }
    memcpy(buf, h->store[slot], len);
    return true;
}

/* Flash-like: the slot is erased (0xFF) first, then programmed byte by byte;
 * store_cut_after stops the programming part-way (a reset mid-write). */
static bool mock_settings_write(void *ctx, uint32_t slot, const uint8_t *buf, size_t len)
{
    harness_t *h = (harness_t *)ctx;
    size_t n = len;
    h->store_writes++;
    if (slot >= CC_SETTINGS_SLOTS || len != CC_SETTINGS_SLOT_BYTES || h->store_fail) {
        return false;
    }
    memset(h->store[slot], 0xFF, CC_SETTINGS_SLOT_BYTES);
    if (h->store_cut_after >= 0 && (size_t)h->store_cut_after < n) {
        n = (size_t)h->store_cut_after;
    }
    memcpy(h->store[slot], buf, n);
    return n == len;
}

static harness_t *setup(bool feedback)
{
    harness_t *h = &g_harness;
    memset(h, 0, sizeof *h);
    h->now_us = 1000000u;
    h->hal.ctx = h;
    h->hal.now_us = mock_now_us;
    h->hal.uart_read = mock_uart_read;
    h->hal.uart_write = mock_uart_write;
    h->hal.read_sensors = mock_read_sensors;
    h->hal.uart_take_overruns = mock_uart_take_overruns;
    h->hal.settings_read = mock_settings_read;
    h->hal.settings_write = mock_settings_write;
    memset(h->store, 0xFF, sizeof h->store);
    h->store_cut_after = -1;
    h->ack_replies = true;
    if (feedback) {
        h->hal.haptic_play = mock_haptic_play;
        h->hal.sound_play = mock_sound_play;
        h->hal.indicator_set = mock_indicator_set;
    }
    h->info.vendor = "Test";
    h->info.model = "M";
    h->info.serial_number = "0001";
    h->info.firmware_version = "1";   /* short: the handshake fits a 128-byte frame */
    h->info.has_force_sensor = true;
    h->info.has_touch_sensor = true;
    h->info.has_slide_strip = true;
    h->info.buttons = CC_BUTTON_VOLUME_UP | CC_BUTTON_VOLUME_DOWN;
    h->info.force_max_mn = 8000u;
    h->info.slide_resolution = 1024u;
    h->info.slide_length_um = 20000u;
    h->info.max_controls = 6u;
    h->info.haptic_patterns = (1u << 1) | (1u << 2) | (1u << 3) | (1u << 4);
    h->info.has_speaker = true;
    h->info.has_indicator_led = true;
    cc_frame_decoder_init(&h->host_decoder);
    cc_device_init(&h->dev, &h->hal, &h->info);
    return h;
}

harness_t *hx_setup(void)
{
    return setup(true);
}

harness_t *hx_setup_without_feedback(void)
{
    return setup(false);
}

harness_t *hx_setup_without_store(void)
{
    harness_t *h = setup(true);
    h->hal.settings_read = NULL;
    h->hal.settings_write = NULL;
    cc_device_init(&h->dev, &h->hal, &h->info);
    return h;
}

void hx_reboot(harness_t *h)
{
    h->rx_len = 0;
    h->rx_pos = 0;
    h->npackets = 0;
    h->host_sequence = 0;
    h->store_cut_after = -1;
    h->store_fail = false;
    cc_frame_decoder_init(&h->host_decoder);
    cc_device_init(&h->dev, &h->hal, &h->info);
}

/* ---- test host ---- */

void hx_send_raw(harness_t *h, const uint8_t *bytes, size_t len)
{
    if (h->rx_len + len > HX_RX_BYTES) {
        len = HX_RX_BYTES - h->rx_len;
    }
    memcpy(h->rx + h->rx_len, bytes, len);
    h->rx_len += len;
    h->rx_total += len;
}

void hx_send_packet_seq(harness_t *h, uint16_t seq, uint8_t type, uint8_t flags, uint32_t call_id,
                        uint8_t service, uint8_t method, const uint8_t *payload, size_t len)
{
    uint8_t body[HX_MAX_SEND_BYTES];
    uint8_t wire[CC_FRAME_WIRE_BYTES(HX_MAX_SEND_BYTES + 2u)];
    cc_envelope_t env;
    size_t n;
    if (len > HX_MAX_SEND_BYTES - CC_WIRE_MAX_ENVELOPE_BYTES - CC_WIRE_CHECK_BYTES) {
        len = HX_MAX_SEND_BYTES - CC_WIRE_MAX_ENVELOPE_BYTES - CC_WIRE_CHECK_BYTES;   /* the test host's limit */
    }
    memset(&env, 0, sizeof env);
    env.type = type;
    env.flags = flags;
    env.sequence = seq;
    env.call_id = call_id;
    env.service = service;
    env.method = method;
    env.status = service;
    n = cc_envelope_write(&env, body, sizeof body);
    if (len > 0u) {
        memcpy(body + n, payload, len);
    }
    n = cc_frame_encode(body, n + len, wire, sizeof wire);
    hx_send_raw(h, wire, n);
}

void hx_send_packet(harness_t *h, uint8_t type, uint8_t flags, uint32_t call_id, uint8_t service,
                    uint8_t method, const uint8_t *payload, size_t len)
{
    hx_send_packet_seq(h, h->host_sequence++, type, flags, call_id, service, method, payload, len);
}

void hx_request(harness_t *h, uint32_t call_id, uint8_t service, uint8_t method, const ProtobufCMessage *msg)
{
    uint8_t payload[HX_MAX_SEND_BYTES];
    size_t len = 0;
    if (msg != NULL && protobuf_c_message_get_packed_size(msg) <= sizeof payload) {
        len = protobuf_c_message_pack(msg, payload);
    }
    hx_send_packet(h, CC_PKT_REQUEST, 0, call_id, service, method, payload, len);
}

void hx_cancel(harness_t *h, uint32_t call_id)
{
    hx_send_packet(h, CC_PKT_CANCEL, 0, call_id, 0, 0, NULL, 0);
}

void hx_ack(harness_t *h, uint16_t seq)
{
    uint8_t p[2];
    p[0] = (uint8_t)(seq & 0xFFu);
    p[1] = (uint8_t)(seq >> 8);
    hx_send_packet(h, CC_PKT_ACK, 0, 0, 0, 0, p, 2);
}

void hx_heartbeat(harness_t *h)
{
    hx_send_packet(h, CC_PKT_HEARTBEAT, 0, 0, 0, 0, NULL, 0);
}

void hx_poll(harness_t *h)
{
    unsigned polls = 0;
    do {   /* the device takes a bounded number of bytes per poll */
        cc_device_poll(&h->dev);
    } while (h->rx_len > 0u && ++polls < 64u);
}

void hx_advance(harness_t *h, uint64_t us)
{
    uint64_t end = h->now_us + us;
    while (h->now_us < end) {
        uint64_t step = end - h->now_us < 1000u ? end - h->now_us : 1000u;
        h->now_us += step;
        hx_poll(h);
    }
}

void hx_advance_alive(harness_t *h, uint64_t us)
{
    uint64_t end = h->now_us + us;
    while (h->now_us < end) {
        uint64_t step = end - h->now_us < 20000u ? end - h->now_us : 20000u;
        hx_heartbeat(h);
        hx_advance(h, step);
    }
}

const hx_packet_t *hx_handshake_response(harness_t *h, uint32_t minor)
{
    Cameracontrol__V1__HandshakeRequest req = CAMERACONTROL__V1__HANDSHAKE_REQUEST__INIT;
    Cameracontrol__V1__ProtocolVersion v = CAMERACONTROL__V1__PROTOCOL_VERSION__INIT;
    v.major = 1u;
    v.minor = minor;
    req.host_version = &v;
    req.host_name = "tests";
    h->host_sequence = 0;
    hx_request(h, 1u, CC_SERVICE_DEVICE_SERVICE, CC_METHOD_DEVICE_SERVICE_HANDSHAKE, &req.base);
    hx_poll(h);
    return hx_find(h, CC_PKT_RESPONSE, 1u);
}

bool hx_handshake(harness_t *h, uint32_t minor)
{
    bool ok = hx_handshake_response(h, minor) != NULL;
    hx_clear(h);
    return ok;
}

void hx_clear(harness_t *h)
{
    h->npackets = 0;
}

const hx_packet_t *hx_find(const harness_t *h, uint8_t type, uint32_t call_id)
{
    size_t i;
    for (i = 0; i < h->npackets; i++) {
        if (h->packets[i].type == type && (call_id == HX_ANY_CALL || h->packets[i].call_id == call_id)) {
            return &h->packets[i];
        }
    }
    return NULL;
}

size_t hx_count(const harness_t *h, uint8_t type, uint32_t call_id)
{
    size_t i;
    size_t n = 0;
    for (i = 0; i < h->npackets; i++) {
        if (h->packets[i].type == type && (call_id == HX_ANY_CALL || h->packets[i].call_id == call_id)) {
            n++;
        }
    }
    return n;
}
