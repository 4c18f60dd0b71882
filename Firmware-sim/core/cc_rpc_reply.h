/*
 * CameraControl firmware core: answering calls (private). The part of RPC
 * the method handlers use: the method table type, responses, errors, and
 * ending calls. Below the services and the streams, so they answer without
 * calling up into the dispatcher (cc_rpc.c); layer order in README.md.
 */
#ifndef CC_RPC_REPLY_H
#define CC_RPC_REPLY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <protobuf-c/protobuf-c.h>

#include "cc_device_state.h"
#include "cc_envelope.h"
#include "cc_pbw.h"

/* A v1 method served by the core. The request arrives unpacked. */
typedef void (*cc_method_handler_fn)(cc_device_t *dev, const cc_envelope_t *env,
                                     const ProtobufCMessage *request, uint64_t now_us);

/* One entry of a dispatch table (cc_services.c's; cc_rpc.c serves it). */
typedef struct cc_method {
    uint8_t service;
    uint8_t method;
    const ProtobufCMessageDescriptor *request;
    cc_method_handler_fn handler;
} cc_method_t;

/* Answers a call with ERROR status; message (may be NULL) is truncated to fit. */
void cc_rpc_error(cc_device_t *dev, uint32_t call_id, uint8_t status, const char *message, uint64_t now_us);

/* Answers a unary call with RESPONSE msg (ERROR RESOURCE_EXHAUSTED if it does not fit). */
void cc_rpc_respond(cc_device_t *dev, uint32_t call_id, const ProtobufCMessage *msg, uint64_t now_us);

/* Starts writing a RESPONSE message for call_id into the link's payload
 * buffer (cc_pbw.h); cc_rpc_respond_written() sends it. */
void cc_rpc_begin_response(cc_device_t *dev, uint32_t call_id, cc_pbw_t *w);

/* Answers a unary call with the message written since cc_rpc_begin_response
 * (ERROR RESOURCE_EXHAUSTED if it did not fit the frame). */
void cc_rpc_respond_written(cc_device_t *dev, uint32_t call_id, const cc_pbw_t *w, uint64_t now_us);

/* Packs msg into the link's payload buffer; false when it is larger than cap. */
bool cc_rpc_pack(cc_device_t *dev, const ProtobufCMessage *msg, size_t cap, size_t *len);

/* Ends every call without a word (link dead); counts them as cancelled. */
void cc_rpc_end_all_calls(cc_device_t *dev);

/* Ends every call with ERROR CANCELLED message (a new handshake, PROTOCOL.md
 * §9, v1.1), sent best-effort (v1.2); counts them as cancelled. */
void cc_rpc_cancel_all_calls(cc_device_t *dev, const char *message, uint64_t now_us);

/* Confirms a server stream just opened (PROTOCOL.md §7, v1.1): an empty
 * RESPONSE on its call id, reliably, before any STREAM_MESSAGE; only when
 * the session runs at minor 1 or later. */
void cc_rpc_confirm_stream(cc_device_t *dev, uint32_t call_id, uint64_t now_us);

#endif /* CC_RPC_REPLY_H */
