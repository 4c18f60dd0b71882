/*
 * CameraControl firmware core: unsigned 32-bit division without libgcc's
 * divider. A Cortex-M0 has no divide instruction, and its multiplier gives no
 * high word, so at -Os even a division by a constant is a call of libgcc's
 * __aeabi_uidiv: 280 bytes of flash on the micro:bit, for the few divisions
 * the core makes (a sampling rate set, a tare ended, a frame sent, a number
 * written into a status text), none of them run for every sample. The core
 * divides with CC_UDIV32: this file's loop, or the C operator where the
 * target has a divide instruction (a Cortex-M3/M4's UDIV: no libgcc call).
 * An x86-64 host build takes the loop (an arm64 host has UDIV, and takes the
 * operator); the C tests call cc_udiv32 itself, so they run the loop anyway.
 */
#ifndef CC_UDIV_H
#define CC_UDIV_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The result depends on the arguments only (GCC's and clang's "const"), as
 * with libgcc's divider: a caller keeps what it loaded from memory across the
 * call. Without it, the sampling poll's code around the tare's one division
 * (cc_input.c) was laid out 14 instructions a sample slower. */
#if defined(__GNUC__)
#define CC_UDIV_CONST __attribute__((const))
#else
#define CC_UDIV_CONST
#endif

/* n / d rounded down, for every n and every d > 0 (the loop gives 0xFFFFFFFF
 * for d == 0; CC_UDIV32's operator, where it is used, is undefined there),
 * one bit a step: 32 steps whatever the values. */
CC_UDIV_CONST uint32_t cc_udiv32(uint32_t n, uint32_t d);

#if defined(__ARM_FEATURE_IDIV)
#define CC_UDIV32(n, d) ((uint32_t)(n) / (uint32_t)(d))
#else
#define CC_UDIV32(n, d) cc_udiv32((n), (d))
#endif

#ifdef __cplusplus
}
#endif

#endif /* CC_UDIV_H */
