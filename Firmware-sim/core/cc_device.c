/* CameraControl firmware core: the device's poll loop. */
#include "cc_device.h"

#include <string.h>

#include "cc_pb.h"
#include "cc_assert.h"
#include "cc_call.h"
#include "cc_envelope.h"
#include "cc_ids.h"
#include "cc_rpc.h"
#include "cc_rpc_reply.h"
#include "cc_services.h"
#include "cc_streams.h"
#include "cc_udiv.h"
#include "cc_wire.h"

#define US_PER_S 1000000u

static uint32_t period_us(uint32_t rate_hz)
{
    return rate_hz == 0u ? US_PER_S : CC_UDIV32(US_PER_S, rate_hz);
}

/* Applies a validated configuration (sampling period, input pipeline); the
 * callback ConfigService gets at init (cc_apply_config_fn). */
static void apply_config(cc_device_t *dev, const cc_input_config_t *cfg, uint64_t now_us)
{
    uint32_t new_period = period_us(cfg->sample_rate_hz);
    if (new_period != dev->sample_period_us) {
        cc_streams_flush_raw(dev, now_us);   /* a batch has one sample interval */
        dev->sample_period_us = new_period;
        dev->next_sample_us = now_us + new_period;
    }
    dev->config = *cfg;
    cc_input_set_config(&dev->input, cfg);
}

void cc_device_init(cc_device_t *dev, const cc_hal_t *hal, const cc_device_info_t *info)
{
#if defined(CC_HAL_BOARD_INFO)
    CC_ASSERT(dev != NULL && hal != NULL);   /* info is not read: the board's own (cc_device_info.h) */
#else
    CC_ASSERT(dev != NULL && hal != NULL && info != NULL);
#endif
    memset(dev, 0, sizeof *dev);
    dev->hal = hal;
    dev->info = info;
    cc_input_default_config(&dev->config);
    cc_input_init(&dev->input, &dev->config);
    dev->sample_period_us = period_us(dev->config.sample_rate_hz);
    dev->next_sample_us = hal->now_us(hal->ctx);
#if !defined(CC_HAL_CLOCK_FROM_BOOT)
    dev->boot_us = dev->next_sample_us;
#endif
    cc_frame_decoder_init(&dev->decoder);
    cc_link_init(&dev->link, &dev->counters, CC_HEARTBEAT_INTERVAL_MS);
    cc_call_table_init(&dev->calls);
    /* wiring, so every call points down: rpc serves the services' table,
     * ConfigService applies a config through the callback */
    {
        size_t count = 0;
        const cc_method_t *methods = cc_services_methods(&count);
        cc_rpc_set_methods(dev, methods, count);
    }
    dev->apply_config = apply_config;
    cc_services_load_settings(dev, dev->next_sample_us);   /* the stored settings, or the defaults */
}

void cc_device_set_extension(cc_device_t *dev, cc_extension_fn fn, void *ctx, bool is_simulator)
{
    cc_rpc_set_extension(dev, fn, ctx);
    dev->is_simulator = is_simulator;
}

void cc_device_set_line_speed(cc_device_t *dev, uint32_t bits_per_second)
{
    cc_link_set_line_speed(&dev->link, bits_per_second);
}

static bool is_handshake_request(const cc_envelope_t *env)
{
    return env->type == CC_PKT_REQUEST && env->service == CC_SERVICE_DEVICE_SERVICE
           && env->method == CC_METHOD_DEVICE_SERVICE_HANDSHAKE;
}

/* A retransmission of the handshake that started the live session: same
 * call id and sequence, and nothing newer received since (PROTOCOL.md §9). */
static bool is_handshake_retransmission(const cc_device_t *dev, const cc_envelope_t *env)
{
    return cc_link_session(&dev->link) && env->call_id == dev->session_call_id
           && cc_link_is_newest(&dev->link, env->sequence);
}

/* One received frame body: envelope, link, RPC. */
static void receive_body(cc_device_t *dev, const uint8_t *body, size_t len, uint64_t now_us)
{
    cc_envelope_t env;
    cc_envelope_result_t r = cc_envelope_parse(body, len, &env);

    if (r == CC_ENVELOPE_TOO_SHORT || r == CC_ENVELOPE_BAD_CALL_ID) {
        dev->counters.envelope_errors++;   /* last in the order of §2: the check was good */
        return;
    }
    dev->counters.frames_received++;
    if (r == CC_ENVELOPE_OK && is_handshake_request(&env)) {
        if (is_handshake_retransmission(dev, &env)) {
            cc_link_drop_duplicate(&dev->link, &env, now_us);
            return;
        }
        /* A (re)connecting host restarts its numbering: the handshake is not
         * checked against the window (a new session re-seeds it; a refused
         * handshake leaves the old session's state alone). */
        cc_link_accept_handshake(&dev->link, &env, now_us);
        cc_rpc_receive(dev, &env, now_us);
        return;
    }
    if (cc_link_receive(&dev->link, &env, now_us) != CC_RX_DELIVER) {
        return;
    }
    if (r == CC_ENVELOPE_UNKNOWN_TYPE) {
        dev->counters.unknown_packet_types++;
        /* Answered on a call id of no live call only: an ERROR would end a
         * live call at the host while it goes on here (§4, v1.2). */
        if (env.call_id != CC_WIRE_LINK_CALL_ID && cc_call_find(&dev->calls, env.call_id) == NULL) {
            cc_rpc_error(dev, env.call_id, CC_STATUS_UNIMPLEMENTED, "unknown packet type", now_us);
        }
        return;
    }
    cc_rpc_receive(dev, &env, now_us);
}

