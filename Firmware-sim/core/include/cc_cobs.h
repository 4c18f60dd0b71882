/*
 * CameraControl firmware core: Consistent Overhead Byte Stuffing (PROTOCOL.md §2).
 *
 * The encoder emits the canonical form: a block of 254 non-zero bytes that
 * ends the data is not followed by an empty block, so n bytes never take
 * more than n + ceil(n / 254) bytes (at least 1). The delimiter is not part
 * of the encoding.
 */
#ifndef CC_COBS_H
#define CC_COBS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Largest encoding of n bytes (delimiter excluded). */
#define CC_COBS_MAX_ENCODED(n) ((n) + ((n) + 253u) / 254u + ((n) == 0u ? 1u : 0u))

/* A COBS encoder fed in pieces (the frame encoder feeds body, then check). */
typedef struct cc_cobs_encoder {
    uint8_t *out;
    size_t cap;
    size_t code_pos;     /* where the open block's code byte goes */
    size_t out_pos;
    uint8_t code;        /* 1 + data bytes in the open block */
    uint8_t block_open;  /* 0 right after a full (254-byte) block */
    uint8_t failed;      /* out was too small */
} cc_cobs_encoder_t;

void cc_cobs_encoder_begin(cc_cobs_encoder_t *enc, uint8_t *out, size_t cap);
void cc_cobs_encoder_write(cc_cobs_encoder_t *enc, const uint8_t *in, size_t len);
/* Closes the encoding; returns its length, 0 when it did not fit. */
size_t cc_cobs_encoder_end(cc_cobs_encoder_t *enc);

/* Encodes in[0..len) into out; returns the encoded length, or 0 when it
 * does not fit in cap. in and out must not overlap. */
size_t cc_cobs_encode(const uint8_t *in, size_t len, uint8_t *out, size_t cap);

/* Decodes in[0..len) (no delimiter, no 0x00 inside) into out; returns 0 and
 * sets *out_len, or -1 when the input is not valid COBS or does not fit in
 * cap. out may equal in (decoding in place never overtakes the input). */
int cc_cobs_decode(const uint8_t *in, size_t len, uint8_t *out, size_t cap, size_t *out_len);

#ifdef __cplusplus
}
#endif

#endif /* CC_COBS_H */
