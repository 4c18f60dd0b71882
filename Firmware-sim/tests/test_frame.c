/* Unit tests: the streaming frame decoder and the frame encoder. */
#include <string.h>

#include "cc_crc16.h"
#include "cc_frame.h"
#include "cc_test.h"
#include "cc_wire.h"

static cc_frame_decoder_t dec;

/* Encodes body[0..len) as a wire frame; returns its length. */
static size_t make_frame(const uint8_t *body, size_t len, uint8_t *wire, size_t cap)
{
    uint8_t tmp[CC_MAX_FRAME_BYTES + 8u];
    memcpy(tmp, body, len);
    return cc_frame_encode(tmp, len, wire, cap);
}

/* Feeds bytes; returns how many frames decoded OK; the last body is copied out. */
static unsigned feed(const uint8_t *bytes, size_t len, uint8_t *last_body, size_t *last_len, unsigned *errors)
{
    unsigned ok = 0;
    size_t i;
    for (i = 0; i < len; i++) {
        cc_frame_result_t r = cc_frame_decoder_feed(&dec, bytes[i]);
        if (r == CC_FRAME_OK) {
            size_t n;
            const uint8_t *b = cc_frame_decoder_body(&dec, &n);
            ok++;
            if (last_body != NULL) {
                memcpy(last_body, b, n);
                *last_len = n;
            }
        } else if (r != CC_FRAME_NEED_MORE && r != CC_FRAME_EMPTY && errors != NULL) {
            (*errors)++;
        }
    }
    return ok;
}

static const uint8_t k_body[] = {0x08, 0x05, 0x00, 0x00};

static void test_frame_encode_layout(void)
{
    uint8_t wire[32];
    uint8_t unstuffed[8];
    uint16_t crc = cc_crc16(k_body, sizeof k_body);
    size_t n = make_frame(k_body, sizeof k_body, wire, sizeof wire);
    /* body 08 05 00 00 + CRC LE, COBS, delimiter */
    memcpy(unstuffed, k_body, 4);
    unstuffed[4] = (uint8_t)(crc & 0xFFu);
    unstuffed[5] = (uint8_t)(crc >> 8);
    CHECK(n >= 8u);
    CHECK_EQ(wire[n - 1u], 0x00);
    CHECK(memchr(wire, 0, n - 1u) == NULL);
    CHECK_EQ(wire[0], 0x03);   /* 08 05, then the zero */
    CHECK_EQ(wire[1], 0x08);
    CHECK_EQ(wire[2], 0x05);
    CHECK_EQ(make_frame(k_body, sizeof k_body, wire, 4), 0);   /* too small: refused */
}

static void test_frame_round_trip(void)
{
    uint8_t wire[64];
    uint8_t body[CC_MAX_FRAME_BYTES];
    size_t body_len = 0;
    size_t n = make_frame(k_body, sizeof k_body, wire, sizeof wire);
    cc_frame_decoder_init(&dec);
    CHECK_EQ(feed(wire, n, body, &body_len, NULL), 1);
    CHECK_EQ(body_len, sizeof k_body);
    CHECK(memcmp(body, k_body, sizeof k_body) == 0);
}

static void test_frame_empty_frames_ignored(void)
{
    static const uint8_t zeros[] = {0, 0, 0};
    unsigned errors = 0;
    cc_frame_decoder_init(&dec);
    CHECK_EQ(cc_frame_decoder_feed(&dec, 0), CC_FRAME_EMPTY);
    CHECK_EQ(feed(zeros, sizeof zeros, NULL, NULL, &errors), 0);
    CHECK_EQ(errors, 0);
}

static void test_frame_resync_after_garbage(void)
{
    uint8_t stream[256];
    size_t pos = 0;
    unsigned errors = 0;
    uint8_t body[CC_MAX_FRAME_BYTES];
    size_t body_len = 0;
    size_t i;
    for (i = 0; i < 40u; i++) {
        stream[pos++] = (uint8_t)(0x5Au + i * 7u) | 1u;   /* non-zero garbage */
    }
    stream[pos++] = 0x00;
    pos += make_frame(k_body, sizeof k_body, stream + pos, sizeof stream - pos);
    cc_frame_decoder_init(&dec);
    CHECK_EQ(feed(stream, pos, body, &body_len, &errors), 1);
    CHECK_EQ(errors, 1);
    CHECK(body_len == sizeof k_body && memcmp(body, k_body, sizeof k_body) == 0);
}

