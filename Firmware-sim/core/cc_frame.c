/* CameraControl firmware core: streaming frame decoder and frame encoder. */
#include "cc_frame.h"

#include "cc_assert.h"
#include "cc_cobs.h"
#include "cc_crc16.h"
#include "cc_udiv.h"
#include "cc_wire.h"

void cc_frame_decoder_init(cc_frame_decoder_t *dec)
{
    dec->len = 0;
    dec->discarding = false;
    dec->body_ready = false;
}

/* Unstuffs the buffered bytes in place and checks the CRC. */
static cc_frame_result_t frame_complete(cc_frame_decoder_t *dec)
{
    size_t body_len = 0;
    uint16_t expected;
    uint16_t received;

    if (cc_cobs_decode(dec->buf, dec->len, dec->buf, sizeof dec->buf, &body_len) != 0) {
        dec->len = 0;
        return CC_FRAME_ERR_FRAMING;
    }
    if (body_len > CC_MAX_FRAME_BYTES) {
        dec->len = 0;
        return CC_FRAME_ERR_OVERSIZED;
    }
    if (body_len == 0u) {
        dec->len = 0;
        return CC_FRAME_EMPTY;   /* a stuffed empty frame (01 00): ignored (§2, v1.1) */
    }
    if (body_len < CC_WIRE_CHECK_BYTES + CC_WIRE_MIN_ENVELOPE_BYTES) {
        dec->len = 0;
        return CC_FRAME_ERR_SHORT;   /* checked before the CRC (§2, counter precedence) */
    }
    body_len -= CC_WIRE_CHECK_BYTES;
    expected = cc_crc16(dec->buf, body_len);
    received = (uint16_t)(dec->buf[body_len] | ((uint16_t)dec->buf[body_len + 1u] << 8));
    if (expected != received) {
        dec->len = 0;
        return CC_FRAME_ERR_CHECK;
    }
    dec->len = body_len;
    dec->body_ready = true;
    return CC_FRAME_OK;
}

cc_frame_result_t cc_frame_decoder_feed(cc_frame_decoder_t *dec, uint8_t byte)
{
    if (dec->body_ready) {
        dec->body_ready = false;
        dec->len = 0;
    }
    if (byte == CC_WIRE_DELIMITER) {
        size_t buffered = dec->len;
        if (dec->discarding) {
            dec->discarding = false;
            dec->len = 0;
            return CC_FRAME_NEED_MORE;   /* end of an oversized frame, already reported */
        }
        if (buffered == 0u) {
            return CC_FRAME_EMPTY;
        }
        return frame_complete(dec);
    }
    if (dec->discarding) {
        return CC_FRAME_NEED_MORE;
    }
    if (dec->len == sizeof dec->buf) {
        dec->discarding = true;
        dec->len = 0;
        return CC_FRAME_ERR_OVERSIZED;
    }
    dec->buf[dec->len++] = byte;
    return CC_FRAME_NEED_MORE;
}

const uint8_t *cc_frame_decoder_body(const cc_frame_decoder_t *dec, size_t *len)
{
    *len = dec->body_ready ? dec->len : 0u;
    return dec->buf;
}

size_t cc_frame_encode(const uint8_t *body, size_t len, uint8_t *out, size_t cap)
{
    uint16_t crc = cc_crc16(body, len);
    uint8_t check[CC_WIRE_CHECK_BYTES];
    cc_cobs_encoder_t enc;
    size_t n;

    if (cap == 0u) {
        return 0;
    }
    check[0] = (uint8_t)(crc & 0xFFu);
    check[1] = (uint8_t)(crc >> 8);
    cc_cobs_encoder_begin(&enc, out, cap - 1u);
    cc_cobs_encoder_write(&enc, body, len);
    cc_cobs_encoder_write(&enc, check, sizeof check);
    n = cc_cobs_encoder_end(&enc);
    if (n == 0u) {
        return 0;
    }
    out[n] = CC_WIRE_DELIMITER;
    return n + 1u;
}

size_t cc_frame_wire_bytes(size_t n)
{
    return n + CC_UDIV32((uint32_t)n + 253u, 254u) + 1u;
}
