/*
 * CameraControl firmware core: a protobuf wire-format writer for the messages
 * the device sends (responses and stream messages).
 *
 * The generated writers of cc_pb.h (scripts/gen_c_codec.py:
 * cc_pbw_write_<message>) call these functions, one per field, with the
 * field numbers of the schema; the core calls the generated writers, never
 * these with a field number of its own. The bytes are exactly Google
 * protobuf's (and protobuf-c's) for proto3: fields in field-number order,
 * fields holding their default (0, false, "", empty) left out, repeated
 * scalars packed, shortest varints. Firmware-sim/tests/codec checks every
 * field of every sent message against Google's protobuf.
 *
 * Bounded: every write checks the room left; once something did not fit the
 * writer is marked overflowed and writes nothing more (cc_pbw_len() then
 * says 0 and cc_pbw_ok() false; the bytes of a varint that fitted before it
 * may stay in the buffer, never sent). No heap, no I/O.
 */
#ifndef CC_PBW_H
#define CC_PBW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cc_wire.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Most nested messages (and packed fields inside them) open at once; cc_pb.h
 * fails to compile when the schema nests deeper. */
#ifndef CC_PBW_MAX_DEPTH
#define CC_PBW_MAX_DEPTH 3u
#endif

/* A view of bytes (a bytes or string field): not copied, not owned. */
typedef struct cc_pb_bytes {
    const uint8_t *data;
    size_t len;
} cc_pb_bytes_t;

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

/* Fields of implicit presence (proto3): nothing when the value is 0 / empty. */
/* A varint field (its value already converted: sign-extended, zigzag, 0/1). */
void cc_pbw_varint(cc_pbw_t *w, uint32_t field, uint64_t value);
/* The same for a value of 32 bits (uint32, bool as 0/1): shorter and faster on a 32-bit CPU. */
void cc_pbw_varint32(cc_pbw_t *w, uint32_t field, uint32_t value);
/* An int32 or enum field: sign-extended to 64 bits, as protobuf does (a negative value is ten bytes). */
void cc_pbw_int32(cc_pbw_t *w, uint32_t field, int32_t value);
/* A 4-byte and an 8-byte field (fixed32, sfixed32, float bits; fixed64, ...). */
void cc_pbw_fixed32(cc_pbw_t *w, uint32_t field, uint32_t value);
void cc_pbw_fixed64(cc_pbw_t *w, uint32_t field, uint64_t value);
/* A length-delimited field (bytes, string). */
void cc_pbw_bytes(cc_pbw_t *w, uint32_t field, const void *data, size_t len);
/* A string field (NULL counts as ""). */
void cc_pbw_string(cc_pbw_t *w, uint32_t field, const char *text);

/* Parts of a field, always written: a key, then one value (explicit presence,
 * repeated entries, packed bodies). */
void cc_pbw_tag(cc_pbw_t *w, uint32_t field, uint32_t wire_type);
void cc_pbw_raw_varint(cc_pbw_t *w, uint64_t value);
void cc_pbw_raw_varint32(cc_pbw_t *w, uint32_t value);
void cc_pbw_raw_fixed32(cc_pbw_t *w, uint32_t value);
void cc_pbw_raw_fixed64(cc_pbw_t *w, uint64_t value);
void cc_pbw_raw_bytes(cc_pbw_t *w, const void *data, size_t len);   /* length, then the bytes */
void cc_pbw_raw_string(cc_pbw_t *w, const char *text);

/* An embedded message (or a packed field's body): what follows until
 * cc_pbw_end() is its body. A message that is begun is written even when empty. */
void cc_pbw_begin(cc_pbw_t *w, uint32_t field);
void cc_pbw_end(cc_pbw_t *w);

/* Bytes written (0 after an overflow). */
size_t cc_pbw_len(const cc_pbw_t *w);

/* Everything fitted and every embedded message was ended. */
bool cc_pbw_ok(const cc_pbw_t *w);

/* sint32/sint64's zigzag: 0, -1, 1, -2 ... -> 0, 1, 2, 3 ... */
uint64_t cc_pbw_zigzag(int64_t value);
/* A float's and a double's bits (IEEE 754), as protobuf sends them. */
uint32_t cc_pbw_float_bits(float value);
uint64_t cc_pbw_double_bits(double value);

#ifdef __cplusplus
}
#endif

#endif /* CC_PBW_H */
