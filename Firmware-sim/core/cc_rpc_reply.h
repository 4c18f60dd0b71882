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

#include "cc_device_state.h"
#include "cc_envelope.h"
#include "cc_pb.h"

/* A request being answered: its envelope and the time it arrived. Handlers
 * and the answering functions below take one pointer to it, not the envelope
 * and a 64-bit time: on a Cortex-M0 their arguments then fit the four
 * argument registers (no stack arguments at every call). */
typedef struct cc_request {
    const cc_envelope_t *env;
    uint64_t now_us;
} cc_request_t;

/* A v1 method served by the core. It reads its request from rq->env->payload
 * with the generated reader (cc_pb.h) and answers through cc_rpc_read(). */
typedef void (*cc_method_handler_fn)(cc_device_t *dev, const cc_request_t *rq);

/* One entry of a dispatch table (cc_services.c's; cc_rpc.c serves it). */
typedef struct cc_method {
    uint8_t service;
    uint8_t method;
    cc_method_handler_fn handler;
} cc_method_t;

/* What a generated reader said of a request: true for CC_PBR_OK; otherwise
 * the call is answered (INVALID_ARGUMENT "malformed request", counted in
 * invalid_arguments, or RESOURCE_EXHAUSTED "request too large") and false. */
bool cc_rpc_read(cc_device_t *dev, const cc_request_t *rq, cc_pbr_status_t status);

/* Answers a call with ERROR status; message (may be NULL) is truncated to fit. */
void cc_rpc_error(cc_device_t *dev, uint32_t call_id, uint8_t status, const char *message, uint64_t now_us);
/* The same for the request rq. */
void cc_rpc_fail(cc_device_t *dev, const cc_request_t *rq, uint8_t status, const char *message);

/* Starts writing a RESPONSE message for the request rq into the link's payload
 * buffer (with a generated writer of cc_pb.h); cc_rpc_respond_written() sends it. */
void cc_rpc_begin_response(cc_device_t *dev, const cc_request_t *rq, cc_pbw_t *w);

/* Answers a unary call with the message written since cc_rpc_begin_response
 * (ERROR RESOURCE_EXHAUSTED if it did not fit the frame). */
void cc_rpc_respond_written(cc_device_t *dev, const cc_request_t *rq, const cc_pbw_t *w);

/* Ends every call without a word (link dead); counts them as cancelled.
 * cc_rpc_cancel_all_calls without a message. */
void cc_rpc_end_all_calls(cc_device_t *dev);

/* Ends every call with ERROR CANCELLED message (a new handshake, PROTOCOL.md
 * §9, v1.1), sent best-effort (v1.2), or without a word when message is NULL;
 * counts them as cancelled. */
void cc_rpc_cancel_all_calls(cc_device_t *dev, const char *message, uint64_t now_us);

/* Confirms a server stream just opened (PROTOCOL.md §7, v1.1): an empty
 * RESPONSE on its call id, reliably, before any STREAM_MESSAGE; only when
 * the session runs at minor 1 or later. */
void cc_rpc_confirm_stream(cc_device_t *dev, const cc_request_t *rq);

#endif /* CC_RPC_REPLY_H */
