/*
 * Every board port without an FPU in use: the two soft-float equality helpers protobuf-c calls.
 *
 * protobuf-c's proto3 "is this field zero" test (field_is_zeroish) compares
 * float and double fields with 0 even though this schema has none; on the
 * Cortex-M0 (no FPU; the STM32F4 port builds soft-float too) each compare is a call to the run-time ABI's
 * __aeabi_fcmpeq / __aeabi_dcmpeq, and libgcc's versions bring its whole
 * soft-float compare family (about 1.2 KB of flash). These are the same
 * functions (RTABI: 1 when a == b in IEEE 754, else 0) in integer code:
 * equal when the bits are equal or both are zeros of either sign, never
 * when either is a NaN. Defined here, libgcc's members are not linked.
 */
#include <stdint.h>

int __aeabi_fcmpeq(float a, float b);
int __aeabi_dcmpeq(double a, double b);

typedef union {
    float value;
    uint32_t bits;
} float_bits_t;

typedef union {
    double value;
    uint64_t bits;
} double_bits_t;

int __aeabi_fcmpeq(float a, float b)
{
    float_bits_t x, y;
    x.value = a;
    y.value = b;
    if ((x.bits & 0x7FFFFFFFu) > 0x7F800000u || (y.bits & 0x7FFFFFFFu) > 0x7F800000u) {
        return 0;   /* NaN */
    }
    return x.bits == y.bits || ((x.bits | y.bits) & 0x7FFFFFFFu) == 0u;
}

int __aeabi_dcmpeq(double a, double b)
{
    const uint64_t magnitude = 0x7FFFFFFFFFFFFFFFu;
    const uint64_t infinity = 0x7FF0000000000000u;
    double_bits_t x, y;
    x.value = a;
    y.value = b;
    if ((x.bits & magnitude) > infinity || (y.bits & magnitude) > infinity) {
        return 0;   /* NaN */
    }
    return x.bits == y.bits || ((x.bits | y.bits) & magnitude) == 0u;
}
