/*
 * CameraControl firmware core: functions shared between the core's own
 * files (private; not part of the public include/ directory).
 *
 *   cc_device.c   poll loop: UART in, sampling, events, timers, UART out
 *   cc_rpc.c      request dispatch, call table policy, responses and errors
 *   cc_services.c the v1 methods (handlers)
 *   cc_streams.c  input event and raw sample streams
 */
#ifndef CC_CORE_H
#define CC_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <protobuf-c/protobuf-c.h>

#include "cc_device.h"
#include "cc_envelope.h"

/* A v1 method served by the core. The request arrives unpacked. */
typedef void (*cc_method_handler_fn)(cc_device_t *dev, const cc_envelope_t *env,
                                     const ProtobufCMessage *request, uint64_t now_us);

typedef struct cc_method {
    uint8_t service;
    uint8_t method;
    const ProtobufCMessageDescriptor *request;
    cc_method_handler_fn handler;
} cc_method_t;

/* ---- cc_services.c ---- */

/* The method, or NULL; *service_known says whether the core serves the service. */
const cc_method_t *cc_services_find(uint8_t service, uint8_t method, bool *service_known);

/* ---- cc_rpc.c ---- */

/* A packet the link delivered (not ACK/HEARTBEAT, not a duplicate). */
void cc_rpc_receive(cc_device_t *dev, const cc_envelope_t *env, uint64_t now_us);

/* Answers a call with ERROR status; message (may be NULL) is truncated to fit. */
void cc_rpc_error(cc_device_t *dev, uint32_t call_id, uint8_t status, const char *message, uint64_t now_us);

/* Answers a unary call with RESPONSE msg (ERROR RESOURCE_EXHAUSTED if it does not fit). */
void cc_rpc_respond(cc_device_t *dev, uint32_t call_id, const ProtobufCMessage *msg, uint64_t now_us);

/* Packs msg into the link's payload buffer; false when it is larger than cap. */
bool cc_rpc_pack(cc_device_t *dev, const ProtobufCMessage *msg, size_t cap, size_t *len);

/* Ends every call without a word (link dead, new handshake); counts them as cancelled. */
void cc_rpc_end_all_calls(cc_device_t *dev);

/* ---- cc_streams.c ---- */

/* Opens the streams of InputService (handlers of cc_services.c). */
void cc_streams_open_events(cc_device_t *dev, uint32_t call_id);
void cc_streams_open_raw(cc_device_t *dev, uint32_t call_id, uint32_t samples_per_batch);

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

/* ---- cc_device.c ---- */

/* Applies a validated configuration (sampling period, input pipeline). */
void cc_device_apply_config(cc_device_t *dev, const cc_input_config_t *cfg, uint64_t now_us);

#endif /* CC_CORE_H */