static void receive_byte(cc_device_t *dev, uint8_t byte, uint64_t now_us)
{
    const uint8_t *body;
    size_t len;

    switch (cc_frame_decoder_feed(&dev->decoder, byte)) {
    case CC_FRAME_OK:
        body = cc_frame_decoder_body(&dev->decoder, &len);
        receive_body(dev, body, len, now_us);
        break;
    case CC_FRAME_ERR_FRAMING:
        dev->counters.framing_errors++;
        break;
    case CC_FRAME_ERR_SHORT:
        dev->counters.short_frames++;
        break;
    case CC_FRAME_ERR_CHECK:
        dev->counters.check_errors++;
        break;
    case CC_FRAME_ERR_OVERSIZED:
        dev->counters.oversized_frames++;
        break;
    case CC_FRAME_EMPTY:
        dev->counters.empty_frames++;
        break;
    case CC_FRAME_NEED_MORE:
    default:
        break;
    }
}

/* Room for the largest reply a request can cause (RESPONSE or ERROR of a
 * full frame). Requests are only decoded while it is there, so an answer is
 * never dropped for want of tx space: when many requests arrive at once the
 * rest wait in rx_chunk (and then in the UART) until the line drains. */
static bool tx_has_room_for_reply(const cc_device_t *dev)
{
    return cc_link_tx_free(&dev->link) >= CC_FRAME_WIRE_BYTES(CC_MAX_FRAME_BYTES);
}

/* Reads the UART chunk by chunk and decodes it. The room for a reply is
 * checked before each byte is decoded, not before a read: the chunk holds
 * what was read while there is none (a poll with nothing to read checks
 * nothing). */
static void drain_uart(cc_device_t *dev, uint64_t now_us)
{
    size_t taken = 0;
    for (;;) {
        while (dev->rx_off < dev->rx_len) {
            if (!tx_has_room_for_reply(dev)) {
                /* backpressure; the rest is decoded at a later poll, and the
                 * host, whose bytes wait here, is not dead */
                cc_link_note_rx_pending(&dev->link, now_us);
                return;
            }
            receive_byte(dev, dev->rx_chunk[dev->rx_off++], now_us);
        }
        if (taken >= CC_UART_MAX_BYTES_PER_POLL) {
            return;
        }
        {
            size_t n = dev->hal->uart_read(dev->hal->ctx, dev->rx_chunk, sizeof dev->rx_chunk);
            if (n > sizeof dev->rx_chunk) {
                n = sizeof dev->rx_chunk;   /* a broken HAL must not overrun the chunk */
            }
            if (n == 0u) {
                /* What this poll decoded ended inside a frame, not yet over the largest (a whole frame's
                 * body, valid or not, is no frame arriving): it keeps the link alive (§8) if it began while
                 * the link was: it continues one that did, or it began within the dead timeout of the last
                 * valid frame. So garbage cut by delimiters, whose every frame fails, keeps nothing. */
                if (taken != 0u) {
                    cc_link_frame_arriving(&dev->link, dev->decoder.len != 0u && !dev->decoder.body_ready,
                                           dev->decoder.len >= taken, now_us);
                }
                return;   /* until empty: a HAL may return short reads (rx_off == rx_len here) */
            }
            /* Bytes a HAL dropped were dropped while it held others (its ring full, or the
             * UART's FIFO unread): they are counted with the next bytes read, not asked
             * for at every poll. */
            if (CC_HAL_HAS_OVERRUNS(dev->hal)) {   /* asked without checking under CC_HAL_WITH_OVERRUNS (cc_hal.h) */
                dev->counters.rx_overruns += dev->hal->uart_take_overruns(dev->hal->ctx);
            }
            dev->counters.bytes_received += (uint32_t)n;
            dev->rx_len = n;
            dev->rx_off = 0;
            taken += n;
        }
    }
}

/* The device plays the full-press click itself, without waiting for the host. */
static void play_own_haptics(cc_device_t *dev, const cc_input_event_t *event)
{
    uint32_t pattern;
    if (!CC_HAL_HAS_HAPTIC(dev->hal)) {
        return;
    }
    if (event->kind == (uint32_t)CC_PB_INPUT_EVENT_KIND_FULL_PRESS_DOWN) {
        pattern = (uint32_t)CC_PB_HAPTIC_PATTERN_CLICK;
    } else if (event->kind == (uint32_t)CC_PB_INPUT_EVENT_KIND_FULL_PRESS_UP) {
        pattern = (uint32_t)CC_PB_HAPTIC_PATTERN_RELEASE;
    } else {
        return;
    }
    dev->hal->haptic_play(dev->hal->ctx, pattern, CC_DEFAULT_HAPTIC_INTENSITY);
}

