/* CameraControl firmware core: InputService's streams (events and raw samples). */
#include "cc_streams.h"

#include "cc_pb.h"
#include "cc_assert.h"
#include "cc_call.h"
#include "cc_link.h"
#include "cc_rawdelta.h"
#include "cc_rpc_reply.h"
#include "cc_wire.h"

/* Bytes of a RawSampleBatch besides its records and button levels: tags,
 * lengths and varints. */
#define RAW_BATCH_OVERHEAD 24u
/* Bytes of `n` button_levels entries: a tag, a length, two bytes an entry. */
#define RAW_BUTTON_BYTES(n) ((n) == 0u ? 0u : 2u + 2u * (n))
/* The most bytes of one batch: what a frame carries, and at most half the
 * bulk queue (it must hold two batches). */
#define RAW_BULK_HALF (CC_TX_BULK_BYTES / 2u - CC_LINK_BULK_LENGTH_BYTES - CC_WIRE_MAX_ENVELOPE_BYTES)
#define RAW_BATCH_MAX_BYTES (CC_LINK_PAYLOAD_CAP_ANY < RAW_BULK_HALF ? CC_LINK_PAYLOAD_CAP_ANY : RAW_BULK_HALF)
#define RAW_FIT_SAMPLES ((RAW_BATCH_MAX_BYTES - RAW_BATCH_OVERHEAD) / CC_RAW_RECORD_BYTES)
#define RAW_LIMIT_SAMPLES \
    (RAW_FIT_SAMPLES < CC_RAW_MAX_SAMPLES_PER_BATCH ? RAW_FIT_SAMPLES : CC_RAW_MAX_SAMPLES_PER_BATCH)

/* The bulk queue must hold at least two batches of CC_RAW_MAX_SAMPLES_PER_BATCH
 * samples, and a batch must always take one sample with its button change. */
#if RAW_FIT_SAMPLES < CC_RAW_MAX_SAMPLES_PER_BATCH && CC_LINK_PAYLOAD_CAP_ANY >= RAW_BULK_HALF
#error "CC_TX_BULK_BYTES must hold two raw sample batches of CC_RAW_MAX_SAMPLES_PER_BATCH"
#endif
#if RAW_BATCH_OVERHEAD + CC_RAW_RECORD_BYTES + RAW_BUTTON_BYTES(1u) > RAW_BATCH_MAX_BYTES
#error "a raw sample batch must hold at least one sample and its button levels"
#endif
/* A button_levels entry, sample_index * 16 + levels, is a 2-byte varint. */
#if CC_RAW_MAX_SAMPLES_PER_BATCH * 16u > 16383u
#error "CC_RAW_MAX_SAMPLES_PER_BATCH too large for 2-byte button_levels entries"
#endif

bool cc_streams_kind_reliable(uint32_t kind)
{
    switch (kind) {
    case CC_PB_INPUT_EVENT_KIND_LIGHT_PRESS_DOWN:
    case CC_PB_INPUT_EVENT_KIND_LIGHT_PRESS_UP:
    case CC_PB_INPUT_EVENT_KIND_FULL_PRESS_DOWN:
    case CC_PB_INPUT_EVENT_KIND_FULL_PRESS_UP:
    case CC_PB_INPUT_EVENT_KIND_BUTTON_DOWN:
    case CC_PB_INPUT_EVENT_KIND_BUTTON_UP:
    case CC_PB_INPUT_EVENT_KIND_REMOTE_CLICK:
        return true;
    default:
        return false;   /* TOUCH_*, SLIDE: the next one supersedes a lost one */
    }
}

void cc_streams_pack_record(const cc_raw_sample_t *sample, uint8_t out[4])
{
    uint32_t position = sample->position > CC_WIRE_RAW_POSITION_MAX ? CC_WIRE_RAW_POSITION_MAX : sample->position;
    uint32_t record = (uint32_t)sample->force_mn | (position << CC_WIRE_RAW_POSITION_SHIFT);
    if (sample->touched) {
        record |= CC_WIRE_RAW_TOUCH_BIT;
    }
    out[0] = (uint8_t)(record & 0xFFu);
    out[1] = (uint8_t)((record >> 8) & 0xFFu);
    out[2] = (uint8_t)((record >> 16) & 0xFFu);
    out[3] = (uint8_t)(record >> 24);
}

