/* CameraControl firmware core: RPC dispatch (PROTOCOL.md §7, §9). */
#include "cc_rpc.h"

#include "cc_call.h"
#include "cc_ids.h"
#include "cc_link.h"
#include "cc_text.h"
#include "cc_wire.h"

void cc_rpc_set_methods(cc_device_t *dev, const cc_method_t *methods, size_t count)
{
    dev->methods = methods;
    dev->method_count = count;
}

/* The method of the dispatch table, or NULL; *service_known says whether the table has the service. */
static const cc_method_t *find_method(const cc_device_t *dev, uint8_t service, uint8_t method,
                                      bool *service_known)
{
    size_t i;
    *service_known = false;
    for (i = 0; i < dev->method_count; i++) {
        if (dev->methods[i].service == service) {
            *service_known = true;
            if (dev->methods[i].method == method) {
                return &dev->methods[i];
            }
        }
    }
    return NULL;
}

/* Answers UNIMPLEMENTED naming what is missing: "no such method 1.7". */
static void unimplemented(cc_device_t *dev, const cc_request_t *rq, bool service_known)
{
    const cc_envelope_t *env = rq->env;
    char message[40];
    size_t pos = cc_text_append(message, 0, sizeof message, service_known ? "no such method " : "no such service ");
    pos = cc_text_append_u32(message, pos, sizeof message, env->service);
    if (service_known) {
        pos = cc_text_append(message, pos, sizeof message, ".");
        (void)cc_text_append_u32(message, pos, sizeof message, env->method);
    }
    dev->counters.unimplemented_calls++;
    cc_rpc_fail(dev, rq, CC_STATUS_UNIMPLEMENTED, message);
}

/* A method of a service the core does not serve: the extension's (installed
 * by cc_rpc_set_extension only, so an image without an extension links none
 * of this). */
static void dispatch_extension(cc_device_t *dev, const cc_request_t *rq)
{
    const cc_envelope_t *env = rq->env;
    size_t resp_len = 0;
    size_t resp_cap = cc_link_payload_cap(CC_PKT_RESPONSE, env->call_id);
    const char *message = NULL;
    int status;

    status = dev->extension(dev->extension_ctx, env->service, env->method, env->payload, env->payload_len,
                            cc_link_payload(&dev->link), resp_cap, &resp_len, &message);
    if (status == CC_EXTENSION_NOT_MINE) {
        unimplemented(dev, rq, true);
        return;
    }
    if (status == (int)CC_STATUS_OK) {
        if (resp_len > resp_cap) {
            cc_rpc_fail(dev, rq, CC_STATUS_INTERNAL, "extension overran its buffer");
            return;
        }
        (void)cc_link_send(&dev->link, CC_PKT_RESPONSE, true, env->call_id, 0, resp_len, rq->now_us);
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
    cc_rpc_fail(dev, rq, (uint8_t)status, message);
}

void cc_rpc_set_extension(cc_device_t *dev, cc_extension_fn fn, void *ctx)
{
    dev->extension = fn;
    dev->extension_ctx = ctx;
    dev->extension_dispatch = fn != NULL ? dispatch_extension : NULL;
}

static bool is_handshake(const cc_envelope_t *env)
{
    return env->service == CC_SERVICE_DEVICE_SERVICE && env->method == CC_METHOD_DEVICE_SERVICE_HANDSHAKE;
}

static void dispatch_request(cc_device_t *dev, const cc_envelope_t *env, uint64_t now_us)
{
    const cc_method_t *method;
    cc_request_t rq;
    bool service_known = false;

    rq.env = env;
    rq.now_us = now_us;

    /* env->call_id is not 0: the envelope parser refuses call id 0 on every type but ACK and HEARTBEAT
     * (CC_ENVELOPE_BAD_CALL_ID, counted in envelope_errors; PROTOCOL.md §4), so no call has id 0 */
    if (!is_handshake(env)) {
        if (!cc_link_session(&dev->link)) {
            cc_rpc_fail(dev, &rq, CC_STATUS_FAILED_PRECONDITION, "handshake first");
            return;
        }
        if (cc_call_find(&dev->calls, env->call_id) != NULL) {
            /* a retransmission that slipped past the window: the live call
             * goes on, nothing is answered (§7, v1.1) */
            dev->counters.duplicate_requests++;
            return;
        }
        if (cc_call_count(&dev->calls) >= CC_MAX_CONCURRENT_CALLS) {
            dev->counters.calls_refused++;
            cc_rpc_fail(dev, &rq, CC_STATUS_RESOURCE_EXHAUSTED, "too many calls");
            return;
        }
    }
    method = find_method(dev, env->service, env->method, &service_known);
    if (method == NULL) {
        if (!service_known) {
            if (dev->extension_dispatch == NULL) {
                unimplemented(dev, &rq, false);
                return;
            }
            dev->extension_dispatch(dev, &rq);
            return;
        }
        unimplemented(dev, &rq, true);
        return;
    }
    method->handler(dev, &rq);   /* it reads its request (cc_rpc_read) */
}

static void receive_cancel(cc_device_t *dev, const cc_envelope_t *env)
{
    cc_call_t *call = cc_call_find(&dev->calls, env->call_id);
    if (call == NULL) {
        return;   /* unknown call: ignored (call id 0 never reaches here, see dispatch_request) */
    }
    cc_link_forget_call(&dev->link, call->id);
    cc_call_close(&dev->calls, call);
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
        /* RESPONSE, STREAM_MESSAGE, STREAM_END, ERROR travel device -> host (§4, v1.1) */
        dev->counters.unexpected_packets++;
        break;
    }
}