static void sample_input(cc_device_t *dev, uint64_t now_us)
{
    const cc_hal_t *hal = dev->hal;
    cc_sensor_reading_t reading;
    cc_raw_sample_t sample;
    const cc_input_event_t *event;
    uint32_t queued;

    if (now_us < dev->next_sample_us) {
        return;
    }
    dev->next_sample_us += dev->sample_period_us;
    if (dev->next_sample_us <= now_us) {
        dev->next_sample_us = now_us + dev->sample_period_us;   /* fell behind: no burst */
    }
    /* field by field: memset is a byte loop on small cores */
    reading.force_raw_mn = 0;
    reading.position = 0u;
    reading.touched = false;
    reading.buttons = 0u;
    reading.remote_clicks = 0u;
    if (CC_HAL_HAS_SENSORS(hal)) {   /* sensors, buttons and remote clicks: one call */
        hal->read_sensors(hal->ctx, &reading);
    }
    queued = cc_input_step(&dev->input, now_us, &reading);
    /* most samples queue none; each event is read in place (no copy) */
    while (queued != 0u && (event = cc_input_peek_event(&dev->input)) != NULL) {
        play_own_haptics(dev, event);
        cc_streams_publish_event(dev, event, now_us);
        (void)cc_input_pop_event(&dev->input, NULL);
    }
    if (dev->calls.raw_streams != 0u && cc_input_last_sample(&dev->input, &sample)) {
        cc_streams_publish_sample(dev, &sample, now_us);
    }
}

/* Hands the UART what it takes, in the link's priority order. Ends when the
 * UART takes less than offered or nothing waits (every chunk handed over
 * whole is gone, so the loop ends after at most the queued frames). */
static void flush_uart(cc_device_t *dev)
{
    for (;;) {
        size_t pending;
        size_t written;
        const uint8_t *bytes = cc_link_tx_pending(&dev->link, &pending);
        if (bytes == NULL) {
            return;
        }
        written = dev->hal->uart_write(dev->hal->ctx, bytes, pending);
        if (written > pending) {
            written = pending;
        }
        dev->counters.bytes_sent += (uint32_t)written;
        cc_link_tx_consume(&dev->link, written);
        if (written < pending) {
            return;
        }
    }
}

void cc_device_poll(cc_device_t *dev)
{
    uint64_t now_us = dev->hal->now_us(dev->hal->ctx);

    drain_uart(dev, now_us);
    sample_input(dev, now_us);
    if (!cc_link_timers_idle(&dev->link) && cc_link_poll(&dev->link, now_us)) {
        cc_rpc_end_all_calls(dev);   /* link dead: no one is listening */
    }
    if (!cc_link_tx_idle(&dev->link)) {
        flush_uart(dev);
    }
}

void cc_device_note_stall(cc_device_t *dev, uint64_t now_us, uint64_t stall_us, uint64_t step_us)
{
    if (stall_us < (uint64_t)dev->link.heartbeat_interval_us * CC_WIRE_DEAD_AFTER_HEARTBEATS) {
        cc_link_credit_silence(&dev->link, now_us, step_us);
    }
}

void cc_device_note_frame_arriving(cc_device_t *dev, uint64_t now_us)
{
    cc_link_frame_arriving(&dev->link, true, true, now_us);
}

const cc_counters_t *cc_device_counters(const cc_device_t *dev)
{
    return &dev->counters;
}

bool cc_device_sample_rate_supported(uint32_t hz)
{
    return cc_services_sample_rate_supported(hz);
}

const cc_input_config_t *cc_device_config(const cc_device_t *dev)
{
    return &dev->config;
}

bool cc_device_session_active(const cc_device_t *dev)
{
    return cc_link_session(&dev->link);
}

bool cc_device_input_stream_open(const cc_device_t *dev)
{
    unsigned i;
    for (i = 0; i < CC_MAX_CONCURRENT_CALLS; i++) {
        if (dev->calls.calls[i].kind == CC_CALL_EVENT_STREAM) {
            return true;
        }
    }
    return false;
}

uint8_t cc_device_change_settings(cc_device_t *dev, const cc_settings_t *next, const char **why)
{
    if (!cc_settings_valid(next)) {   /* SetSettings checks each field as it reads it */
        *why = "settings out of range";
        return CC_STATUS_INVALID_ARGUMENT;
    }
    return cc_services_change_settings(dev, next, dev->hal->now_us(dev->hal->ctx), why);
}

const cc_settings_t *cc_device_settings(const cc_device_t *dev)
{
    return &dev->settings.current;
}

uint32_t cc_device_session_id(const cc_device_t *dev)
{
    return dev->session_id;
}

size_t cc_device_calls_in_flight(const cc_device_t *dev)
{
    return cc_call_count(&dev->calls);
}