bool cc_streams_open(cc_device_t *dev, uint32_t call_id, cc_call_kind_t kind, uint32_t samples_per_batch)
{
    cc_call_t *call;
    if (kind == CC_CALL_RAW_STREAM) {
        if (samples_per_batch == 0u) {
            samples_per_batch = CC_RAW_DEFAULT_SAMPLES_PER_BATCH > RAW_LIMIT_SAMPLES
                                    ? RAW_LIMIT_SAMPLES
                                    : CC_RAW_DEFAULT_SAMPLES_PER_BATCH;
        }
        if (samples_per_batch > RAW_LIMIT_SAMPLES) {
            return false;   /* refused, not clamped (PROTOCOL.md §7, v1.1) */
        }
    }
    call = cc_call_open(&dev->calls, call_id, kind);   /* cleared: a raw batch starts empty */
    if (call != NULL && kind == CC_CALL_RAW_STREAM) {   /* NULL cannot happen: the dispatcher checked there is room */
        call->raw.samples_per_batch = (uint16_t)samples_per_batch;
    }
    return true;
}

/* The messages this file sends, filled field by field below: the build stops
 * when the schema gives one a field not filled here. */
typedef char cc_pb_filled_input_event[CC_PB_INPUT_EVENT_FIELD_COUNT == 8u ? 1 : -1];
/* The longest InputEvent (input.proto: fields 1 to 8, one-byte tags): timestamp_us, kind and source
 * 1 + 10 bytes each (a uint64; an int32 enum, negative or not), the five uint32 fields 1 + 5 each. It
 * fits the payload of any packet, so its writer never overflows and is not asked. */
#define INPUT_EVENT_MAX_BYTES (3u * (1u + 10u) + 5u * (1u + 5u))
typedef char cc_input_event_fits[INPUT_EVENT_MAX_BYTES <= CC_LINK_PAYLOAD_CAP_ANY ? 1 : -1];
typedef char cc_pb_filled_raw_sample_batch[CC_PB_RAW_SAMPLE_BATCH_FIELD_COUNT == 6u ? 1 : -1];

/* Writes a stream message for call into the link's payload buffer. */
static void begin_stream_message(cc_device_t *dev, const cc_call_t *call, cc_pbw_t *w)
{
    cc_pbw_init(w, cc_link_payload(&dev->link), cc_link_payload_cap(CC_PKT_STREAM_MESSAGE, call->id));
}

void cc_streams_publish_event(cc_device_t *dev, const cc_input_event_t *event, uint64_t now_us)
{
    bool reliable = cc_streams_kind_reliable(event->kind);
    size_t i;
    cc_pb_input_event_t message;

    if (reliable) {
        dev->reliable_events++;
    }
    message.timestamp_us = event->timestamp_us;
    message.kind = (int32_t)event->kind;
    message.source = (int32_t)event->source;
    message.force_mn = event->force_mn;
    message.position = event->position;
    message.peak_force_mn = event->peak_force_mn;
    message.event_number = event->event_number;
    message.reliable_event_number = dev->reliable_events + 1u;   /* never 0: 0 means a 1.0 device */
    for (i = 0; i < CC_MAX_CONCURRENT_CALLS; i++) {
        cc_call_t *call = &dev->calls.calls[i];
        cc_pbw_t w;
        size_t len;
        if (call->kind != CC_CALL_EVENT_STREAM) {
            continue;
        }
        begin_stream_message(dev, call, &w);
        cc_pbw_write_input_event(&w, &message);
        len = cc_pbw_len(&w);   /* it fits (INPUT_EVENT_MAX_BYTES) */
        CC_ASSERT(cc_pbw_ok(&w));
        if (reliable) {
            (void)cc_link_send(&dev->link, CC_PKT_STREAM_MESSAGE, true, call->id, 0, len, now_us);
        } else {   /* SLIDE, TOUCH_*: bulk, like raw batches: they yield to the reliable kinds */
            (void)cc_link_send_bulk(&dev->link, CC_PKT_STREAM_MESSAGE, call->id, len, now_us);
        }
    }
}

/* Queues a raw stream's batch (best-effort, bulk: it yields to every other
 * packet, PROTOCOL.md §6) and starts a new one. */
