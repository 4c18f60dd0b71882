/* The firmware images' memcpy and memset (port/common/port_mem.c: byte loops
 * instead of newlib's), compiled here under other names and checked against
 * the host's. */
#include <stddef.h>

#include "cc_test.h"

/* As the images build them (-fno-tree-loop-distribute-patterns, port/firmware.mk): otherwise GCC at
 * -O2 turns the byte loops into calls of the host's memcpy and memset, and this would test glibc. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-tree-loop-distribute-patterns")
#endif
#define memcpy port_mem_memcpy
#define memset port_mem_memset
#include "../port/common/port_mem.c"
#undef memcpy
#undef memset

#define BYTES 80u

static void fill_pattern(unsigned char *p, size_t n, unsigned seed)
{
    size_t i;
    for (i = 0; i < n; i++) {
        p[i] = (unsigned char)(seed + 7u * i);
    }
}

/* every length, at every offset of source and destination within a word:
 * the copied bytes are the source's, the bytes around them untouched */
static void test_memcpy_every_length_and_offset(void)
{
    unsigned char src[BYTES];
    unsigned char dst[BYTES];
    size_t so;
    size_t d_o;
    size_t n;
    size_t i;
    fill_pattern(src, BYTES, 1u);
    for (so = 0; so < 4u; so++) {
        for (d_o = 0; d_o < 4u; d_o++) {
            for (n = 0; n + 8u <= BYTES - 4u; n++) {
                void *ret;
                fill_pattern(dst, BYTES, 200u);
                ret = port_mem_memcpy(dst + d_o + 4u, src + so, n);
                CHECK(ret == dst + d_o + 4u);
                for (i = 0; i < BYTES; i++) {
                    unsigned char want = (unsigned char)(200u + 7u * i);
                    if (i >= d_o + 4u && i < d_o + 4u + n) {
                        want = src[so + i - d_o - 4u];
                    }
                    if (dst[i] != want) {
                        CHECK_EQ(dst[i], want);
                        return;
                    }
                }
            }
        }
    }
}

static void test_memset_every_length_and_offset(void)
{
    unsigned char dst[BYTES];
    size_t d_o;
    size_t n;
    size_t i;
    for (d_o = 0; d_o < 4u; d_o++) {
        for (n = 0; n + 8u <= BYTES; n++) {
            void *ret;
            fill_pattern(dst, BYTES, 3u);
            ret = port_mem_memset(dst + d_o + 2u, 0x1A5, n);   /* the value as unsigned char: 0xA5 */
            CHECK(ret == dst + d_o + 2u);
            for (i = 0; i < BYTES; i++) {
                unsigned char want = (unsigned char)(3u + 7u * i);
                if (i >= d_o + 2u && i < d_o + 2u + n) {
                    want = 0xA5u;
                }
                if (dst[i] != want) {
                    CHECK_EQ(dst[i], want);
                    return;
                }
            }
        }
    }
}

const cc_test_case_t cc_tests_port_mem[] = {
    {"memcpy_every_length_and_offset", test_memcpy_every_length_and_offset},
    {"memset_every_length_and_offset", test_memset_every_length_and_offset},
};
const size_t cc_tests_port_mem_count = CC_TEST_COUNT(cc_tests_port_mem);
