/* CameraControl firmware core: unsigned 32-bit division, one bit a step (see cc_udiv.h). */
#include "cc_udiv.h"

uint32_t cc_udiv32(uint32_t n, uint32_t d)
{
    uint32_t q = 0;
    uint32_t r = 0;
    unsigned i = 32u;
    while (i > 0u) {
        i--;
        /* r is at most n >> (i + 1) here, so shifting it loses no bit */
        r = (r << 1) | ((n >> i) & 1u);
        if (r >= d) {
            r -= d;
            q |= (uint32_t)1u << i;
        }
    }
    return q;
}
