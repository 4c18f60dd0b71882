/*
 * CameraControl firmware core: the streaming frame decoder (PROTOCOL.md §2, §3).
 *
 * Fed one byte at a time. It accumulates stuffed bytes until the 0x00
 * delimiter, then unstuffs in place and verifies the CRC-16. Memory is
 * bounded: more than CC_FRAME_STUFFED_CAP bytes without a delimiter drops
 * the frame and discards everything up to and including the next 0x00.
 * A bad frame never affects the next one. A frame is classified by the
 * first check that fails (PROTOCOL.md §2): COBS, then length, then CRC; the
 * envelope is the parser's (cc_envelope.h).
 *
 *   state ACCUMULATING --byte != 0--> ACCUMULATING (or DISCARDING on overflow)
 *         ACCUMULATING --0x00-------> result, ACCUMULATING
 *         DISCARDING   --byte != 0--> DISCARDING
 *         DISCARDING   --0x00-------> ACCUMULATING
 */
#ifndef CC_FRAME_H
#define CC_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cc_config.h"

#ifdef __cplusplus
extern "C" {
#endif


/* Most stuffed bytes buffered before a frame counts as oversized. */
#define CC_FRAME_STUFFED_CAP (CC_MAX_FRAME_BYTES + (CC_MAX_FRAME_BYTES + 253u) / 254u)

/* Bytes on the wire for an unstuffed frame of n bytes, delimiter included
 * (cc_frame_wire_bytes computes it at run time). */
#define CC_FRAME_WIRE_BYTES(n) ((n) + ((n) + 253u) / 254u + 1u)

/* What one byte completed. */
typedef enum cc_frame_result {
    CC_FRAME_NEED_MORE = 0,   /* no frame yet */
    CC_FRAME_OK,              /* a frame with a good check: see cc_frame_decoder_body */
    CC_FRAME_EMPTY,           /* a lone delimiter or a stuffed empty frame (01 00): not an error */
    CC_FRAME_ERR_FRAMING,     /* not valid COBS */
    CC_FRAME_ERR_CHECK,       /* the CRC-16 did not match */
    CC_FRAME_ERR_OVERSIZED,   /* too long: dropped (reported once per frame) */
    CC_FRAME_ERR_SHORT        /* fewer than 4 bytes before the check (the CRC is not looked at) */
} cc_frame_result_t;

typedef struct cc_frame_decoder {
    uint8_t buf[CC_FRAME_STUFFED_CAP];
    size_t len;        /* stuffed bytes buffered; after CC_FRAME_OK, the body length */
    bool discarding;   /* dropping bytes up to the next delimiter */
    bool body_ready;   /* buf holds the body of the frame just completed */
} cc_frame_decoder_t;

void cc_frame_decoder_init(cc_frame_decoder_t *dec);

/* Feeds one byte. After CC_FRAME_OK the body (envelope + payload, check
 * removed) is available from cc_frame_decoder_body until the next feed. */
cc_frame_result_t cc_frame_decoder_feed(cc_frame_decoder_t *dec, uint8_t byte);

/* The body of the frame the last feed completed. */
const uint8_t *cc_frame_decoder_body(const cc_frame_decoder_t *dec, size_t *len);

/*
 * Encodes one frame for the wire: body[0..len) with its CRC-16 appended
 * (little-endian), COBS-stuffed, then the delimiter. Returns the wire
 * length, 0 when it does not fit in cap (at most CC_FRAME_WIRE_BYTES(len + 2)).
 */
size_t cc_frame_encode(const uint8_t *body, size_t len, uint8_t *out, size_t cap);

/* CC_FRAME_WIRE_BYTES(n) for n known only at run time (n below 2^32 - 253),
 * divided by CC_UDIV32: no libgcc divider linked. */
size_t cc_frame_wire_bytes(size_t n);

#ifdef __cplusplus
}
#endif

#endif /* CC_FRAME_H */
