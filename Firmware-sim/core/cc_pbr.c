/* CameraControl firmware core: the bounded protobuf wire-format reader (see cc_pbr.h). */
#include "cc_pbr.h"

#include <string.h>

void cc_pbr_init(cc_pbr_t *r, const uint8_t *data, size_t len)
{
    r->pos = data;
    r->end = data + len;
    r->status = CC_PBR_OK;
}

void cc_pbr_fail(cc_pbr_t *r, cc_pbr_status_t status)
{
    if (r->status == CC_PBR_OK) {
        r->status = status;
    }
    r->pos = r->end;
}

cc_pbr_status_t cc_pbr_status(const cc_pbr_t *r)
{
    return r->status;
}

bool cc_pbr_more(const cc_pbr_t *r)
{
    return r->status == CC_PBR_OK && r->pos < r->end;
}

uint64_t cc_pbr_raw_varint(cc_pbr_t *r)
{
    uint64_t v = 0;
    unsigned shift = 0;
    while (r->pos < r->end && shift < 7u * CC_PB_MAX_VARINT_BYTES) {
        uint8_t b = *r->pos++;
        v |= (uint64_t)(b & 0x7Fu) << shift;
        if ((b & 0x80u) == 0u) {
            return v;
        }
        shift += 7u;
    }
    cc_pbr_fail(r, CC_PBR_MALFORMED);   /* truncated, or longer than 10 bytes */
    return 0;
}

static uint64_t get_le(cc_pbr_t *r, size_t n)
{
    uint64_t v = 0;
    size_t i;
    if ((size_t)(r->end - r->pos) < n) {
        cc_pbr_fail(r, CC_PBR_MALFORMED);
        return 0;
    }
    for (i = 0; i < n; i++) {
        v |= (uint64_t)r->pos[i] << (8u * i);
    }
    r->pos += n;
    return v;
}

uint64_t cc_pbr_raw_fixed32(cc_pbr_t *r)
{
    return get_le(r, 4u);
}

uint64_t cc_pbr_raw_fixed64(cc_pbr_t *r)
{
    return get_le(r, 8u);
}

cc_pb_bytes_t cc_pbr_bytes(cc_pbr_t *r)
{
    cc_pb_bytes_t v = {NULL, 0};
    uint64_t len = cc_pbr_raw_varint(r);
    if (r->status != CC_PBR_OK) {
        return v;
    }
    if (len > (uint64_t)(r->end - r->pos)) {
        cc_pbr_fail(r, CC_PBR_MALFORMED);
        return v;
    }
    v.data = r->pos;
    v.len = (size_t)len;
    r->pos += v.len;
    return v;
}

bool cc_pbr_sub(cc_pbr_t *r, cc_pbr_t *sub)
{
    cc_pb_bytes_t v = cc_pbr_bytes(r);
    if (r->status != CC_PBR_OK) {
        return false;
    }
    cc_pbr_init(sub, v.data, v.len);
    return true;
}

void cc_pbr_join(cc_pbr_t *r, const cc_pbr_t *sub)
{
    if (sub->status != CC_PBR_OK) {
        cc_pbr_fail(r, sub->status);
    }
}

bool cc_pbr_next(cc_pbr_t *r, uint32_t *field, uint32_t *wire_type)
{
    uint64_t key;
    if (!cc_pbr_more(r)) {
        return false;
    }
    key = cc_pbr_raw_varint(r);
    *field = (uint32_t)(key >> 3);
    *wire_type = (uint32_t)(key & 7u);
    if (r->status != CC_PBR_OK || key >> 3 == 0u || key >> 3 > CC_PB_MAX_FIELD_NUMBER
        || (*wire_type != CC_PB_WIRE_VARINT && *wire_type != CC_PB_WIRE_FIXED64 && *wire_type != CC_PB_WIRE_LEN
            && *wire_type != CC_PB_WIRE_FIXED32)) {
        cc_pbr_fail(r, CC_PBR_MALFORMED);
        return false;
    }
    return true;
}

void cc_pbr_skip(cc_pbr_t *r, uint32_t wire_type)
{
    switch (wire_type) {
    case CC_PB_WIRE_VARINT:
        (void)cc_pbr_raw_varint(r);
        break;
    case CC_PB_WIRE_FIXED64:
        (void)get_le(r, 8u);
        break;
    case CC_PB_WIRE_FIXED32:
        (void)get_le(r, 4u);
        break;
    default:   /* cc_pbr_next() lets only the four wire types through */
        (void)cc_pbr_bytes(r);
        break;
    }
}

/* UTF-8 as Unicode defines it: shortest forms only, no surrogates, at most U+10FFFF. */
void cc_pbr_check_utf8(cc_pbr_t *r, cc_pb_bytes_t s)
{
    size_t i = 0;
    while (i < s.len) {
        uint8_t b = s.data[i];
        size_t n;
        uint32_t cp;
        uint32_t min;
        size_t k;
        if (b < 0x80u) {
            i++;
            continue;
        }
        if ((b & 0xE0u) == 0xC0u) {
            n = 1u;
            cp = b & 0x1Fu;
            min = 0x80u;
        } else if ((b & 0xF0u) == 0xE0u) {
            n = 2u;
            cp = b & 0x0Fu;
            min = 0x800u;
        } else if ((b & 0xF8u) == 0xF0u) {
            n = 3u;
            cp = b & 0x07u;
            min = 0x10000u;
        } else {
            cc_pbr_fail(r, CC_PBR_MALFORMED);
            return;
        }
        if (s.len - i - 1u < n) {
            cc_pbr_fail(r, CC_PBR_MALFORMED);
            return;
        }
        for (k = 1u; k <= n; k++) {
            uint8_t c = s.data[i + k];
            if ((c & 0xC0u) != 0x80u) {
                cc_pbr_fail(r, CC_PBR_MALFORMED);
                return;
            }
            cp = (cp << 6) | (c & 0x3Fu);
        }
        if (cp < min || cp > 0x10FFFFu || (cp >= 0xD800u && cp <= 0xDFFFu)) {
            cc_pbr_fail(r, CC_PBR_MALFORMED);
            return;
        }
        i += n + 1u;
    }
}

int64_t cc_pbr_unzigzag(uint64_t value)
{
    uint64_t magnitude = value >> 1;
    return (value & 1u) != 0u ? (int64_t)~magnitude : (int64_t)magnitude;
}

float cc_pbr_float(uint32_t bits)
{
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

double cc_pbr_double(uint64_t bits)
{
    double d;
    memcpy(&d, &bits, sizeof d);
    return d;
}
