/* Unit tests: CRC-16, COBS, envelope. */
#include <string.h>

#include "cc_cobs.h"
#include "cc_crc16.h"
#include "cc_envelope.h"
#include "cc_pbw.h"
#include "cc_test.h"
#include "cc_wire.h"

/* A deterministic pseudo-random sequence for the round trips. */
static uint32_t rng_state;
static uint32_t rng_next(void)
{
    rng_state = rng_state * 1664525u + 1013904223u;
    return rng_state >> 8;
}

static void test_crc_check_value(void)
{
    static const uint8_t check[] = "123456789";
    CHECK_EQ(cc_crc16(check, 9), 0x29B1u);
    CHECK_EQ(cc_crc16(check, 0), 0xFFFFu);
    /* incremental equals one-shot */
    CHECK_EQ(cc_crc16_update(cc_crc16(check, 4), check + 4, 5), 0x29B1u);
}

static void test_crc_detects_single_bit_flips(void)
{
    uint8_t data[32];
    size_t i;
    unsigned bit;
    uint16_t good;
    for (i = 0; i < sizeof data; i++) {
        data[i] = (uint8_t)(i * 37u + 1u);
    }
    good = cc_crc16(data, sizeof data);
    for (i = 0; i < sizeof data; i++) {
        for (bit = 0; bit < 8u; bit++) {
            data[i] ^= (uint8_t)(1u << bit);
            CHECK(cc_crc16(data, sizeof data) != good);
            data[i] ^= (uint8_t)(1u << bit);
        }
    }
}

/* Encodes, checks the expected bytes, decodes back. */
static void check_cobs_vector(const uint8_t *in, size_t len, const uint8_t *expected, size_t expected_len)
{
    uint8_t enc[600];
    uint8_t dec[600];
    size_t n;
    size_t out_len = 0;
    n = cc_cobs_encode(in, len, enc, sizeof enc);
    CHECK_EQ(n, expected_len);
    CHECK(n == expected_len && memcmp(enc, expected, n) == 0);
    CHECK_EQ(cc_cobs_decode(enc, n, dec, sizeof dec, &out_len), 0);
    CHECK_EQ(out_len, len);
    CHECK(out_len == len && memcmp(dec, in, len) == 0);
}

static void test_cobs_known_vectors(void)
{
    static const uint8_t a_in[] = {0x00};
    static const uint8_t a_out[] = {0x01, 0x01};
    static const uint8_t b_in[] = {0x00, 0x00};
    static const uint8_t b_out[] = {0x01, 0x01, 0x01};
    static const uint8_t c_in[] = {0x11, 0x22, 0x00, 0x33};
    static const uint8_t c_out[] = {0x03, 0x11, 0x22, 0x02, 0x33};
    static const uint8_t d_in[] = {0x11, 0x22, 0x33, 0x44};
    static const uint8_t d_out[] = {0x05, 0x11, 0x22, 0x33, 0x44};
    static const uint8_t e_in[] = {0x11, 0x00, 0x00, 0x00};
    static const uint8_t e_out[] = {0x02, 0x11, 0x01, 0x01, 0x01};
    static const uint8_t empty_out[] = {0x01};
    static const uint8_t empty_in[1] = {0};
    check_cobs_vector(a_in, sizeof a_in, a_out, sizeof a_out);
    check_cobs_vector(b_in, sizeof b_in, b_out, sizeof b_out);
    check_cobs_vector(c_in, sizeof c_in, c_out, sizeof c_out);
    check_cobs_vector(d_in, sizeof d_in, d_out, sizeof d_out);
    check_cobs_vector(e_in, sizeof e_in, e_out, sizeof e_out);
    check_cobs_vector(empty_in, 0, empty_out, sizeof empty_out);
}

