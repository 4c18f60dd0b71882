/*
 * CameraControl firmware core: CRC-16/IBM-3740 (CCITT-FALSE) of PROTOCOL.md §3.
 * Polynomial 0x1021, initial value 0xFFFF, no reflection, no final XOR.
 * Check value of "123456789" is 0x29B1.
 */
#ifndef CC_CRC16_H
#define CC_CRC16_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Continues a CRC over len more bytes; start with CC_WIRE_CRC16_INIT. */
uint16_t cc_crc16_update(uint16_t crc, const uint8_t *data, size_t len);

/* The CRC of one buffer. */
uint16_t cc_crc16(const uint8_t *data, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* CC_CRC16_H */
