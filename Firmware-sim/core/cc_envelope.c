/* CameraControl firmware core: envelope parser and writer (PROTOCOL.md §4). */
#include "cc_envelope.h"

#include <string.h>

bool cc_envelope_type_known(uint8_t type)
{
    return type >= CC_PKT_REQUEST && type <= CC_PKT_HEARTBEAT;
}

/* Parses the call id varint at body[*pos]. */
static cc_envelope_result_t parse_call_id(const uint8_t *body, size_t len, size_t *pos, uint32_t *out)
{
    uint32_t value = 0;
    unsigned i;
    for (i = 0; i < CC_WIRE_CALL_ID_MAX_BYTES; i++) {
        uint8_t b;
        if (*pos >= len) {
            return CC_ENVELOPE_TOO_SHORT;
        }
        b = body[(*pos)++];
        if (i == CC_WIRE_CALL_ID_MAX_BYTES - 1u && (b & CC_WIRE_VARINT_LAST_MASK) != 0u) {
            return CC_ENVELOPE_BAD_CALL_ID;   /* >= 2^32, or a sixth byte */
        }
        value |= (uint32_t)(b & CC_WIRE_VARINT_PAYLOAD) << (CC_WIRE_VARINT_BITS * i);
        if ((b & CC_WIRE_VARINT_CONTINUE) == 0u) {
            *out = value;
            return CC_ENVELOPE_OK;
        }
    }
    return CC_ENVELOPE_BAD_CALL_ID;
}

cc_envelope_result_t cc_envelope_parse(const uint8_t *body, size_t len, cc_envelope_t *out)
{
    size_t pos = 0;
    cc_envelope_result_t r;

    memset(out, 0, sizeof *out);
    if (len < CC_WIRE_MIN_ENVELOPE_BYTES) {
        return CC_ENVELOPE_TOO_SHORT;
    }
    out->type = (uint8_t)(body[0] & CC_WIRE_TYPE_MASK);
    out->flags = (uint8_t)(body[0] & CC_WIRE_FLAGS_MASK);
    out->sequence = (uint16_t)(body[CC_WIRE_SEQUENCE_OFFSET] | ((uint16_t)body[CC_WIRE_SEQUENCE_OFFSET + 1u] << 8));
    pos = CC_WIRE_CALL_ID_OFFSET;
    r = parse_call_id(body, len, &pos, &out->call_id);
    if (r != CC_ENVELOPE_OK) {
        return r;
    }
    if (!cc_envelope_type_known(out->type)) {
        out->payload = body + pos;
        out->payload_len = len - pos;
        return CC_ENVELOPE_UNKNOWN_TYPE;
    }
    if (out->call_id == CC_WIRE_LINK_CALL_ID && out->type != CC_PKT_ACK && out->type != CC_PKT_HEARTBEAT) {
        return CC_ENVELOPE_BAD_CALL_ID;   /* call id 0 is the link's: only ACK and HEARTBEAT (§4, v1.1) */
    }
    switch (out->type) {
    case CC_PKT_ACK:
        if (len - pos < CC_WIRE_ACK_PAYLOAD_BYTES) {
            return CC_ENVELOPE_TOO_SHORT;   /* an ACK without the sequence it acknowledges */
        }
        break;
    case CC_PKT_REQUEST:
        if (len - pos < CC_WIRE_REQUEST_ID_BYTES) {
            return CC_ENVELOPE_TOO_SHORT;
        }
        out->service = body[pos++];
        out->method = body[pos++];
        break;
    case CC_PKT_STREAM_END:
    case CC_PKT_ERROR:
        if (len - pos < CC_WIRE_STATUS_BYTES) {
            return CC_ENVELOPE_TOO_SHORT;
        }
        out->status = body[pos++];
        break;
    default:
        break;
    }
    out->payload = body + pos;
    out->payload_len = len - pos;
    return CC_ENVELOPE_OK;
}

size_t cc_varint_write(uint32_t value, uint8_t *out, size_t cap)
{
    size_t n = 0;
    do {
        uint8_t b = (uint8_t)(value & CC_WIRE_VARINT_PAYLOAD);
        value >>= CC_WIRE_VARINT_BITS;
        if (value != 0u) {
            b |= CC_WIRE_VARINT_CONTINUE;
        }
        if (n >= cap) {
            return 0;
        }
        out[n++] = b;
    } while (value != 0u);
    return n;
}

static size_t extra_bytes(uint8_t type)
{
    switch (type) {
    case CC_PKT_REQUEST:
        return CC_WIRE_REQUEST_ID_BYTES;
    case CC_PKT_STREAM_END:
    case CC_PKT_ERROR:
        return CC_WIRE_STATUS_BYTES;
    default:
        return 0u;
    }
}

size_t cc_envelope_size_of(uint8_t type, uint32_t call_id)
{
    uint8_t scratch[CC_WIRE_CALL_ID_MAX_BYTES];
    return CC_WIRE_CALL_ID_OFFSET + cc_varint_write(call_id, scratch, sizeof scratch) + extra_bytes(type);
}

size_t cc_envelope_size(const cc_envelope_t *env)
{
    return cc_envelope_size_of(env->type, env->call_id);
}

size_t cc_envelope_write(const cc_envelope_t *env, uint8_t *out, size_t cap)
{
    size_t pos;
    size_t n;

    if (cap < cc_envelope_size(env)) {
        return 0;
    }
    out[0] = (uint8_t)((env->type & CC_WIRE_TYPE_MASK) | (env->flags & CC_WIRE_FLAGS_MASK));
    out[CC_WIRE_SEQUENCE_OFFSET] = (uint8_t)(env->sequence & 0xFFu);
    out[CC_WIRE_SEQUENCE_OFFSET + 1u] = (uint8_t)(env->sequence >> 8);
    pos = CC_WIRE_CALL_ID_OFFSET;
    n = cc_varint_write(env->call_id, out + pos, cap - pos);
    pos += n;
    switch (env->type) {
    case CC_PKT_REQUEST:
        out[pos++] = env->service;
        out[pos++] = env->method;
        break;
    case CC_PKT_STREAM_END:
    case CC_PKT_ERROR:
        out[pos++] = env->status;
        break;
    default:
        break;
    }
    return pos;
}
