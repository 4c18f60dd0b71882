/*
 * CameraControl firmware core: a bounded protobuf wire-format reader for the
 * requests the device receives.
 *
 * The generated readers of cc_pb.h (scripts/gen_c_codec.py:
 * cc_pbr_read_<message>) walk a payload with these functions into a
 * fixed-size struct: no heap, no arena, nothing copied (strings and bytes are
 * views into the payload). A reader never reads past its end: a truncated
 * field, a varint longer than 10 bytes, a bad key (field 0, a group or an
 * unknown wire type) or a string that is not UTF-8 make it CC_PBR_MALFORMED,
 * an entry beyond a struct's bound CC_PBR_TOO_LARGE. The first error sticks:
 * every read after it returns 0 and cc_pbr_next() false.
 */
#ifndef CC_PBR_H
#define CC_PBR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cc_pbw.h"
#include "cc_wire.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum cc_pbr_status {
    CC_PBR_OK = 0,
    CC_PBR_MALFORMED = 1,   /* not a valid encoding of the message */
    CC_PBR_TOO_LARGE = 2    /* valid, but more entries or bytes than the struct holds */
} cc_pbr_status_t;

typedef struct cc_pbr {
    const uint8_t *pos;
    const uint8_t *end;
    cc_pbr_status_t status;
} cc_pbr_t;

void cc_pbr_init(cc_pbr_t *r, const uint8_t *data, size_t len);

/* A generated reader's start: clears its struct m (size bytes, every field
 * absent) and starts *r on data[0..len). Kept out of line (GCC's and clang's
 * noinline): link-time optimisation would copy it into every request's handler
 * (48 bytes more flash on the micro:bit). */
#if defined(__GNUC__)
#define CC_PBR_OUT_OF_LINE __attribute__((noinline))
#else
#define CC_PBR_OUT_OF_LINE
#endif
CC_PBR_OUT_OF_LINE void cc_pbr_start(cc_pbr_t *r, void *m, size_t size, const uint8_t *data, size_t len);

/* The next field's key: false at the end or after an error. */
bool cc_pbr_next(cc_pbr_t *r, uint32_t *field, uint32_t *wire_type);

/* One value of the wire type the key announced (0 after an error). */
uint64_t cc_pbr_raw_varint(cc_pbr_t *r);
uint64_t cc_pbr_raw_fixed32(cc_pbr_t *r);
uint64_t cc_pbr_raw_fixed64(cc_pbr_t *r);
cc_pb_bytes_t cc_pbr_bytes(cc_pbr_t *r);

/* A length-delimited value as a reader of its own (an embedded message, a
 * packed field); false after an error. cc_pbr_join() hands its error back. */
bool cc_pbr_sub(cc_pbr_t *r, cc_pbr_t *sub);
void cc_pbr_join(cc_pbr_t *r, const cc_pbr_t *sub);

/* Bytes left and no error. */
bool cc_pbr_more(const cc_pbr_t *r);

/* Skips a value of wire_type (an unknown field). */
void cc_pbr_skip(cc_pbr_t *r, uint32_t wire_type);

/* Marks *r failed with status (when it is not already). */
void cc_pbr_fail(cc_pbr_t *r, cc_pbr_status_t status);

/* A string field's value must be UTF-8 (proto3): fails *r when it is not. */
void cc_pbr_check_utf8(cc_pbr_t *r, cc_pb_bytes_t s);

cc_pbr_status_t cc_pbr_status(const cc_pbr_t *r);

/* sint32/sint64's zigzag back to the signed value. */
int64_t cc_pbr_unzigzag(uint64_t value);
/* A float and a double from their bits. */
float cc_pbr_float(uint32_t bits);
double cc_pbr_double(uint64_t bits);

#ifdef __cplusplus
}
#endif

#endif /* CC_PBR_H */
