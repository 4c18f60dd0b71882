/* CameraControl firmware core: RPC dispatch (PROTOCOL.md §7, §9). */
#include "cc_core.h"

#include <string.h>

#include "cc_assert.h"
#include "cc_ids.h"
#include "cc_text.h"
#include "cc_wire.h"

void cc_rpc_error(cc_device_t *dev, uint32_t call_id, uint8_t status, const char *message, uint64_t now_us)
{
    uint8_t *payload = cc_link_payload(&dev->link);
    size_t cap = cc_link_payload_cap(CC_PKT_ERROR, call_id);
    size_t len = 0;
    if (message != NULL) {
        while (message[len] != '\0' && len < cap) {
            payload[len] = (uint8_t)message[len];
            len++;
        }
        /* do not cut a UTF-8 sequence in half */
        if (message[len] != '\0') {
            while (len > 0u && ((uint8_t)message[len] & 0xC0u) == 0x80u) {
                len--;
            }
        }
    }
    (void)cc_link_send(&dev->link, CC_PKT_ERROR, false, call_id, status, len, now_us);
}

bool cc_rpc_pack(cc_device_t *dev, const ProtobufCMessage *msg, size_t cap, size_t *len)
{
    size_t size = protobuf_c_message_get_packed_size(msg);
    if (size > cap) {
        return false;
    }
    *len = protobuf_c_message_pack(msg, cc_link_payload(&dev->link));
    CC_ASSERT(*len == size);
    return true;
}

void cc_rpc_respond(cc_device_t *dev, uint32_t call_id, const ProtobufCMessage *msg, uint64_t now_us)
{
    size_t len = 0;
    if (!cc_rpc_pack(dev, msg, cc_link_payload_cap(CC_PKT_RESPONSE, call_id), &len)) {
        cc_rpc_error(dev, call_id, CC_STATUS_RESOURCE_EXHAUSTED, "response does not fit the frame", now_us);
        return;
    }
    (void)cc_link_send(&dev->link, CC_PKT_RESPONSE, false, call_id, 0, len, now_us);
}

void cc_rpc_end_all_calls(cc_device_t *dev)
{
    size_t i;
    for (i = 0; i < CC_MAX_CONCURRENT_CALLS; i++) {
        cc_call_t *call = &dev->calls.calls[i];
        if (call->kind != CC_CALL_FREE) {
            cc_link_forget_call(&dev->link, call->id);
            cc_call_close(call);
            dev->counters.cancelled_calls++;
        }
    }
}

/* Answers UNIMPLEMENTED naming what is missing: "no such method 1.7". */
static void unimplemented(cc_device_t *dev, const cc_envelope_t *env, bool service_known, uint64_t now_us)
{
    char message[40];
    size_t pos = cc_text_append(message, 0, sizeof message, service_known ? "no such method " : "no such service ");
    pos = cc_text_append_u32(message, pos, sizeof message, env->service);
    if (service_known) {
        pos = cc_text_append(message, pos, sizeof message, ".");
        (void)cc_text_append_u32(message, pos, sizeof message, env->method);
    }
    dev->counters.unimplemented_calls++;
    cc_rpc_error(dev, env->call_id, CC_STATUS_UNIMPLEMENTED, message, now_us);
}

/* A method of a service the core does not serve: the extension's. */
static void dispatch_extension(cc_device_t *dev, const cc_envelope_t *env, uint64_t now_us)
{
    size_t resp_len = 0;
    size_t resp_cap = cc_link_payload_cap(CC_PKT_RESPONSE, env->call_id);
    const char *message = NULL;
    int status;

    if (dev->extension == NULL) {
        unimplemented(dev, env, false, now_us);
        return;
    }
    status = dev->extension(dev->extension_ctx, env->service, env->method, env->payload, env->payload_len,
                            cc_link_payload(&dev->link), resp_cap, &resp_len, &message);
    if (status == CC_EXTENSION_NOT_MINE) {
        unimplemented(dev, env, true, now_us);
        return;
    }
    if (status == (int)CC_STATUS_OK) {
        if (resp_len > resp_cap) {
            cc_rpc_error(dev, env->call_id, CC_STATUS_INTERNAL, "extension overran its buffer", now_us);
            return;
        }
        (void)cc_link_send(&dev->link, CC_PKT_RESPONSE, false, env->call_id, 0, resp_len, now_us);
        return;
    }
    if (status < 0 || status > 0xFF) {
        status = (int)CC_STATUS_INTERNAL;
    }
    if (status == (int)CC_STATUS_INVALID_ARGUMENT) {
        dev->counters.invalid_arguments++;
    } else if (status == (int)CC_STATUS_UNIMPLEMENTED) {
        dev->counters.unimplemented_calls++;
    }
    cc_rpc_error(dev, env->call_id, (uint8_t)status, message, now_us);
}