static void test_cobs_long_runs(void)
{
    uint8_t in[600];
    uint8_t out[600];
    size_t i;

    /* 01..FE (254 bytes) -> FF 01..FE: no empty block after it */
    for (i = 0; i < 254u; i++) {
        in[i] = (uint8_t)(i + 1u);
    }
    out[0] = 0xFF;
    memcpy(out + 1, in, 254);
    check_cobs_vector(in, 254, out, 255);

    /* 00 01..FE (255 bytes) -> 01 FF 01..FE */
    in[0] = 0x00;
    for (i = 1; i < 255u; i++) {
        in[i] = (uint8_t)i;
    }
    out[0] = 0x01;
    out[1] = 0xFF;
    memcpy(out + 2, in + 1, 254);
    check_cobs_vector(in, 255, out, 256);

    /* 01..FF (255 bytes) -> FF 01..FE 02 FF */
    for (i = 0; i < 255u; i++) {
        in[i] = (uint8_t)(i + 1u);
    }
    out[0] = 0xFF;
    memcpy(out + 1, in, 254);
    out[255] = 0x02;
    out[256] = 0xFF;
    check_cobs_vector(in, 255, out, 257);

    /* 02..FF 00 (255 bytes) -> FF 02..FF 01 01 */
    for (i = 0; i < 254u; i++) {
        in[i] = (uint8_t)(i + 2u);
    }
    in[254] = 0x00;
    out[0] = 0xFF;
    memcpy(out + 1, in, 254);
    out[255] = 0x01;
    out[256] = 0x01;
    check_cobs_vector(in, 255, out, 257);

    /* 03..FF 00 01 (255 bytes) -> FE 03..FF 02 01 */
    for (i = 0; i < 253u; i++) {
        in[i] = (uint8_t)(i + 3u);
    }
    in[253] = 0x00;
    in[254] = 0x01;
    out[0] = 0xFE;
    memcpy(out + 1, in, 253);
    out[254] = 0x02;
    out[255] = 0x01;
    check_cobs_vector(in, 255, out, 256);
}

static void test_cobs_random_round_trips(void)
{
    uint8_t in[600];
    uint8_t enc[620];
    uint8_t dec[600];
    unsigned round;
    rng_state = 12345u;
    for (round = 0; round < 2000u; round++) {
        size_t len = rng_next() % 600u;
        unsigned zero_one_in = 1u + rng_next() % 300u;   /* density of zeros */
        size_t i;
        size_t n;
        size_t out_len = 0;
        for (i = 0; i < len; i++) {
            in[i] = (rng_next() % zero_one_in == 0u) ? 0u : (uint8_t)(1u + rng_next() % 255u);
        }
        n = cc_cobs_encode(in, len, enc, sizeof enc);
        CHECK(n >= 1u);
        CHECK(n <= CC_COBS_MAX_ENCODED(len));
        CHECK(memchr(enc, 0, n) == NULL);
        CHECK_EQ(cc_cobs_decode(enc, n, dec, sizeof dec, &out_len), 0);
        CHECK_EQ(out_len, len);
        CHECK(memcmp(in, dec, len) == 0);
    }
}

static void test_cobs_capacity_and_bad_input(void)
{
    uint8_t in[10] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
    uint8_t out[16];
    size_t out_len = 0;
    static const uint8_t overrun[] = {0x05, 0x11, 0x22};        /* block longer than the data */
    static const uint8_t zero_code[] = {0x02, 0x11, 0x00, 0x01};/* a zero inside */
    static const uint8_t ok[] = {0x03, 0x11, 0x22, 0x02, 0x33};
    size_t cap;
    for (cap = 0; cap < 11u; cap++) {
        CHECK_EQ(cc_cobs_encode(in, sizeof in, out, cap), 0);   /* needs 11 */
    }
    CHECK_EQ(cc_cobs_encode(in, sizeof in, out, 11), 11);
    CHECK(cc_cobs_decode(overrun, sizeof overrun, out, sizeof out, &out_len) != 0);
    CHECK(cc_cobs_decode(zero_code, sizeof zero_code, out, sizeof out, &out_len) != 0);
    CHECK(cc_cobs_decode(ok, sizeof ok, out, 3, &out_len) != 0);   /* decodes to 4 */
    CHECK_EQ(cc_cobs_decode(ok, sizeof ok, out, 4, &out_len), 0);
    CHECK_EQ(out_len, 4);
}

static void test_cobs_decode_in_place(void)
{
    uint8_t buf[8] = {0x03, 0x11, 0x22, 0x02, 0x33};
    size_t out_len = 0;
    static const uint8_t expected[] = {0x11, 0x22, 0x00, 0x33};
    CHECK_EQ(cc_cobs_decode(buf, 5, buf, sizeof buf, &out_len), 0);
    CHECK_EQ(out_len, 4);
    CHECK(memcmp(buf, expected, 4) == 0);
}

