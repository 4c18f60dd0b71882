/*
 * camctl-sim's host checker (--strict, sim/breaks.c) on scripted frames: the
 * device time a catch-up runs after the simulator's own stall is not the
 * host's time to answer in, and the checker still catches a host that does
 * not acknowledge or falls silent.
 */
#include <stdio.h>
#include <stdlib.h>

#include "breaks.h"
#include "cc_frame.h"
#include "cc_wire.h"

static int g_failures;

#define CHECK(cond)                                                                  \
    do {                                                                             \
        if (!(cond)) {                                                               \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
            g_failures++;                                                            \
        }                                                                            \
    } while (0)

/* One frame on the wire: type|flags, sequence, call id 0 (one varint byte), payload. */
static size_t frame(uint8_t type, uint8_t flags, uint16_t sequence, const uint8_t *payload, size_t payload_len,
                    uint8_t *out, size_t cap)
{
    uint8_t body[32];
    size_t n = 0, i;
    body[n++] = (uint8_t)(type | flags);
    body[n++] = (uint8_t)(sequence & 0xFFu);
    body[n++] = (uint8_t)(sequence >> 8);
    body[n++] = 0u;
    for (i = 0; i < payload_len; i++) {
        body[n++] = payload[i];
    }
    return cc_frame_encode(body, n, out, cap);
}

/* The device sends a reliable RESPONSE numbered `sequence`. */
static void device_sends_reliable(uint16_t sequence, uint64_t now_us)
{
    static const uint8_t payload[2] = {0x08u, 0x01u};
    uint8_t wire[64], out[128];
    size_t n = frame(CC_PKT_RESPONSE, CC_WIRE_FLAG_RELIABLE, sequence, payload, sizeof payload, wire, sizeof wire);
    CHECK(n > 0u);
    CHECK(ccsim_filter_out(wire, n, out, sizeof out, now_us) == n);
}

/* The host's packet of `type` (an ACK of `acked`, or a HEARTBEAT), numbered `sequence`, in a session. */
static void host_sends(uint8_t type, uint16_t sequence, uint16_t acked, uint64_t now_us)
{
    uint8_t payload[2], wire[64], out[128];
    size_t payload_len = 0, n;
    if (type == CC_PKT_ACK) {
        payload[0] = (uint8_t)(acked & 0xFFu);
        payload[1] = (uint8_t)(acked >> 8);
        payload_len = 2u;
    }
    n = frame(type, 0u, sequence, payload, payload_len, wire, sizeof wire);
    CHECK(n > 0u);
    CHECK(ccsim_filter_in(wire, n, out, sizeof out, now_us, true) == n);
}

static void tick(uint64_t now_us)
{
    uint8_t out[64];
    CHECK(ccsim_filter_tick(now_us, true, out, sizeof out) == 0u);
}

int main(void)
{
    uint64_t t = 1000u;
    unsigned pass;
    ccsim_strict_enable();

    /* A session: the host's heartbeat, then a reliable response; the simulator stalls and catches up 400 ms
     * of device time in 5 ms steps (what camctl-sim's loop does after a loaded machine did not run it). The
     * host answers as soon as it can: right after the catch-up, by device time. Nothing is a violation. */
    host_sends(CC_PKT_HEARTBEAT, 1u, 0u, t);
    device_sends_reliable(7u, t + 100u);
    for (pass = 1u; pass <= 80u; pass++) {
        ccsim_filter_stalled(5000u);
        tick(t + 100u + pass * 5000u);
    }
    t += 100u + 80u * 5000u;
    host_sends(CC_PKT_ACK, 2u, 7u, t + 300u);
    host_sends(CC_PKT_HEARTBEAT, 3u, 0u, t + 400u);
    tick(t + 100000u);
    CHECK(ccsim_strict_report() == 0u);

    /* The same without the stall: a host that leaves a reliable packet unacknowledged for 200 ms, and one
     * that comes back after 300 ms of silence in its session, are caught. */
    t += 100000u;
    host_sends(CC_PKT_HEARTBEAT, 4u, 0u, t);
    device_sends_reliable(8u, t + 100u);
    tick(t + 250000u);
    host_sends(CC_PKT_HEARTBEAT, 5u, 0u, t + 300000u);
    CHECK(ccsim_strict_report() == 2u);

    if (g_failures != 0) {
        fprintf(stderr, "test_strict: %d check(s) failed\n", g_failures);
        return EXIT_FAILURE;
    }
    printf("test_strict: the host checker discounts the simulator's own stalls and still catches a host\n");
    return EXIT_SUCCESS;
}
