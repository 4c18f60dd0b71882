/*
 * CameraControl firmware core: a protobuf wire-format writer for the messages
 * the device sends (responses and stream messages).
 *
 * protobuf-c still unpacks every request; the device's own messages are
 * written field by field with these functions instead of packed by
 * protobuf-c, so that a small board links neither protobuf-c's packing code
 * nor the descriptors of messages it only sends (docs/FIRMWARE.md, "Flash").
 * The bytes are exactly protobuf-c's (and Google protobuf's) for proto3:
 * fields in the caller's order (callers go by field number), fields holding
 * their default (0, false, "", empty) left out, repeated scalars packed,
 * shortest varints. Firmware-sim/tests check each message against protobuf-c.
 *
 * Bounded: every write checks the room left; once something did not fit the
 * writer is marked overflowed and writes nothing more (cc_pbw_len() then
 * says 0 and cc_pbw_ok() false). No heap, no I/O.
 */
#ifndef CC_PBW_H
#define CC_PBW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Most nested messages open at once. */
#define CC_PBW_MAX_DEPTH 2u

typedef struct cc_pbw {
    uint8_t *buf;
    size_t cap;
    size_t len;
    bool overflowed;
    uint8_t depth;
    size_t open[CC_PBW_MAX_DEPTH];   /* where each open message's body starts */
} cc_pbw_t;

/* Starts writing into buf (cap bytes). */
void cc_pbw_init(cc_pbw_t *w, uint8_t *buf, size_t cap);

/* A varint field (uint32, uint64, enum, bool as 0/1); nothing when value is 0. */
void cc_pbw_varint(cc_pbw_t *w, uint32_t field, uint64_t value);

/* A length-delimited field (bytes, string); nothing when len is 0. */
void cc_pbw_bytes(cc_pbw_t *w, uint32_t field, const void *data, size_t len);

/* A string field (NULL counts as ""); nothing when empty. */
void cc_pbw_string(cc_pbw_t *w, uint32_t field, const char *text);

/* A packed repeated uint32/enum field; nothing when n is 0. */
void cc_pbw_packed(cc_pbw_t *w, uint32_t field, const uint32_t *values, size_t n);

/* An embedded message field: its fields follow until cc_pbw_end(). An
 * embedded message that is present is written even when it is empty. */
void cc_pbw_begin(cc_pbw_t *w, uint32_t field);
void cc_pbw_end(cc_pbw_t *w);

/* Bytes written (0 after an overflow). */
size_t cc_pbw_len(const cc_pbw_t *w);

/* Everything fitted and every embedded message was ended. */
bool cc_pbw_ok(const cc_pbw_t *w);

#ifdef __cplusplus
}
#endif

#endif /* CC_PBW_H */
