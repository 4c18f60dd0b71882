/* The core's own unsigned division (cc_udiv.c) and its users that only count
 * (the wire size of a frame, a number in a status text), against the C
 * operator on the host. */
#include <stdint.h>
#include <string.h>

#include "cc_frame.h"
#include "cc_test.h"
#include "cc_udiv.h"
#include "../core/cc_text.h"

/* xorshift32: the same pairs on every run */
static uint32_t next_random(uint32_t *state)
{
    uint32_t x = *state;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    *state = x;
    return x;
}

static void test_udiv_small_values(void)
{
    uint32_t n;
    uint32_t d;
    for (n = 0; n < 300u; n++) {
        for (d = 1; d < 300u; d++) {
            CHECK_EQ(cc_udiv32(n, d), n / d);
        }
    }
}

static void test_udiv_far_ends(void)
{
    static const uint32_t values[] = {
        0u, 1u, 2u, 3u, 7u, 10u, 254u, 1000u, 65535u, 65536u, 1000000u,
        0x7FFFFFFFu, 0x80000000u, 0x80000001u, 0xFFFFFFFEu, 0xFFFFFFFFu,
    };
    size_t i;
    size_t j;
    for (i = 0; i < sizeof values / sizeof values[0]; i++) {
        for (j = 0; j < sizeof values / sizeof values[0]; j++) {
            if (values[j] != 0u) {
                CHECK_EQ(cc_udiv32(values[i], values[j]), values[i] / values[j]);
            }
        }
    }
    CHECK_EQ(cc_udiv32(1000000u, 250u), 4000u);
    CHECK_EQ(cc_udiv32(0xFFFFFFFFu, 0x80000000u), 1u);   /* a divisor above 2^31: the remainder's carry */
    CHECK_EQ(cc_udiv32(0xFFFFFFFFu, 0xFFFFFFFFu), 1u);
    CHECK_EQ(cc_udiv32(0xFFFFFFFEu, 0xFFFFFFFFu), 0u);
}

static void test_udiv_random_pairs(void)
{
    uint32_t state = 0x12345678u;
    int i;
    for (i = 0; i < 200000; i++) {
        uint32_t n = next_random(&state);
        uint32_t d = next_random(&state) >> (next_random(&state) & 31u);   /* divisors of every width */
        if (d == 0u) {
            d = 1u;
        }
        CHECK_EQ(cc_udiv32(n, d), n / d);
    }
}

static void test_frame_wire_bytes_matches_macro(void)
{
    size_t n;
    for (n = 0; n <= 70000u; n++) {
        CHECK_EQ(cc_frame_wire_bytes(n), CC_FRAME_WIRE_BYTES(n));
    }
}

static void test_text_append_u32(void)
{
    char buf[16];
    size_t pos;
    pos = cc_text_append_u32(buf, 0, sizeof buf, 0u);
    CHECK_EQ(pos, 1u);
    CHECK(strcmp(buf, "0") == 0);
    pos = cc_text_append_u32(buf, 0, sizeof buf, 1090u);
    CHECK_EQ(pos, 4u);
    CHECK(strcmp(buf, "1090") == 0);
    pos = cc_text_append_u32(buf, 0, sizeof buf, 4294967295u);
    CHECK_EQ(pos, 10u);
    CHECK(strcmp(buf, "4294967295") == 0);
    pos = cc_text_append(buf, 0, sizeof buf, "v");
    pos = cc_text_append_u32(buf, pos, sizeof buf, 1234567890u);
    CHECK(strcmp(buf, "v1234567890") == 0);
    pos = cc_text_append_u32(buf, 0, 4u, 98765u);   /* cut at the capacity: the leading digits */
    CHECK_EQ(pos, 3u);
    CHECK(strcmp(buf, "987") == 0);
}

const cc_test_case_t cc_tests_udiv[] = {
    {"udiv_small_values", test_udiv_small_values},
    {"udiv_far_ends", test_udiv_far_ends},
    {"udiv_random_pairs", test_udiv_random_pairs},
    {"frame_wire_bytes_matches_macro", test_frame_wire_bytes_matches_macro},
    {"text_append_u32", test_text_append_u32},
};
const size_t cc_tests_udiv_count = CC_TEST_COUNT(cc_tests_udiv);
