/* CameraControl firmware core: the protobuf wire-format writer (see cc_pbw.h). */
#include "cc_pbw.h"

#include <string.h>

void cc_pbw_init(cc_pbw_t *w, uint8_t *buf, size_t cap)
{
    w->buf = buf;
    w->cap = cap;
    w->len = 0;
    w->overflowed = false;
    w->depth = 0;
}

static size_t varint_size(size_t v)
{
    size_t n = 1;
    while (v >= 0x80u) {
        v >>= 7;
        n++;
    }
    return n;
}

static bool room(cc_pbw_t *w, size_t n)
{
    if (w->overflowed || w->cap - w->len < n) {
        w->overflowed = true;
        return false;
    }
    return true;
}

/* One byte; a byte that does not fit marks the writer overflowed. */
static void put(cc_pbw_t *w, uint8_t b)
{
    if (room(w, 1u)) {
        w->buf[w->len++] = b;
    }
}

void cc_pbw_raw_varint32(cc_pbw_t *w, uint32_t v)
{
    while (v >= 0x80u) {
        put(w, (uint8_t)(v | 0x80u));
        v >>= 7;
    }
    put(w, (uint8_t)v);
}

void cc_pbw_raw_varint(cc_pbw_t *w, uint64_t v)
{
    while ((v >> 32) != 0u) {   /* the bytes of the upper bits; the rest in 32-bit arithmetic */
        put(w, (uint8_t)(v | 0x80u));
        v >>= 7;
    }
    cc_pbw_raw_varint32(w, (uint32_t)v);
}

static void put_le(cc_pbw_t *w, uint64_t v, size_t n)
{
    size_t i;
    if (!room(w, n)) {
        return;
    }
    for (i = 0; i < n; i++) {
        w->buf[w->len++] = (uint8_t)(v >> (8u * i));
    }
}

void cc_pbw_raw_fixed32(cc_pbw_t *w, uint32_t value)
{
    put_le(w, value, 4u);
}

void cc_pbw_raw_fixed64(cc_pbw_t *w, uint64_t value)
{
    put_le(w, value, 8u);
}

void cc_pbw_tag(cc_pbw_t *w, uint32_t field, uint32_t wire_type)
{
    cc_pbw_raw_varint32(w, (field << 3) | wire_type);   /* a field number is at most 2^29 - 1 */
}

void cc_pbw_varint(cc_pbw_t *w, uint32_t field, uint64_t value)
{
    if (value == 0u) {
        return;
    }
    cc_pbw_tag(w, field, CC_PB_WIRE_VARINT);
    cc_pbw_raw_varint(w, value);
}

void cc_pbw_varint32(cc_pbw_t *w, uint32_t field, uint32_t value)
{
    if (value != 0u) {
        cc_pbw_tag(w, field, CC_PB_WIRE_VARINT);
        cc_pbw_raw_varint32(w, value);
    }
}

void cc_pbw_int32(cc_pbw_t *w, uint32_t field, int32_t value)
{
    cc_pbw_varint(w, field, (uint64_t)(int64_t)value);   /* a negative value: ten bytes, as protobuf */
}

void cc_pbw_fixed32(cc_pbw_t *w, uint32_t field, uint32_t value)
{
    if (value != 0u) {
        cc_pbw_tag(w, field, CC_PB_WIRE_FIXED32);
        put_le(w, value, 4u);
    }
}

void cc_pbw_fixed64(cc_pbw_t *w, uint32_t field, uint64_t value)
{
    if (value != 0u) {
        cc_pbw_tag(w, field, CC_PB_WIRE_FIXED64);
        put_le(w, value, 8u);
    }
}

void cc_pbw_raw_bytes(cc_pbw_t *w, const void *data, size_t len)
{
    cc_pbw_raw_varint32(w, (uint32_t)len);   /* len > cap fails the room check below */
    if (len > 0u && room(w, len)) {
        memcpy(w->buf + w->len, data, len);
        w->len += len;
    }
}

/* The length of text, counted up to one past the writer's capacity: a longer
 * string does not fit whatever its length (its tag or length comes first), and
 * one past still does not, even in a writer of capacity 0. The bound also
 * keeps the compiler from making the loop a call of strlen(), which takes 92
 * bytes of flash for this one use. text[n] is read only after text[n - 1]
 * was not the terminator. */
static size_t text_len(const cc_pbw_t *w, const char *text)
{
    size_t n = 0;
    while (n <= w->cap && text[n] != '\0') {
        n++;
    }
    return n;
}

void cc_pbw_raw_string(cc_pbw_t *w, const char *text)
{
    cc_pbw_raw_bytes(w, text, text != NULL ? text_len(w, text) : 0u);
}

void cc_pbw_bytes(cc_pbw_t *w, uint32_t field, const void *data, size_t len)
{
    if (len == 0u) {
        return;
    }
    cc_pbw_tag(w, field, CC_PB_WIRE_LEN);
    cc_pbw_raw_bytes(w, data, len);
}

void cc_pbw_string(cc_pbw_t *w, uint32_t field, const char *text)
{
    if (text != NULL) {
        cc_pbw_bytes(w, field, text, text_len(w, text));
    }
}

/* Moves n bytes at p up by `by` bytes (a loop: no memmove linked for the
 * one or two bytes a longer length takes). */
static void move_up(uint8_t *p, size_t n, size_t by)
{
    while (n > 0u) {
        n--;
        p[n + by] = p[n];
    }
}

/* An embedded message's length goes before its body, which is written first
 * after one byte kept for the length; a longer length moves the body up. */
void cc_pbw_begin(cc_pbw_t *w, uint32_t field)
{
    cc_pbw_tag(w, field, CC_PB_WIRE_LEN);
    if (w->depth >= CC_PBW_MAX_DEPTH) {
        w->overflowed = true;   /* a caller's mistake: fails the message, never corrupts */
        return;
    }
    if (!room(w, 1u)) {
        return;
    }
    w->len++;
    w->open[w->depth++] = w->len;
}

void cc_pbw_end(cc_pbw_t *w)
{
    size_t start;
    size_t body;
    size_t extra;
    if (w->depth == 0u) {
        w->overflowed = true;
        return;
    }
    start = w->open[--w->depth];
    if (w->overflowed) {
        return;
    }
    body = w->len - start;
    extra = varint_size(body) - 1u;
    if (extra > 0u) {
        if (!room(w, extra)) {
            return;
        }
        move_up(w->buf + start, body, extra);
        w->len += extra;
    }
    w->len = start - 1u;
    cc_pbw_raw_varint32(w, (uint32_t)body);
    w->len += body;
}

size_t cc_pbw_len(const cc_pbw_t *w)
{
    return w->overflowed ? 0u : w->len;
}

bool cc_pbw_ok(const cc_pbw_t *w)
{
    return !w->overflowed && w->depth == 0u;
}

uint64_t cc_pbw_zigzag(int64_t value)
{
    uint64_t u = (uint64_t)value;
    return value < 0 ? ~(u << 1) : (u << 1);
}

uint32_t cc_pbw_float_bits(float value)
{
    uint32_t bits;
    memcpy(&bits, &value, sizeof bits);
    return bits;
}

uint64_t cc_pbw_double_bits(double value)
{
    uint64_t bits;
    memcpy(&bits, &value, sizeof bits);
    return bits;
}