static void test_envelope_round_trips(void)
{
    static const uint32_t ids[] = {0u, 1u, 127u, 128u, 16383u, 16384u, 2097151u, 2097152u,
                                   268435455u, 268435456u, 0xFFFFFFFFu};
    static const uint8_t types[] = {CC_PKT_REQUEST, CC_PKT_RESPONSE, CC_PKT_STREAM_MESSAGE, CC_PKT_STREAM_END,
                                    CC_PKT_CANCEL, CC_PKT_ERROR, CC_PKT_ACK, CC_PKT_HEARTBEAT};
    size_t i;
    size_t t;
    for (t = 0; t < sizeof types; t++) {
        for (i = 0; i < sizeof ids / sizeof ids[0]; i++) {
            uint8_t buf[32];
            cc_envelope_t in;
            cc_envelope_t out;
            size_t n;
            memset(&in, 0, sizeof in);
            in.type = types[t];
            in.flags = CC_WIRE_FLAG_RELIABLE;
            in.sequence = (uint16_t)(0xBEEFu + i);
            in.call_id = ids[i];
            in.service = 3;
            in.method = 2;
            in.status = 12;
            n = cc_envelope_write(&in, buf, sizeof buf);
            CHECK_EQ(n, cc_envelope_size(&in));
            CHECK(n <= CC_WIRE_MAX_ENVELOPE_BYTES);
            buf[n] = 0xAB;   /* one payload byte (an ACK's is two) */
            buf[n + 1u] = 0xCD;
            if (in.call_id == 0u && in.type != CC_PKT_ACK && in.type != CC_PKT_HEARTBEAT) {
                /* call id 0 belongs to ACK and HEARTBEAT (v1.1) */
                CHECK_EQ(cc_envelope_parse(buf, n + 1u, &out), CC_ENVELOPE_BAD_CALL_ID);
                continue;
            }
            CHECK_EQ(cc_envelope_parse(buf, in.type == CC_PKT_ACK ? n + 2u : n + 1u, &out), CC_ENVELOPE_OK);
            CHECK_EQ(out.type, in.type);
            CHECK_EQ(out.flags, CC_WIRE_FLAG_RELIABLE);
            CHECK_EQ(out.sequence, in.sequence);
            CHECK_EQ(out.call_id, in.call_id);
            CHECK_EQ(out.payload_len, in.type == CC_PKT_ACK ? 2u : 1u);
            CHECK(out.payload_len >= 1 && out.payload[0] == 0xAB);
            if (in.type == CC_PKT_REQUEST) {
                CHECK_EQ(out.service, 3);
                CHECK_EQ(out.method, 2);
            }
            if (in.type == CC_PKT_ERROR || in.type == CC_PKT_STREAM_END) {
                CHECK_EQ(out.status, 12);
            }
        }
    }
}

static void test_envelope_heartbeat_example(void)
{
    /* PROTOCOL.md §4.1: a heartbeat with sequence 5 is 08 05 00 00 */
    static const uint8_t expected[] = {0x08, 0x05, 0x00, 0x00};
    uint8_t buf[8];
    cc_envelope_t env;
    memset(&env, 0, sizeof env);
    env.type = CC_PKT_HEARTBEAT;
    env.sequence = 5;
    CHECK_EQ(cc_envelope_write(&env, buf, sizeof buf), 4);
    CHECK(memcmp(buf, expected, 4) == 0);
}