static void test_frame_truncated(void)
{
    uint8_t wire[64];
    uint8_t stream[128];
    size_t n = make_frame(k_body, sizeof k_body, wire, sizeof wire);
    size_t cut;
    /* every truncation of the frame (delimiter right after) is an error, and the next frame decodes */
    for (cut = 1; cut < n - 1u; cut++) {
        unsigned errors = 0;
        size_t pos = 0;
        memcpy(stream, wire, cut);
        pos = cut;
        stream[pos++] = 0x00;
        memcpy(stream + pos, wire, n);
        pos += n;
        cc_frame_decoder_init(&dec);
        CHECK_EQ(feed(stream, pos, NULL, NULL, &errors), 1);
        CHECK_EQ(errors, 1);
    }
}

static void test_frame_bad_check(void)
{
    uint8_t body[8];
    uint8_t wire[32];
    size_t n;
    memcpy(body, k_body, 4);
    n = make_frame(body, 4, wire, sizeof wire);
    wire[2] ^= 0x04u;   /* flip one bit of the body */
    cc_frame_decoder_init(&dec);
    {
        size_t i;
        cc_frame_result_t last = CC_FRAME_NEED_MORE;
        for (i = 0; i < n; i++) {
            last = cc_frame_decoder_feed(&dec, wire[i]);
        }
        CHECK_EQ(last, CC_FRAME_ERR_CHECK);
    }
    /* a frame of one byte cannot even hold the check: short, not a check error (v1.1) */
    {
        static const uint8_t one[] = {0x02, 0x41, 0x00};
        CHECK_EQ(cc_frame_decoder_feed(&dec, one[0]), CC_FRAME_NEED_MORE);
        CHECK_EQ(cc_frame_decoder_feed(&dec, one[1]), CC_FRAME_NEED_MORE);
        CHECK_EQ(cc_frame_decoder_feed(&dec, one[2]), CC_FRAME_ERR_SHORT);
    }
}

static void test_frame_oversized_is_bounded(void)
{
    uint8_t wire[64];
    size_t n = make_frame(k_body, sizeof k_body, wire, sizeof wire);
    unsigned oversized = 0;
    unsigned ok = 0;
    size_t i;
    cc_frame_decoder_init(&dec);
    for (i = 0; i < 10000u; i++) {   /* far beyond the buffer */
        cc_frame_result_t r = cc_frame_decoder_feed(&dec, 0x41);
        if (r == CC_FRAME_ERR_OVERSIZED) {
            oversized++;
        }
        CHECK(dec.len <= sizeof dec.buf);
    }
    CHECK_EQ(oversized, 1);
    /* the rest of the oversized frame (ending in 0x00) is discarded silently, then we resync */
    CHECK_EQ(cc_frame_decoder_feed(&dec, 0x00), CC_FRAME_NEED_MORE);
    ok = feed(wire, n, NULL, NULL, NULL);
    CHECK_EQ(ok, 1);
}