static void send_batch(cc_device_t *dev, cc_call_t *call, uint64_t now_us)
{
    cc_raw_batch_t *b = &call->raw;
    cc_pbw_t w;
    cc_pb_raw_sample_batch_t batch;
    uint8_t delta[CC_RAW_MAX_SAMPLES_PER_BATCH * CC_RAW_RECORD_BYTES];
    uint32_t levels[CC_RAW_MAX_BUTTON_CHANGES];
    size_t delta_len = 0;
    size_t i;

    if (b->count == 0u) {
        return;
    }
    /* v1.2 sessions: delta_samples when shorter than the records (PROTOCOL.md §7), never both */
    if (dev->negotiated_minor >= CC_WIRE_RAW_DELTA_MINOR) {
        delta_len = cc_rawdelta_encode(b->records, b->count, delta, (size_t)b->count * CC_RAW_RECORD_BYTES - 1u);
    }
    batch.first_timestamp_us = b->first_timestamp_us;
    batch.sample_interval_us = b->interval_us;
    batch.samples.data = b->records;
    batch.samples.len = delta_len == 0u ? (size_t)b->count * CC_RAW_RECORD_BYTES : 0u;
    batch.dropped_before = b->dropped_before;
    batch.delta_samples.data = delta;
    batch.delta_samples.len = delta_len;
    for (i = 0; i < b->button_change_count; i++) {
        levels[i] = b->button_changes[i];
    }
    batch.button_levels = levels;
    batch.button_levels_count = b->button_change_count;
    begin_stream_message(dev, call, &w);
    cc_pbw_write_raw_sample_batch(&w, &batch);
    if (cc_pbw_ok(&w)
        && cc_link_send_bulk(&dev->link, CC_PKT_STREAM_MESSAGE, call->id, cc_pbw_len(&w), now_us) == CC_SEND_OK) {
        b->dropped_before = 0;
    } else {
        b->dropped_before += b->count;   /* bulk queue full: tx_dropped counted by the link */
    }
    b->count = 0;
}

/* True when a batch of `count` records and `changes` button entries fits
 * RAW_BATCH_MAX_BYTES (the records' size bounds the delta coding's). */
static bool raw_fits(uint32_t count, uint32_t changes)
{
    return RAW_BATCH_OVERHEAD + count * CC_RAW_RECORD_BYTES + RAW_BUTTON_BYTES(changes) <= RAW_BATCH_MAX_BYTES;
}

/* Adds one sample to a raw stream's batch: its record and, when its button
 * levels differ from the sample before it in the batch (all up before the
 * first), an entry of RawSampleBatch.button_levels. A batch with no room for
 * them is sent first; a full batch is sent after. */
static void add_sample(cc_device_t *dev, cc_call_t *call, const cc_raw_sample_t *sample, uint64_t now_us)
{
    cc_raw_batch_t *b = &call->raw;
    uint8_t levels = (uint8_t)(sample->buttons & 0x0Fu);
    uint32_t change;
    if (b->count == 0u) {
        b->buttons = 0u;
        b->button_change_count = 0u;
    }
    change = levels != b->buttons ? 1u : 0u;
    if (b->count != 0u && ((change != 0u && b->button_change_count == CC_RAW_MAX_BUTTON_CHANGES)
                           || !raw_fits((uint32_t)b->count + 1u, (uint32_t)b->button_change_count + change))) {
        send_batch(dev, call, now_us);
        b->buttons = 0u;
        b->button_change_count = 0u;
        change = levels != 0u ? 1u : 0u;
    }
    if (change != 0u) {
        b->buttons = levels;
        b->button_changes[b->button_change_count++] = (uint16_t)((uint32_t)b->count * 16u + levels);
    }
    if (b->count == 0u) {
        b->first_timestamp_us = sample->timestamp_us;
        b->interval_us = dev->sample_period_us;
    }
    cc_streams_pack_record(sample, &b->records[(size_t)b->count * CC_RAW_RECORD_BYTES]);
    b->count++;
    if (b->count >= b->samples_per_batch) {
        send_batch(dev, call, now_us);
    }
}

void cc_streams_publish_sample(cc_device_t *dev, const cc_raw_sample_t *sample, uint64_t now_us)
{
    size_t i;
    for (i = 0; i < CC_MAX_CONCURRENT_CALLS; i++) {
        if (dev->calls.calls[i].kind == CC_CALL_RAW_STREAM) {
            add_sample(dev, &dev->calls.calls[i], sample, now_us);
        }
    }
}

void cc_streams_flush_raw(cc_device_t *dev, uint64_t now_us)
{
    size_t i;
    for (i = 0; i < CC_MAX_CONCURRENT_CALLS; i++) {
        if (dev->calls.calls[i].kind == CC_CALL_RAW_STREAM) {
            send_batch(dev, &dev->calls.calls[i], now_us);
        }
    }
}
