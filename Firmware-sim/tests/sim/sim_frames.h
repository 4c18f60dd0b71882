/*
 * Scripted frames for the tests of camctl-sim's filters (sim/breaks.c): one packet on the wire, built by
 * hand, so a test says exactly what a host or a device sent.
 */
#ifndef SIM_FRAMES_H
#define SIM_FRAMES_H

#include <stddef.h>
#include <stdint.h>

#include "cc_frame.h"

/* One frame on the wire: type|flags, sequence, a call id of one varint byte, payload (a REQUEST's service
 * and method first); its wire size, 0 when it does not fit `cap`. */
static size_t call_frame(uint8_t type, uint8_t flags, uint16_t sequence, uint8_t call, const uint8_t *payload,
                         size_t payload_len, uint8_t *out, size_t cap)
{
    uint8_t body[32];
    size_t n = 0, i;
    if (payload_len > sizeof body - 4u) {
        return 0;
    }
    body[n++] = (uint8_t)(type | flags);
    body[n++] = (uint8_t)(sequence & 0xFFu);
    body[n++] = (uint8_t)(sequence >> 8);
    body[n++] = call;
    for (i = 0; i < payload_len; i++) {
        body[n++] = payload[i];
    }
    return cc_frame_encode(body, n, out, cap);
}

#endif /* SIM_FRAMES_H */
