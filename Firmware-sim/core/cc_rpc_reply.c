/* CameraControl firmware core: answering calls (responses, errors, ending calls). */
#include "cc_rpc_reply.h"

#include "cc_assert.h"
#include "cc_call.h"
#include "cc_link.h"
#include "cc_wire.h"

/* Writes message (may be NULL) as an ERROR payload, cut at a UTF-8 boundary to fit; its length. */
static size_t error_payload(cc_device_t *dev, uint32_t call_id, const char *message)
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
    return len;
}

void cc_rpc_error(cc_device_t *dev, uint32_t call_id, uint8_t status, const char *message, uint64_t now_us)
{
    size_t len = error_payload(dev, call_id, message);
    (void)cc_link_send(&dev->link, CC_PKT_ERROR, true, call_id, status, len, now_us);   /* R1: reliable */
}

void cc_rpc_fail(cc_device_t *dev, const cc_request_t *rq, uint8_t status, const char *message)
{
    cc_rpc_error(dev, rq->env->call_id, status, message, rq->now_us);
}

bool cc_rpc_read(cc_device_t *dev, const cc_request_t *rq, cc_pbr_status_t status)
{
    if (status == CC_PBR_OK) {
        return true;
    }
    if (status == CC_PBR_TOO_LARGE) {
        cc_rpc_fail(dev, rq, CC_STATUS_RESOURCE_EXHAUSTED, "request too large");
        return false;
    }
    dev->counters.invalid_arguments++;
    cc_rpc_fail(dev, rq, CC_STATUS_INVALID_ARGUMENT, "malformed request");
    return false;
}

void cc_rpc_begin_response(cc_device_t *dev, const cc_request_t *rq, cc_pbw_t *w)
{
    cc_pbw_init(w, cc_link_payload(&dev->link), cc_link_payload_cap(CC_PKT_RESPONSE, rq->env->call_id));
}

void cc_rpc_respond_written(cc_device_t *dev, const cc_request_t *rq, const cc_pbw_t *w)
{
    if (!cc_pbw_ok(w)) {
        cc_rpc_fail(dev, rq, CC_STATUS_RESOURCE_EXHAUSTED, "response does not fit the frame");
        return;
    }
    (void)cc_link_send(&dev->link, CC_PKT_RESPONSE, true, rq->env->call_id, 0, cc_pbw_len(w),
                       rq->now_us);   /* R1: reliable */
}

void cc_rpc_end_all_calls(cc_device_t *dev)
{
    cc_rpc_cancel_all_calls(dev, NULL, 0u);
}

void cc_rpc_cancel_all_calls(cc_device_t *dev, const char *message, uint64_t now_us)
{
    size_t i;
    for (i = 0; i < CC_MAX_CONCURRENT_CALLS; i++) {
        cc_call_t *call = &dev->calls.calls[i];
        if (call->kind != CC_CALL_FREE) {
            uint32_t id = call->id;
            cc_link_forget_call(&dev->link, id);
            cc_call_close(&dev->calls, call);
            dev->counters.cancelled_calls++;
            /* v1.2: best-effort. The new session forgets the old one's packets,
             * so nothing would retransmit it, and an ACK of its old number
             * could free a packet of the new numbering (PROTOCOL.md §9). */
            if (message != NULL) {
                (void)cc_link_send(&dev->link, CC_PKT_ERROR, false, id, CC_STATUS_CANCELLED,
                                   error_payload(dev, id, message), now_us);
            }
        }
    }
}

void cc_rpc_confirm_stream(cc_device_t *dev, const cc_request_t *rq)
{
    if (dev->negotiated_minor >= 1u) {   /* a v1.0 host would count it as unexpected */
        (void)cc_link_send(&dev->link, CC_PKT_RESPONSE, true, rq->env->call_id, 0, 0, rq->now_us);
    }
}
