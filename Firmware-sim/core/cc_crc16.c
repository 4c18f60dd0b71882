/* CameraControl firmware core: CRC-16/IBM-3740, four bits at a time (32-byte table). */
#include "cc_crc16.h"

#include "cc_wire.h"

/* CRC of each 4-bit value shifted into the top of the register. */
static const uint16_t crc16_nibble_table[16] = {
    0x0000u, 0x1021u, 0x2042u, 0x3063u, 0x4084u, 0x50A5u, 0x60C6u, 0x70E7u,
    0x8108u, 0x9129u, 0xA14Au, 0xB16Bu, 0xC18Cu, 0xD1ADu, 0xE1CEu, 0xF1EFu,
};

uint16_t cc_crc16_update(uint16_t crc, const uint8_t *data, size_t len)
{
    size_t i;
    for (i = 0; i < len; i++) {
        uint8_t byte = data[i];
        crc = (uint16_t)((uint16_t)(crc << 4) ^ crc16_nibble_table[((crc >> 12) ^ (byte >> 4)) & 0x0Fu]);
        crc = (uint16_t)((uint16_t)(crc << 4) ^ crc16_nibble_table[((crc >> 12) ^ (byte & 0x0Fu)) & 0x0Fu]);
    }
    return crc;
}

uint16_t cc_crc16(const uint8_t *data, size_t len)
{
    return cc_crc16_update((uint16_t)CC_WIRE_CRC16_INIT, data, len);
}
