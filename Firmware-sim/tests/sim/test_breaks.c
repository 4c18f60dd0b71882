/*
 * camctl-sim's breakers (--break, sim/breaks.c) on scripted frames. A breaker is a device that is wrong in one
 * way only: the conformance suite must fail it on its own cases and no other. responses-best-effort sends
 * RESPONSE and ERROR without the reliable flag and ACKs the device's copies for the host; when more answers
 * leave between two ticks than it has room to ACK, the rest stay reliable (the host ACKs them), so none is
 * left unacknowledged, retransmitted into the filter and holding a device slot until it is given up.
 */
#include <stdio.h>

#include "breaks.h"
#include "cc_frame.h"
#include "cc_test.h"
#include "cc_wire.h"
#include "sim_frames.h"

enum { ANSWERS = 40 };

/* The first byte (type | flags) of each whole frame in `wire`, into types; the number of frames. */
static size_t frame_heads(const uint8_t *wire, size_t len, uint8_t *types, size_t cap)
{
    cc_frame_decoder_t dec;
    size_t i, frames = 0;
    cc_frame_decoder_init(&dec);
    for (i = 0; i < len; i++) {
        if (cc_frame_decoder_feed(&dec, wire[i]) == CC_FRAME_OK) {
            size_t body_len = 0;
            const uint8_t *body = cc_frame_decoder_body(&dec, &body_len);
            if (body_len > 0u && frames < cap) {
                types[frames++] = body[0];
            }
        }
    }
    return frames;
}

static void host_requests(uint16_t sequence, uint8_t call, uint8_t service, uint8_t method)
{
    uint8_t payload[2], wire[64], out[128];
    size_t n;
    payload[0] = service;
    payload[1] = method;
    n = call_frame(CC_PKT_REQUEST, CC_WIRE_FLAG_RELIABLE, sequence, call, payload, sizeof payload, wire, sizeof wire);
    REQUIRE(n > 0u);
    CHECK(ccsim_filter_in(wire, n, out, sizeof out, 1000u, true) > 0u);
}

/* The device's reliable RESPONSE numbered `sequence` on `call`, as the host gets it: its type | flags. */
static uint8_t device_answers(uint16_t sequence, uint8_t call)
{
    static const uint8_t payload[2] = {0x08u, 0x01u};
    uint8_t wire[64], out[128], head = 0;
    size_t n = call_frame(CC_PKT_RESPONSE, CC_WIRE_FLAG_RELIABLE, sequence, call, payload, sizeof payload, wire,
                          sizeof wire);
    size_t sent;
    if (n == 0u) {
        cc_test_fail(__FILE__, __LINE__, "frame encoded");
        return 0;
    }
    sent = ccsim_filter_out(wire, n, out, sizeof out, 2000u);
    if (frame_heads(out, sent, &head, 1u) != 1u) {
        cc_test_fail(__FILE__, __LINE__, "one frame to the host");
    }
    return head;
}

static void test_answers_past_the_ack_queue_stay_reliable(void)
{
    uint8_t heads[ANSWERS], out[2048], types[64];
    unsigned best_effort = 0, reliable = 0, acks = 0, i;
    size_t n, frames;
    REQUIRE(ccsim_breaks_select("responses-best-effort"));
    host_requests(0u, 1u, 1u, 1u); /* the handshake */
    CHECK_EQ(device_answers(0u, 1u), CC_PKT_RESPONSE);
    n = ccsim_filter_tick(3000u, true, out, sizeof out); /* the filter's ACK of the handshake's answer */
    CHECK_EQ(frame_heads(out, n, types, 64u), 1u);
    for (i = 1; i <= ANSWERS; i++) {
        host_requests((uint16_t)i, (uint8_t)(i + 1u), 1u, 2u); /* Pings, all answered before the next tick */
    }
    for (i = 1; i <= ANSWERS; i++) {
        heads[i - 1u] = device_answers((uint16_t)i, (uint8_t)(i + 1u));
    }
    for (i = 0; i < ANSWERS; i++) {
        CHECK_EQ(heads[i] & 0x0Fu, CC_PKT_RESPONSE);
        if ((heads[i] & CC_WIRE_FLAG_RELIABLE) != 0u) {
            reliable++;
        } else {
            best_effort++;
        }
    }
    n = ccsim_filter_tick(4000u, true, out, sizeof out);
    frames = frame_heads(out, n, types, 64u);
    for (i = 0; i < frames; i++) {
        acks += (types[i] & 0x0Fu) == CC_PKT_ACK ? 1u : 0u;
    }
    /* every answer sent best-effort has the filter's ACK for the device; the others, the host's */
    CHECK(best_effort > 0u);
    CHECK(reliable > 0u);
    CHECK_EQ(acks, best_effort);
    CHECK_EQ(frames, acks);
    CHECK_EQ(best_effort + reliable, ANSWERS);
}

int main(void)
{
    static const cc_test_case_t cases[] = {
        {"answers_past_the_ack_queue_stay_reliable", test_answers_past_the_ack_queue_stay_reliable},
    };
    unsigned passed = 0, failed = 0;
    cc_test_run("breaks", cases, sizeof cases / sizeof cases[0], &passed, &failed);
    printf("test_breaks: %u passed, %u failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}
