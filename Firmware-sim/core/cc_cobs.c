/* CameraControl firmware core: COBS encoder and decoder. */
#include "cc_cobs.h"

/* A code byte of 0xFF: 254 data bytes, no zero after them. */
#define COBS_MAX_CODE 0xFFu

size_t cc_cobs_encode(const uint8_t *in, size_t len, uint8_t *out, size_t cap)
{
    size_t code_pos = 0;   /* where the open block's code byte goes */
    size_t out_pos = 1;
    uint8_t code = 1;      /* 1 + data bytes in the open block */
    size_t i;

    if (cap == 0) {
        return 0;
    }
    for (i = 0; i < len; i++) {
        if (in[i] == 0u) {
            out[code_pos] = code;
            if (out_pos >= cap) {
                return 0;
            }
            code_pos = out_pos++;
            code = 1;
            continue;
        }
        if (out_pos >= cap) {
            return 0;
        }
        out[out_pos++] = in[i];
        code++;
        if (code == COBS_MAX_CODE) {
            out[code_pos] = code;
            code = 1;
            if (i + 1u == len) {
                return out_pos;   /* canonical: no empty block after a full one at the end */
            }
            if (out_pos >= cap) {
                return 0;
            }
            code_pos = out_pos++;
        }
    }
    out[code_pos] = code;
    return out_pos;
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
