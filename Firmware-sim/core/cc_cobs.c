/* CameraControl firmware core: COBS encoder and decoder. */
#include "cc_cobs.h"

/* A code byte of 0xFF: 254 data bytes, no zero after them. */
#define COBS_MAX_CODE 0xFFu

void cc_cobs_encoder_begin(cc_cobs_encoder_t *enc, uint8_t *out, size_t cap)
{
    enc->out = out;
    enc->cap = cap;
    enc->code_pos = 0;
    enc->out_pos = 1;
    enc->code = 1;
    enc->block_open = 1;
    enc->failed = cap == 0u ? 1u : 0u;
}

/* Reserves the code byte of a new block. */
static void open_block(cc_cobs_encoder_t *enc)
{
    if (enc->out_pos >= enc->cap) {
        enc->failed = 1;
        return;
    }
    enc->code_pos = enc->out_pos++;
    enc->code = 1;
    enc->block_open = 1;
}

void cc_cobs_encoder_write(cc_cobs_encoder_t *enc, const uint8_t *in, size_t len)
{
    size_t i;
    for (i = 0; i < len && !enc->failed; i++) {
        if (!enc->block_open) {
            open_block(enc);   /* lazily: no empty block after a full one at the end */
            if (enc->failed) {
                return;
            }
        }
        if (in[i] == 0u) {
            enc->out[enc->code_pos] = enc->code;
            open_block(enc);
            continue;
        }
        if (enc->out_pos >= enc->cap) {
            enc->failed = 1;
            return;
        }
        enc->out[enc->out_pos++] = in[i];
        enc->code++;
        if (enc->code == COBS_MAX_CODE) {
            enc->out[enc->code_pos] = enc->code;
            enc->block_open = 0;
        }
    }
}

size_t cc_cobs_encoder_end(cc_cobs_encoder_t *enc)
{
    if (enc->failed) {
        return 0;
    }
    if (enc->block_open) {
        enc->out[enc->code_pos] = enc->code;
    }
    return enc->out_pos;
}

size_t cc_cobs_encode(const uint8_t *in, size_t len, uint8_t *out, size_t cap)
{
    cc_cobs_encoder_t enc;
    cc_cobs_encoder_begin(&enc, out, cap);
    cc_cobs_encoder_write(&enc, in, len);
    return cc_cobs_encoder_end(&enc);
}

int cc_cobs_decode(const uint8_t *in, size_t len, uint8_t *out, size_t cap, size_t *out_len)
{
    size_t in_pos = 0;
    size_t out_pos = 0;

    while (in_pos < len) {
        uint8_t code = in[in_pos++];
        size_t run;
        if (code == 0u) {
            return -1;                       /* a delimiter cannot be inside a frame */
        }
        run = (size_t)code - 1u;
        if (run > len - in_pos || run > cap - out_pos) {
            return -1;                       /* truncated block, or does not fit */
        }
        while (run > 0u) {
            uint8_t b = in[in_pos++];
            if (b == 0u) {
                return -1;
            }
            out[out_pos++] = b;
            run--;
        }
        if (code != COBS_MAX_CODE && in_pos < len) {
            if (out_pos >= cap) {
                return -1;
            }
            out[out_pos++] = 0u;
        }
    }
    *out_len = out_pos;
    return 0;
}
