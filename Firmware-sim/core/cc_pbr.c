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

void cc_pbr_start(cc_pbr_t *r, void *m, size_t size, const uint8_t *data, size_t len)
{
    memset(m, 0, size);
    cc_pbr_init(r, data, len);
}

bool cc_pbr_more(const cc_pbr_t *r)
{
    return r->status == CC_PBR_OK && r->pos < r->end;
}

uint64_t cc_pbr_raw_varint(cc_pbr_t *r)
{
    /* the value's low and high words: a Cortex-M0 shifts 64 bits only through libgcc */
    uint32_t lo = 0;
    uint32_t hi = 0;
    unsigned shift = 0;
    while (r->pos < r->end && shift < 7u * CC_PB_MAX_VARINT_BYTES) {
        uint8_t b = *r->pos++;
        uint32_t bits = b & 0x7Fu;
        if (shift < 32u) {
            lo |= bits << shift;
            if (shift > 25u) {
                hi |= bits >> (32u - shift);   /* the bits past the low word */
            }
        } else {
            hi |= bits << (shift - 32u);
        }
        if ((b & 0x80u) == 0u) {
            return ((uint64_t)hi << 32) | lo;
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

/* The length of the UTF-8 sequence at p (left > 0 bytes there), 0 when it is
 * not one as Unicode defines it: shortest forms only, no surrogates, at most
 * U+10FFFF. A lead byte C2..DF has one continuation byte, E0..EF two, F0..F4
 * three; 80..BF only continue, C0 and C1 begin only overlong forms, F5..FF
 * only code points beyond U+10FFFF. */
static size_t utf8_sequence(const uint8_t *p, size_t left)
{
    uint8_t b = p[0];
    size_t n;
    size_t k;
    uint32_t cp;
    if (b < 0x80u) {
        return 1u;
    }
    if (b < 0xC2u || b > 0xF4u) {
        return 0u;
    }
    n = b >= 0xF0u ? 3u : b >= 0xE0u ? 2u : 1u;
    if (left <= n) {
        return 0u;
    }
    cp = b & (0x3Fu >> n);
    for (k = 1u; k <= n; k++) {
        if ((p[k] & 0xC0u) != 0x80u) {
            return 0u;
        }
        cp = (cp << 6) | (p[k] & 0x3Fu);
    }
    if ((n == 2u && cp < 0x800u) || (n == 3u && (cp < 0x10000u || cp > 0x10FFFFu))
        || (cp >= 0xD800u && cp <= 0xDFFFu)) {
        return 0u;
    }
    return n + 1u;
}

void cc_pbr_check_utf8(cc_pbr_t *r, cc_pb_bytes_t s)
{
    size_t i = 0;
    while (i < s.len) {
        size_t n = utf8_sequence(s.data + i, s.len - i);
        if (n == 0u) {
            cc_pbr_fail(r, CC_PBR_MALFORMED);
            return;
        }
        i += n;
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
