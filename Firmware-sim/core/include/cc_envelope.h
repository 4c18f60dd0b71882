/*
 * CameraControl firmware core: the packet envelope of PROTOCOL.md §4
 * (layout drawn in cc_wire.h). Works on bodies: frames without their check.
 */
#ifndef CC_ENVELOPE_H
#define CC_ENVELOPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cc_wire.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One parsed envelope; payload points into the parsed body. */
typedef struct cc_envelope {
    uint8_t type;        /* CC_PKT_* (or an unknown value) */
    uint8_t flags;       /* CC_WIRE_FLAG_* bits, reserved bits as received */
    uint16_t sequence;
    uint32_t call_id;
    uint8_t service;     /* REQUEST only */
    uint8_t method;      /* REQUEST only */
    uint8_t status;      /* STREAM_END and ERROR only */
    const uint8_t *payload;
    size_t payload_len;
} cc_envelope_t;

typedef enum cc_envelope_result {
    CC_ENVELOPE_OK = 0,
    CC_ENVELOPE_TOO_SHORT,      /* envelope error: fewer than 4 bytes, truncated varint, missing ids,
                                   an ACK without its payload */
    CC_ENVELOPE_BAD_CALL_ID,    /* envelope error: varint longer than 5 bytes or >= 2^32, or call id 0
                                   on a type other than ACK and HEARTBEAT */
    CC_ENVELOPE_UNKNOWN_TYPE    /* type, flags, sequence and call id are valid; the rest is not parsed */
} cc_envelope_result_t;

/* True for the types v1 defines (1..8). */
bool cc_envelope_type_known(uint8_t type);

/* Parses a body (envelope + payload). */
cc_envelope_result_t cc_envelope_parse(const uint8_t *body, size_t len, cc_envelope_t *out);

/* Writes the envelope of env (type, flags, sequence, call_id, and service +
 * method or status as the type needs) into out; returns its length (at most
 * CC_WIRE_MAX_ENVELOPE_BYTES), 0 when cap is too small. */
size_t cc_envelope_write(const cc_envelope_t *env, uint8_t *out, size_t cap);

/* Bytes cc_envelope_write will write for env. */
size_t cc_envelope_size(const cc_envelope_t *env);
/* The same from the two fields it depends on: an envelope of type with call_id. */
size_t cc_envelope_size_of(uint8_t type, uint32_t call_id);

/* LEB128 varint of a call id: writes 1-5 bytes, returns how many (0 if cap too small). */
size_t cc_varint_write(uint32_t value, uint8_t *out, size_t cap);

#ifdef __cplusplus
}
#endif

#endif /* CC_ENVELOPE_H */