static bool is_handshake(const cc_envelope_t *env)
{
    return env->service == CC_SERVICE_DEVICE_SERVICE && env->method == CC_METHOD_DEVICE_SERVICE_HANDSHAKE;
}

static void dispatch_request(cc_device_t *dev, const cc_envelope_t *env, uint64_t now_us)
{
    const cc_method_t *method;
    bool service_known = false;
    ProtobufCMessage *request;

    if (env->call_id == CC_WIRE_LINK_CALL_ID) {
        dev->counters.framing_errors++;   /* a request needs a call id; nowhere to answer */
        return;
    }
    if (!is_handshake(env)) {
        if (!cc_link_session(&dev->link)) {
            cc_rpc_error(dev, env->call_id, CC_STATUS_FAILED_PRECONDITION, "handshake first", now_us);
            return;
        }
        if (cc_call_find(&dev->calls, env->call_id) != NULL) {
            cc_rpc_error(dev, env->call_id, CC_STATUS_ALREADY_EXISTS, "call id in flight", now_us);
            return;
        }
        if (cc_call_count(&dev->calls) >= CC_MAX_CONCURRENT_CALLS) {
            dev->counters.calls_refused++;
            cc_rpc_error(dev, env->call_id, CC_STATUS_RESOURCE_EXHAUSTED, "too many calls", now_us);
            return;
        }
    }
    method = cc_services_find(env->service, env->method, &service_known);
    if (method == NULL) {
        if (!service_known) {
            dispatch_extension(dev, env, now_us);
            return;
        }
        unimplemented(dev, env, true, now_us);
        return;
    }
    cc_arena_reset(&dev->arena);
    request = protobuf_c_message_unpack(method->request, cc_arena_allocator(&dev->arena), env->payload_len,
                                        env->payload);
    if (request == NULL) {
        if (cc_arena_exhausted(&dev->arena)) {
            cc_rpc_error(dev, env->call_id, CC_STATUS_RESOURCE_EXHAUSTED, "request too large to unpack", now_us);
            return;
        }
        dev->counters.invalid_arguments++;
        cc_rpc_error(dev, env->call_id, CC_STATUS_INVALID_ARGUMENT, "malformed request", now_us);
        return;
    }
    method->handler(dev, env, request, now_us);
    cc_arena_reset(&dev->arena);   /* nothing outlives the handler */
}

static void receive_cancel(cc_device_t *dev, const cc_envelope_t *env)
{
    cc_call_t *call = cc_call_find(&dev->calls, env->call_id);
    if (call == NULL || env->call_id == CC_WIRE_LINK_CALL_ID) {
        return;   /* unknown call: ignored */
    }
    cc_link_forget_call(&dev->link, call->id);
    cc_call_close(call);
    dev->counters.cancelled_calls++;
}

void cc_rpc_receive(cc_device_t *dev, const cc_envelope_t *env, uint64_t now_us)
{
    switch (env->type) {
    case CC_PKT_REQUEST:
        dispatch_request(dev, env, now_us);
        break;
    case CC_PKT_CANCEL:
        receive_cancel(dev, env);
        break;
    default:
        /* RESPONSE, STREAM_MESSAGE, STREAM_END, ERROR travel device -> host: ignored */
        break;
    }
}
