/*
 * CameraControl firmware core: InputService's streams (private): input event
 * streams and raw sample batches. Layer order in README.md.
 */
#ifndef CC_STREAMS_H
#define CC_STREAMS_H

#include <stdbool.h>
#include <stdint.h>

#include "cc_call.h"
#include "cc_device_state.h"
#include "cc_input.h"

/* Opens a stream of InputService (handlers of cc_services.c): an event stream
 * (CC_CALL_EVENT_STREAM; samples_per_batch unused) or a raw one
 * (CC_CALL_RAW_STREAM). One function for both, so the call table's
 * cc_call_open is linked once. false (nothing opened) when a raw stream's
 * samples_per_batch is neither 0 (the default, 25) nor 1..32 (or fewer when
 * a batch of 32 does not fit the frame). */
bool cc_streams_open(cc_device_t *dev, uint32_t call_id, cc_call_kind_t kind, uint32_t samples_per_batch);

/* Sends one input event to every open event stream. */
void cc_streams_publish_event(cc_device_t *dev, const cc_input_event_t *event, uint64_t now_us);

/* Adds one conditioned sample to every open raw stream, sending full batches. */
void cc_streams_publish_sample(cc_device_t *dev, const cc_raw_sample_t *sample, uint64_t now_us);

/* Sends the partial batches now (the sample period is about to change). */
void cc_streams_flush_raw(cc_device_t *dev, uint64_t now_us);

/* True for event kinds sent reliably (PROTOCOL.md §6). */
bool cc_streams_kind_reliable(uint32_t kind);

/* Packs one raw sample record (input.proto RawSampleBatch.samples). */
void cc_streams_pack_record(const cc_raw_sample_t *sample, uint8_t out[4]);

#endif /* CC_STREAMS_H */
