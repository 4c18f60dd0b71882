/* memcpy and memset for every firmware image: byte loops instead of newlib's
 * (on the micro:bit 312 bytes of flash: unrolled word copies and fills). The
 * core copies and clears only small structs and frames of at most a few
 * hundred bytes, off the sampling poll (docs/FIRMWARE.md). Compiled with
 * -fno-tree-loop-distribute-patterns (firmware.mk): GCC would otherwise make
 * each loop a call of the function it is in. The host's unit tests compile
 * this file under other names (tests/test_port_mem.c), so it includes no
 * header that declares memcpy or memset. */
#include <stddef.h>

void *memcpy(void *restrict dst, const void *restrict src, size_t n)
{
    unsigned char *d = dst;
    const unsigned char *s = src;
    while (n > 0u) {
        n--;
        d[n] = s[n];
    }
    return dst;
}

void *memset(void *dst, int value, size_t n)
{
    unsigned char *d = dst;
    while (n > 0u) {
        n--;
        d[n] = (unsigned char)value;
    }
    return dst;
}
