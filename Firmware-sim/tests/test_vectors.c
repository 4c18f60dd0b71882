/*
 * The golden frames of Tests/Vectors/frames.json (generated with Google
 * protobuf, binascii.crc_hqx and a reference COBS): the core's encoder must
 * produce every wireHex from its unstuffedHex byte for byte, its decoder must
 * get the unstuffed frame back, and its envelope parser must agree on type,
 * sequence and call id. The JSON is scanned for its few fields by hand.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cc_cobs.h"
#include "cc_crc16.h"
#include "cc_envelope.h"
#include "cc_frame.h"
#include "cc_test.h"

#define VECTORS_PATH "../Tests/Vectors/frames.json"
#define MAX_JSON 262144
#define MAX_FRAME 4200

static char json[MAX_JSON];

/* Reads the string value of "key" at or after *pos, within the current frame object. */
static int read_string(const char *from, const char *end, const char *key, char *out, size_t cap)
{
    char pattern[64];
    const char *p;
    const char *q;
    size_t n;
    snprintf(pattern, sizeof pattern, "\"%s\": \"", key);
    p = strstr(from, pattern);
    if (p == NULL || (end != NULL && p > end)) {
        return -1;
    }
    p += strlen(pattern);
    q = strchr(p, '"');
    if (q == NULL) {
        return -1;
    }
    n = (size_t)(q - p);
    if (n + 1u > cap) {
        return -1;
    }
    memcpy(out, p, n);
    out[n] = '\0';
    return 0;
}

static long read_number(const char *from, const char *end, const char *key)
{
    char pattern[64];
    const char *p;
    snprintf(pattern, sizeof pattern, "\"%s\": ", key);
    p = strstr(from, pattern);
    if (p == NULL || (end != NULL && p > end)) {
        return -1;
    }
    return strtol(p + strlen(pattern), NULL, 10);
}

static size_t unhex(const char *hex, uint8_t *out, size_t cap)
{
    size_t n = 0;
    while (hex[0] != '\0' && hex[1] != '\0' && n < cap) {
        unsigned v;
        if (sscanf(hex, "%2x", &v) != 1) {
            break;
        }
        out[n++] = (uint8_t)v;
        hex += 2;
    }
    return n;
}

static void test_golden_frames(void)
{
    FILE *f = fopen(VECTORS_PATH, "rb");
    size_t len;
    const char *cursor;
    unsigned frames = 0;
    REQUIRE(f != NULL);   /* run from Firmware-sim/ (make test does) */
    len = fread(json, 1, sizeof json - 1u, f);
    fclose(f);
    json[len] = '\0';
    cursor = strstr(json, "\"frames\"");
    REQUIRE(cursor != NULL);
    for (;;) {
        static char name[128];
        static char unstuffed_hex[2 * MAX_FRAME + 1];
        static char wire_hex[2 * MAX_FRAME + 16];
        static uint8_t unstuffed[MAX_FRAME];
        static uint8_t wire[MAX_FRAME + 16];
        static uint8_t encoded[MAX_FRAME + 16];
        const char *start = strstr(cursor, "\"name\": \"");
        const char *next;
        size_t un;
        size_t wn;
        size_t en;
        uint16_t crc;
        if (start == NULL) {
            break;
        }
        next = strstr(start + 1, "\"name\": \"");
        if (read_string(start, next, "name", name, sizeof name) != 0
            || read_string(start, next, "unstuffedHex", unstuffed_hex, sizeof unstuffed_hex) != 0
            || read_string(start, next, "wireHex", wire_hex, sizeof wire_hex) != 0) {
            CHECK(!"unreadable vector");
            break;
        }
        un = unhex(unstuffed_hex, unstuffed, sizeof unstuffed);
        wn = unhex(wire_hex, wire, sizeof wire);
        CHECK(un >= 6u);
        /* check: CRC-16 LE over envelope + payload */
        crc = cc_crc16(unstuffed, un - 2u);
        if (unstuffed[un - 2u] != (uint8_t)(crc & 0xFFu) || unstuffed[un - 1u] != (uint8_t)(crc >> 8)) {
            fprintf(stderr, "  vector %s: check differs\n", name);
            CHECK(!"golden CRC");
        }
        /* encoder: byte for byte */
        en = cc_cobs_encode(unstuffed, un, encoded, sizeof encoded - 1u);
        encoded[en++] = 0x00;
        if (en != wn || memcmp(encoded, wire, wn) != 0) {
            fprintf(stderr, "  vector %s: wire bytes differ\n", name);
            CHECK(!"golden wire bytes");
        }
        /* decoder and envelope, for frames within the core's maximum */
        if (un <= CC_MAX_FRAME_BYTES) {
            cc_frame_decoder_t dec;
            cc_envelope_t env;
            size_t i;
            unsigned ok = 0;
            cc_frame_decoder_init(&dec);
            for (i = 0; i < wn; i++) {
                if (cc_frame_decoder_feed(&dec, wire[i]) == CC_FRAME_OK) {
                    size_t body_len;
                    const uint8_t *body = cc_frame_decoder_body(&dec, &body_len);
                    ok++;
                    CHECK_EQ(body_len, un - 2u);
                    CHECK(memcmp(body, unstuffed, un - 2u) == 0);
                    if (strtoul(strstr(start, "\"callId\": ") + 10, NULL, 10) == 0u
                        && read_number(start, next, "typeValue") != CC_PKT_ACK
                        && read_number(start, next, "typeValue") != CC_PKT_HEARTBEAT) {
                        /* v1.1: call id 0 only on ACK and HEARTBEAT (an ERROR on call 0 is refused) */
                        CHECK_EQ(cc_envelope_parse(body, body_len, &env), CC_ENVELOPE_BAD_CALL_ID);
                        continue;
                    }
                    CHECK_EQ(cc_envelope_parse(body, body_len, &env), CC_ENVELOPE_OK);
                    CHECK_EQ(env.type, (unsigned long long)read_number(start, next, "typeValue"));
                    CHECK_EQ(env.sequence, (unsigned long long)read_number(start, next, "sequence"));
                    CHECK_EQ(env.call_id, (unsigned long long)strtoul(strstr(start, "\"callId\": ") + 10, NULL, 10));
                }
            }
            if (ok != 1u) {
                fprintf(stderr, "  vector %s: decoded %u frames\n", name, ok);
            }
            CHECK_EQ(ok, 1);
        }
        frames++;
        cursor = start + 1;
    }
    CHECK(frames >= 10u);
}

const cc_test_case_t cc_tests_vectors[] = {
    {"golden_frames", test_golden_frames},
};
const size_t cc_tests_vectors_count = CC_TEST_COUNT(cc_tests_vectors);