static void test_envelope_rejects_short_and_bad(void)
{
    cc_envelope_t env;
    static const uint8_t three[] = {0x08, 0x00, 0x00};
    static const uint8_t truncated_varint[] = {0x03, 0x00, 0x00, 0x80};
    static const uint8_t six_byte_varint[] = {0x03, 0x00, 0x00, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01};
    static const uint8_t too_big_varint[] = {0x03, 0x00, 0x00, 0xFF, 0xFF, 0xFF, 0xFF, 0x10};
    static const uint8_t max_varint[] = {0x03, 0x00, 0x00, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F};
    static const uint8_t request_no_ids[] = {0x01, 0x00, 0x00, 0x05, 0x01};
    static const uint8_t error_no_status[] = {0x06, 0x00, 0x00, 0x05};
    static const uint8_t unknown_type[] = {0x09, 0x07, 0x00, 0x2A, 0x55};
    static const uint8_t reserved_flags[] = {0xE8, 0x01, 0x00, 0x00};

    CHECK_EQ(cc_envelope_parse(three, sizeof three, &env), CC_ENVELOPE_TOO_SHORT);
    CHECK_EQ(cc_envelope_parse(truncated_varint, sizeof truncated_varint, &env), CC_ENVELOPE_TOO_SHORT);
    CHECK_EQ(cc_envelope_parse(six_byte_varint, sizeof six_byte_varint, &env), CC_ENVELOPE_BAD_CALL_ID);
    CHECK_EQ(cc_envelope_parse(too_big_varint, sizeof too_big_varint, &env), CC_ENVELOPE_BAD_CALL_ID);
    CHECK_EQ(cc_envelope_parse(max_varint, sizeof max_varint, &env), CC_ENVELOPE_OK);
    CHECK_EQ(env.call_id, 0xFFFFFFFFu);
    CHECK_EQ(cc_envelope_parse(request_no_ids, sizeof request_no_ids, &env), CC_ENVELOPE_TOO_SHORT);
    CHECK_EQ(cc_envelope_parse(error_no_status, sizeof error_no_status, &env), CC_ENVELOPE_TOO_SHORT);
    CHECK_EQ(cc_envelope_parse(unknown_type, sizeof unknown_type, &env), CC_ENVELOPE_UNKNOWN_TYPE);
    CHECK_EQ(env.type, 9);
    CHECK_EQ(env.sequence, 7);
    CHECK_EQ(env.call_id, 42);
    CHECK_EQ(cc_envelope_parse(reserved_flags, sizeof reserved_flags, &env), CC_ENVELOPE_OK);
    CHECK_EQ(env.type, CC_PKT_HEARTBEAT);
    CHECK_EQ(env.flags & CC_WIRE_FLAG_RELIABLE, 0);
}

/* The protobuf writer at its edges: a string fits exactly or not at all (a
 * writer of capacity 0 included: nothing is silently left out), and a uint32
 * above 2^31 takes five varint bytes. */
static void test_pbw_strings_at_capacity_and_large_uint32(void)
{
    uint8_t buf[8];
    cc_pbw_t w;
    static const uint8_t large[] = {0x08, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F};

    cc_pbw_init(&w, buf, 0);
    cc_pbw_string(&w, 1, "a");
    CHECK(!cc_pbw_ok(&w));
    cc_pbw_init(&w, buf, 0);
    cc_pbw_string(&w, 1, "");   /* an empty string is not written at all */
    CHECK(cc_pbw_ok(&w));
    CHECK_EQ(cc_pbw_len(&w), 0);

    cc_pbw_init(&w, buf, 8);
    cc_pbw_string(&w, 1, "abcdef");   /* tag, length, six bytes: exactly 8 */
    CHECK(cc_pbw_ok(&w));
    CHECK_EQ(cc_pbw_len(&w), 8);
    CHECK(buf[0] == 0x0A && buf[1] == 6 && memcmp(buf + 2, "abcdef", 6) == 0);
    cc_pbw_init(&w, buf, 8);
    cc_pbw_string(&w, 1, "abcdefg");   /* one byte more */
    CHECK(!cc_pbw_ok(&w));
    cc_pbw_init(&w, buf, 8);
    cc_pbw_string(&w, 1, "abcdefghijklmnop");   /* far longer than the writer */
    CHECK(!cc_pbw_ok(&w));

    cc_pbw_init(&w, buf, 8);
    cc_pbw_varint32(&w, 1, 0xFFFFFFFFu);
    CHECK(cc_pbw_ok(&w));
    CHECK_EQ(cc_pbw_len(&w), sizeof large);
    CHECK(memcmp(buf, large, sizeof large) == 0);
}

const cc_test_case_t cc_tests_wire[] = {
    {"crc_check_value", test_crc_check_value},
    {"crc_detects_single_bit_flips", test_crc_detects_single_bit_flips},
    {"cobs_known_vectors", test_cobs_known_vectors},
    {"cobs_long_runs", test_cobs_long_runs},
    {"cobs_random_round_trips", test_cobs_random_round_trips},
    {"cobs_capacity_and_bad_input", test_cobs_capacity_and_bad_input},
    {"cobs_decode_in_place", test_cobs_decode_in_place},
    {"envelope_round_trips", test_envelope_round_trips},
    {"envelope_heartbeat_example", test_envelope_heartbeat_example},
    {"envelope_rejects_short_and_bad", test_envelope_rejects_short_and_bad},
    {"pbw_strings_at_capacity_and_large_uint32", test_pbw_strings_at_capacity_and_large_uint32},
};
const size_t cc_tests_wire_count = CC_TEST_COUNT(cc_tests_wire);
