/* CameraControl firmware core: delta coding of raw sample records (include/cc_rawdelta.h). */
#include "cc_rawdelta.h"

#include <stdbool.h>

#include "cc_wire.h"

/* Appends v as a varint; false when it does not fit. */
static bool put_varint(uint8_t *out, size_t cap, size_t *len, uint32_t v)
{
    do {
        if (*len >= cap) {
            return false;
        }
        out[(*len)++] = (uint8_t)((v & 0x7Fu) | (v > 0x7Fu ? 0x80u : 0u));
        v >>= 7;
    } while (v != 0u);
    return true;
}

static uint32_t zigzag(int32_t d) { return d >= 0 ? (uint32_t)d * 2u : (uint32_t)(-(d + 1)) * 2u + 1u; }

size_t cc_rawdelta_encode(const uint8_t *records, size_t count, uint8_t *out, size_t cap)
{
    int32_t force_before = 0, position_before = 0;
    size_t i, len = 0;

    for (i = 0; i < count; i++) {
        const uint8_t *r = &records[i * CC_WIRE_RAW_RECORD_BYTES];
        uint32_t record = (uint32_t)r[0] | ((uint32_t)r[1] << 8) | ((uint32_t)r[2] << 16) | ((uint32_t)r[3] << 24);
        int32_t force = (int32_t)(record & CC_WIRE_RAW_FORCE_MAX);
        int32_t position = (int32_t)((record >> CC_WIRE_RAW_POSITION_SHIFT) & CC_WIRE_RAW_POSITION_MAX);
        uint32_t moved = position != position_before ? 1u : 0u;
        uint32_t touch = (record & CC_WIRE_RAW_TOUCH_BIT) != 0u ? 1u : 0u;
        if (!put_varint(out, cap, &len, zigzag(force - force_before) * 4u + moved * 2u + touch)) {
            return 0;
        }
        if (moved != 0u && !put_varint(out, cap, &len, zigzag(position - position_before))) {
            return 0;
        }
        force_before = force;
        position_before = position;
    }
    return len;
}