static void test_frame_size_limit(void)
{
    uint8_t body[CC_MAX_FRAME_BYTES + 8u];
    uint8_t wire[CC_FRAME_WIRE_BYTES(CC_MAX_FRAME_BYTES + 8u)];
    size_t n;
    size_t i;
    unsigned errors = 0;
    for (i = 0; i < sizeof body; i++) {
        body[i] = (uint8_t)(i % 7u);   /* zeros inside */
    }
    /* exactly CC_MAX_FRAME_BYTES unstuffed (body + check) is accepted */
    n = cc_frame_encode(body, CC_MAX_FRAME_BYTES - CC_WIRE_CHECK_BYTES, wire, sizeof wire);
    cc_frame_decoder_init(&dec);
    CHECK_EQ(feed(wire, n, NULL, NULL, &errors), 1);
    CHECK_EQ(errors, 0);
    /* and with no zeros at all (the longest stuffing) */
    for (i = 0; i < sizeof body; i++) {
        body[i] = (uint8_t)(0x80u + (i % 100u));
    }
    n = cc_frame_encode(body, CC_MAX_FRAME_BYTES - CC_WIRE_CHECK_BYTES, wire, sizeof wire);
    CHECK(n >= CC_FRAME_STUFFED_CAP);   /* the buffer is exactly full */
    CHECK_EQ(feed(wire, n, NULL, NULL, &errors), 1);
    CHECK_EQ(errors, 0);
    /* one more byte is oversized, whether or not the stuffed bytes fit the buffer */
    for (i = 0; i < sizeof body; i++) {
        body[i] = 0;   /* all zeros: stuffed length == unstuffed length + 1 */
    }
    n = cc_frame_encode(body, CC_MAX_FRAME_BYTES - CC_WIRE_CHECK_BYTES + 1u, wire, sizeof wire);
    {
        cc_frame_result_t last = CC_FRAME_NEED_MORE;
        unsigned oversized = 0;
        for (i = 0; i < n; i++) {
            last = cc_frame_decoder_feed(&dec, wire[i]);
            if (last == CC_FRAME_ERR_OVERSIZED) {
                oversized++;
            }
        }
        CHECK_EQ(oversized, 1);
    }
    for (i = 0; i < sizeof body; i++) {
        body[i] = 0x33;   /* no zeros: stuffed is the longest */
    }
    n = cc_frame_encode(body, CC_MAX_FRAME_BYTES - CC_WIRE_CHECK_BYTES + 1u, wire, sizeof wire);
    {
        unsigned oversized = 0;
        for (i = 0; i < n; i++) {
            if (cc_frame_decoder_feed(&dec, wire[i]) == CC_FRAME_ERR_OVERSIZED) {
                oversized++;
            }
        }
        CHECK_EQ(oversized, 1);
    }
    /* and the decoder is fine afterwards */
    n = make_frame(k_body, sizeof k_body, wire, sizeof wire);
    CHECK_EQ(feed(wire, n, NULL, NULL, NULL), 1);
}

static void test_frame_split_at_every_boundary(void)
{
    uint8_t body[CC_MAX_FRAME_BYTES - CC_WIRE_CHECK_BYTES];   /* the largest frame */
    uint8_t wire[CC_FRAME_WIRE_BYTES(CC_MAX_FRAME_BYTES)];
    uint8_t got[CC_MAX_FRAME_BYTES];
    size_t got_len = 0;
    size_t n;
    size_t split;
    size_t i;
    for (i = 0; i < sizeof body; i++) {
        body[i] = (uint8_t)((i * 13u) % 5u == 0u ? 0u : i);
    }
    n = cc_frame_encode(body, sizeof body, wire, sizeof wire);
    for (split = 0; split <= n; split++) {
        unsigned ok;
        cc_frame_decoder_init(&dec);
        ok = feed(wire, split, got, &got_len, NULL);
        ok += feed(wire + split, n - split, got, &got_len, NULL);
        CHECK_EQ(ok, 1);
        CHECK(got_len == sizeof body && memcmp(got, body, sizeof body) == 0);
    }
}

const cc_test_case_t cc_tests_frame[] = {
    {"frame_encode_layout", test_frame_encode_layout},
    {"frame_round_trip", test_frame_round_trip},
    {"frame_empty_frames_ignored", test_frame_empty_frames_ignored},
    {"frame_resync_after_garbage", test_frame_resync_after_garbage},
    {"frame_truncated", test_frame_truncated},
    {"frame_bad_check", test_frame_bad_check},
    {"frame_oversized_is_bounded", test_frame_oversized_is_bounded},
    {"frame_size_limit", test_frame_size_limit},
    {"frame_split_at_every_boundary", test_frame_split_at_every_boundary},
};
const size_t cc_tests_frame_count = CC_TEST_COUNT(cc_tests_frame);
