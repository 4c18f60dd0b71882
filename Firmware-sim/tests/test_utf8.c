/* The codec's UTF-8 check (cc_pbr_check_utf8) against the well-formed byte
 * sequences of the Unicode Standard's table 3-7, written out range by range:
 * every sequence of one and two bytes, every lead and second byte with the
 * telling third and fourth bytes, and random strings. */
#include <stdint.h>

#include "cc_pbr.h"
#include "cc_test.h"

/* Table 3-7, as a scan of the whole string. */
static int table_3_7(const uint8_t *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        uint8_t b = s[i];
        size_t need;
        size_t k;
        uint8_t lo = 0x80u;
        uint8_t hi = 0xBFu;
        if (b <= 0x7Fu) {
            i++;
            continue;
        } else if (b >= 0xC2u && b <= 0xDFu) {
            need = 1u;
        } else if (b == 0xE0u) {
            need = 2u;
            lo = 0xA0u;
        } else if (b >= 0xE1u && b <= 0xECu) {
            need = 2u;
        } else if (b == 0xEDu) {
            need = 2u;
            hi = 0x9Fu;
        } else if (b >= 0xEEu && b <= 0xEFu) {
            need = 2u;
        } else if (b == 0xF0u) {
            need = 3u;
            lo = 0x90u;
        } else if (b >= 0xF1u && b <= 0xF3u) {
            need = 3u;
        } else if (b == 0xF4u) {
            need = 3u;
            hi = 0x8Fu;
        } else {
            return 0;
        }
        if (n - i - 1u < need || s[i + 1u] < lo || s[i + 1u] > hi) {
            return 0;
        }
        for (k = 2u; k <= need; k++) {
            if (s[i + k] < 0x80u || s[i + k] > 0xBFu) {
                return 0;
            }
        }
        i += need + 1u;
    }
    return 1;
}

static int checked_ok(const uint8_t *s, size_t n)
{
    cc_pbr_t r;
    cc_pb_bytes_t v;
    cc_pbr_init(&r, s, n);
    v.data = s;
    v.len = n;
    cc_pbr_check_utf8(&r, v);
    return r.status == CC_PBR_OK;
}

/* Fails the test at the first string the two disagree on. */
static int agree(const uint8_t *s, size_t n)
{
    int want = table_3_7(s, n);
    if (checked_ok(s, n) != want) {
        CHECK_EQ(checked_ok(s, n), want);
        CHECK_EQ(n > 0u ? s[0] : 0u, 0u);   /* the bytes, in the failure's line */
        CHECK_EQ(n > 1u ? s[1] : 0u, 0u);
        CHECK_EQ(n > 2u ? s[2] : 0u, 0u);
        CHECK_EQ(n > 3u ? s[3] : 0u, 0u);
        return 0;
    }
    return 1;
}

static void test_utf8_short_sequences(void)
{
    static const uint8_t tails[] = {0x00u, 0x41u, 0x7Fu, 0x80u, 0x8Fu, 0x90u, 0x9Fu, 0xA0u, 0xBFu, 0xC0u, 0xC2u, 0xE0u, 0xF0u, 0xFFu};
    uint8_t s[5] = {0u, 0u, 0u, 0u, 0u};
    unsigned a;
    unsigned b;
    size_t c;
    size_t d;
    CHECK(agree(s, 0u));
    for (a = 0; a < 256u; a++) {
        s[0] = (uint8_t)a;
        if (!agree(s, 1u)) {
            return;
        }
        for (b = 0; b < 256u; b++) {
            s[1] = (uint8_t)b;
            if (!agree(s, 2u)) {
                return;
            }
            for (c = 0; c < sizeof tails; c++) {
                s[2] = tails[c];
                if (!agree(s, 3u)) {
                    return;
                }
                for (d = 0; d < sizeof tails; d++) {
                    s[3] = tails[d];
                    if (!agree(s, 4u)) {
                        return;
                    }
                    s[4] = 0x41u;   /* one more character after it */
                    if (!agree(s, 5u)) {
                        return;
                    }
                }
            }
        }
    }
}

static void test_utf8_known_strings(void)
{
    static const uint8_t ascii[] = "CameraControl";
    static const uint8_t mixed[] = {0x63u, 0xC3u, 0xA9u, 0xE2u, 0x82u, 0xACu, 0xF0u, 0x9Fu, 0x98u, 0x80u, 0x21u};
    static const uint8_t surrogate[] = {0xEDu, 0xA0u, 0x80u};
    static const uint8_t overlong_slash[] = {0xC0u, 0xAFu};
    static const uint8_t overlong_3[] = {0xE0u, 0x80u, 0xAFu};
    static const uint8_t beyond[] = {0xF4u, 0x90u, 0x80u, 0x80u};
    static const uint8_t last[] = {0xF4u, 0x8Fu, 0xBFu, 0xBFu};
    static const uint8_t cut[] = {0x41u, 0xE2u, 0x82u};
    CHECK(checked_ok(ascii, sizeof ascii - 1u));
    CHECK(checked_ok(mixed, sizeof mixed));
    CHECK(!checked_ok(surrogate, sizeof surrogate));
    CHECK(!checked_ok(overlong_slash, sizeof overlong_slash));
    CHECK(!checked_ok(overlong_3, sizeof overlong_3));
    CHECK(!checked_ok(beyond, sizeof beyond));
    CHECK(checked_ok(last, sizeof last));
    CHECK(!checked_ok(cut, sizeof cut));
}

static void test_utf8_random_strings(void)
{
    uint32_t x = 0x2545F491u;
    uint8_t s[12];
    int i;
    for (i = 0; i < 200000; i++) {
        size_t n;
        size_t k;
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        n = x % (sizeof s + 1u);
        for (k = 0; k < n; k++) {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            /* mostly the bytes that matter: leads, continuations, ASCII */
            s[k] = (uint8_t)((x & 0x100u) != 0u ? 0x80u | (x & 0x7Fu) : x & 0xFFu);
        }
        if (!agree(s, n)) {
            return;
        }
    }
}

const cc_test_case_t cc_tests_utf8[] = {
    {"utf8_short_sequences", test_utf8_short_sequences},
    {"utf8_known_strings", test_utf8_known_strings},
    {"utf8_random_strings", test_utf8_random_strings},
};
const size_t cc_tests_utf8_count = CC_TEST_COUNT(cc_tests_utf8);
