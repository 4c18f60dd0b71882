/*
 * camctl-sim's host checker (--strict, sim/breaks.c) on scripted frames: the
 * device time a catch-up runs after the simulator's own stall is not the
 * host's time to answer in; on a slow line a device packet's time to be
 * acknowledged and a new session's silence count from when the host has the
 * frame, and a host's copy of its own request is no reuse; and the checker
 * still catches a host that does not acknowledge, falls silent or reuses a
 * live call id.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "breaks.h"
#include "cc_frame.h"
#include "cc_wire.h"
#include "sim_frames.h"

static int g_failures;

#define CHECK(cond)                                                                  \
    do {                                                                             \
        if (!(cond)) {                                                               \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
            g_failures++;                                                            \
        }                                                                            \
    } while (0)

/* The same on call id 0 (link packets). */
static size_t frame(uint8_t type, uint8_t flags, uint16_t sequence, const uint8_t *payload, size_t payload_len,
                    uint8_t *out, size_t cap)
{
    return call_frame(type, flags, sequence, 0u, payload, payload_len, out, cap);
}

/* The host's reliable REQUEST numbered `sequence` on `call` for service.method (no fields). */
static void host_requests(uint16_t sequence, uint8_t call, uint8_t service, uint8_t method, uint64_t now_us)
{
    uint8_t payload[2], wire[64], out[128];
    size_t n;
    payload[0] = service;
    payload[1] = method;
    n = call_frame(CC_PKT_REQUEST, CC_WIRE_FLAG_RELIABLE, sequence, call, payload, sizeof payload, wire, sizeof wire);
    CHECK(n > 0u);
    CHECK(ccsim_filter_in(wire, n, out, sizeof out, now_us, true) == n);
}

/* The device's reliable RESPONSE numbered `sequence` on `call`. */
static void device_responds(uint16_t sequence, uint8_t call, uint64_t now_us)
{
    static const uint8_t payload[2] = {0x08u, 0x01u};
    uint8_t wire[64], out[128];
    size_t n = call_frame(CC_PKT_RESPONSE, CC_WIRE_FLAG_RELIABLE, sequence, call, payload, sizeof payload, wire,
                          sizeof wire);
    CHECK(n > 0u);
    CHECK(ccsim_filter_out(wire, n, out, sizeof out, now_us) == n);
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

/* `count` HEARTBEATs of the host, every 50 ms from `first_us`, numbered on from *sequence. */
static void host_heartbeats(uint16_t *sequence, unsigned count, uint64_t first_us)
{
    unsigned k;
    for (k = 0; k < count; k++) {
        host_sends(CC_PKT_HEARTBEAT, (*sequence)++, 0u, first_us + 50000u * k);
    }
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

    /* A 9600-baud line (one byte 1.04 ms) that has 340 ms of earlier frames still to send: a new session's
     * HandshakeResponse reaches the host about 350 ms after the host's handshake, and another reliable
     * response 100 ms after that. The host acknowledges each as it arrives, and its next heartbeat
     * follows 60 ms after the last ACK: it was silent for 350 ms after its handshake, but it knew of
     * the session only then, and the second packet waited 150 ms for its ACK, 40 of them on the line.
     * Nothing is a violation. */
    t += 400000u;
    host_requests(6u, 1u, 1u, 1u, t);
    ccsim_filter_out_line(t + 340000u, 1041667u);
    device_responds(20u, 1u, t + 1000u);
    ccsim_filter_out_line(t + 450000u, 1041667u);
    device_responds(21u, 9u, t + 110000u);
    tick(t + 300000u);
    host_sends(CC_PKT_ACK, 7u, 20u, t + 352000u);
    tick(t + 400000u);
    host_sends(CC_PKT_ACK, 8u, 21u, t + 462000u);
    host_sends(CC_PKT_HEARTBEAT, 9u, 0u, t + 522000u);
    ccsim_filter_out_line(0u, 0u);
    CHECK(ccsim_strict_report() == 2u);

    /* A request whose ACK is late is sent again, the same packet (its number and bytes): a copy, not a
     * reuse of its call id. A new request on that still live call is a reuse. */
    t += 530000u;
    host_requests(10u, 3u, 2u, 2u, t);
    host_requests(10u, 3u, 2u, 2u, t + 20000u);
    host_requests(10u, 3u, 2u, 2u, t + 60000u);
    CHECK(ccsim_strict_report() == 2u);
    host_requests(11u, 3u, 3u, 1u, t + 80000u);
    CHECK(ccsim_strict_report() == 3u);

    /* The device's RESPONSE ends a unary call: its id may be used again (§4). The RESPONSE that confirms
     * one of InputService's streams does not end it (§7): a new request on its id is a reuse. */
    t += 100000u;
    host_requests(12u, 5u, 3u, 1u, t);
    device_responds(30u, 5u, t + 1000u);
    host_sends(CC_PKT_ACK, 13u, 30u, t + 2000u);
    host_requests(14u, 5u, 3u, 2u, t + 3000u);
    CHECK(ccsim_strict_report() == 3u);
    host_requests(15u, 6u, 2u, 1u, t + 4000u);
    device_responds(31u, 6u, t + 5000u);
    host_sends(CC_PKT_ACK, 16u, 31u, t + 6000u);
    host_requests(17u, 6u, 3u, 1u, t + 7000u);
    CHECK(ccsim_strict_report() == 4u);

    /* On the slow line: a packet the device sends while 300 ms of frames wait on the line reaches the host
     * when its own 10 bytes have gone too (310.4 ms): unacknowledged, it is not late 505 ms after it was
     * sent (194.6 ms after it arrived), and is 515 ms after. */
    t += 10000u;
    host_sends(CC_PKT_HEARTBEAT, 18u, 0u, t);
    ccsim_filter_out_line(t + 300000u, 1041667u);
    device_responds(32u, 7u, t);
    ccsim_filter_out_line(0u, 0u);
    tick(t + 505000u);
    CHECK(ccsim_strict_report() == 4u);
    tick(t + 515000u);
    CHECK(ccsim_strict_report() == 5u);

    /* A host that had its HandshakeResponse 110 ms after its handshake and stays silent 150 ms more (2.5 to
     * 4 intervals, within the dead timeout) was late once in its new session: reported, not counted. Late
     * again in the same session, 150 ms after a heartbeat, it is caught: a host whose timer is slow. */
    t += 600000u;
    host_requests(19u, 1u, 1u, 1u, t);
    ccsim_filter_out_line(t + 100000u, 1041667u);
    device_responds(40u, 1u, t + 1000u);
    ccsim_filter_out_line(0u, 0u);
    host_sends(CC_PKT_ACK, 20u, 40u, t + 110000u + 150000u);
    CHECK(ccsim_strict_report() == 5u);
    host_sends(CC_PKT_HEARTBEAT, 90u, 0u, t + 310000u);
    host_sends(CC_PKT_HEARTBEAT, 91u, 0u, t + 360000u);
    CHECK(ccsim_strict_report() == 5u);
    host_sends(CC_PKT_HEARTBEAT, 92u, 0u, t + 510000u);
    CHECK(ccsim_strict_report() == 6u);

    /* The device sends a packet again while the host's ACK of it is still on its way (a late ACK; a host
     * that has closed the port right after acknowledging never sees the copy): a copy of an acknowledged
     * packet is owed no second ACK. A new packet with the same number but other bytes (a new session's) is
     * owed one, and caught. */
    t += 520000u;
    host_sends(CC_PKT_HEARTBEAT, 21u, 0u, t);
    device_responds(50u, 8u, t + 1000u);
    host_sends(CC_PKT_ACK, 22u, 50u, t + 2000u);
    device_responds(50u, 8u, t + 21000u);
    host_sends(CC_PKT_HEARTBEAT, 23u, 0u, t + 100000u);
    host_sends(CC_PKT_HEARTBEAT, 24u, 0u, t + 200000u);
    tick(t + 300000u);
    CHECK(ccsim_strict_report() == 6u);
    host_sends(CC_PKT_HEARTBEAT, 25u, 0u, t + 301000u);
    device_responds(50u, 9u, t + 302000u);
    host_sends(CC_PKT_HEARTBEAT, 26u, 0u, t + 400000u);
    host_sends(CC_PKT_HEARTBEAT, 27u, 0u, t + 500000u);
    tick(t + 520000u);
    CHECK(ccsim_strict_report() == 7u);

    /* --strict alone holds nothing back: a device frame handed over in pieces comes out piece by piece, as
     * from the device's UART. Held to its delimiter and then put on the line, it took its line time twice
     * (a HandshakeResponse 340 ms at 9600 baud, not 170), and the device's retransmission timer ran out
     * before the host could have answered it. */
    {
        static const uint8_t payload[1] = {0x00u};
        uint8_t wire[64], out[128];
        size_t n = frame(CC_PKT_HEARTBEAT, 0u, 51u, payload, 0u, wire, sizeof wire);
        CHECK(n > 4u);
        CHECK(ccsim_filter_out(wire, 3u, out, sizeof out, t + 600000u) == 3u);
        CHECK(memcmp(out, wire, 3u) == 0);
        CHECK(ccsim_filter_out(wire + 3u, n - 3u, out, sizeof out, t + 601000u) == n - 3u);
        CHECK(memcmp(out, wire + 3u, n - 3u) == 0);
        CHECK(ccsim_strict_report() == 7u);
        /* and the host's, the same way (a heartbeat of the host, in its session, within its interval) */
        n = frame(CC_PKT_HEARTBEAT, 0u, 28u, payload, 0u, wire, sizeof wire);
        CHECK(ccsim_filter_in(wire, 3u, out, sizeof out, t + 602000u, true) == 3u);
        CHECK(memcmp(out, wire, 3u) == 0);
        CHECK(!ccsim_filter_frame_arriving());   /* the device sees it arriving itself */
        CHECK(ccsim_filter_in(wire + 3u, n - 3u, out, sizeof out, t + 603000u, true) == n - 3u);
        CHECK(memcmp(out, wire + 3u, n - 3u) == 0);
        CHECK(ccsim_strict_report() == 7u);
    }

    /* The host's ACK queued behind its own long frame on the host -> device line (at 9600 baud a 900-byte
     * RunScenario request keeps it 0.94 s): judged once the line has delivered what the host had written when
     * the 200 ms ran out, so an ACK written in time and arriving late is no violation. A host that keeps the
     * line busy with bytes written later does not put the verdict off. */
    {
        uint16_t host = 29u;
        uint64_t at;
        t += 700000u;
        host_sends(CC_PKT_HEARTBEAT, host++, 0u, t);
        device_sends_reliable(60u, t + 100u);
        ccsim_filter_in_line(2000u, 1000u);   /* the ACK was written: 1,000 bytes still on the line */
        for (at = t + 100000u; at <= t + 600000u; at += 100000u) {
            host_sends(CC_PKT_HEARTBEAT, host++, 0u, at);   /* the long frame's bytes keep coming */
            ccsim_filter_in_line(2000u, 1000u + (at - t) / 1000u);
            tick(at + 1000u);
        }
        CHECK(ccsim_strict_report() == 7u);
        host_sends(CC_PKT_ACK, host++, 60u, t + 650000u);   /* it arrives at last */
        ccsim_filter_in_line(2000u, 2000u);
        tick(t + 660000u);
        CHECK(ccsim_strict_report() == 7u);
        device_sends_reliable(61u, t + 670000u);
        ccsim_filter_in_line(3000u, 2000u);   /* 1,000 bytes written by its deadline, no ACK among them */
        host_sends(CC_PKT_HEARTBEAT, host++, 0u, t + 760000u);
        host_sends(CC_PKT_HEARTBEAT, host++, 0u, t + 860000u);
        tick(t + 880000u);
        CHECK(ccsim_strict_report() == 7u);
        ccsim_filter_in_line(9000u, 3000u);   /* those have arrived; the host keeps the line busy */
        tick(t + 890000u);
        CHECK(ccsim_strict_report() == 8u);
    }

    /* The host closes the port. A packet it had and did not acknowledge is judged at the next tick, once the
     * line has delivered what the host wrote before it closed: no ACK can come any more, and a simulator
     * stopped right after the host had gone used to count nothing. An ACK written just before the close and
     * still on the line is no violation; a packet still on its way to the host at the close, or sent after
     * it, never reached a host and is owed nothing, until a host opens the port again. */
    {
        uint16_t host = 40u;
        t += 1000000u;
        ccsim_filter_host_opened();
        host_requests(host++, 1u, 1u, 1u, t); /* a new host: its handshake */
        host_sends(CC_PKT_HEARTBEAT, host++, 0u, t + 1000u);
        device_sends_reliable(70u, t + 1100u);
        ccsim_filter_in_line(10000u, 9990u); /* 10 bytes it wrote still on the line */
        ccsim_filter_host_closed(t + 11000u);
        tick(t + 11500u);
        CHECK(ccsim_strict_report() == 8u); /* not before they have arrived: one may be its ACK */
        ccsim_filter_in_line(10000u, 10000u);
        tick(t + 12000u);
        CHECK(ccsim_strict_report() == 9u); /* at once, not 200 ms later */

        ccsim_filter_host_opened();
        host_requests(host++, 2u, 1u, 1u, t + 20000u);
        device_sends_reliable(71u, t + 20100u);
        ccsim_filter_in_line(10010u, 10000u); /* its ACK written, on the line */
        ccsim_filter_host_closed(t + 21000u);
        tick(t + 21500u);
        host_sends(CC_PKT_ACK, host++, 71u, t + 22000u); /* it arrives after the close */
        ccsim_filter_in_line(10010u, 10010u);
        tick(t + 23000u);
        CHECK(ccsim_strict_report() == 9u);

        ccsim_filter_host_opened();
        host_requests(host++, 3u, 1u, 1u, t + 30000u);
        ccsim_filter_out_line(t + 130000u, 1041667u); /* 100 ms of frames ahead of it on the line */
        device_sends_reliable(72u, t + 30100u);
        ccsim_filter_out_line(0u, 0u);
        ccsim_filter_host_closed(t + 40000u);
        tick(t + 41000u);
        device_sends_reliable(73u, t + 50000u); /* to nobody */
        tick(t + 400000u);
        CHECK(ccsim_strict_report() == 9u);

        ccsim_filter_host_opened(); /* and owed again */
        host_requests(host++, 4u, 1u, 1u, t + 410000u);
        device_sends_reliable(74u, t + 411000u);
        host_sends(CC_PKT_HEARTBEAT, host++, 0u, t + 500000u);
        tick(t + 620000u);
        CHECK(ccsim_strict_report() == 10u);

        /* The simulator unplugs the port (--faults unplug=): the host's ACK on the line is lost with it, and
         * no host could have answered. Nothing is owed. */
        host_requests(host++, 5u, 1u, 1u, t + 630000u);
        device_sends_reliable(75u, t + 631000u);
        ccsim_filter_in_line(10020u, 10010u); /* its ACK written, on the line */
        ccsim_filter_unplugged();
        ccsim_filter_in_line(10020u, 10020u); /* the emptied line counts its bytes as gone */
        tick(t + 1000000u);
        CHECK(ccsim_strict_report() == 10u);

        /* A host's handshake while the old session's last reliable packet is still on its way: that packet
         * reaches the host while its handshake awaits its answer, and the host leaves it unacknowledged, as
         * PROTOCOL.md §9 (v1.2) says; the new session's answer ends what it was owed. Its answer, and what
         * follows, are owed as ever. */
        ccsim_filter_host_opened();
        host_requests(host++, 9u, 1u, 1u, t + 1010000u);
        device_sends_reliable(76u, t + 1010500u); /* the old session's, after the host's handshake */
        device_responds(0u, 9u, t + 1011000u);     /* the new session's HandshakeResponse */
        host_sends(CC_PKT_ACK, host++, 0u, t + 1012000u);
        host_heartbeats(&host, 4u, t + 1060000u);
        tick(t + 1250000u);
        CHECK(ccsim_strict_report() == 10u);
        device_sends_reliable(1u, t + 1260000u); /* the new session's: owed */
        host_heartbeats(&host, 4u, t + 1300000u);
        tick(t + 1500000u);
        CHECK(ccsim_strict_report() == 11u);
    }

    /* A handshake starts a session with no late heartbeat: a late silence before it and one after it are each
     * the first of their session, reported and not counted. A port closed and opened again starts afresh too:
     * the silence across the close is no host's, and the next late one is the first. */
    t += 3000000u;
    host_requests(100u, 11u, 1u, 1u, t);
    host_sends(CC_PKT_HEARTBEAT, 101u, 0u, t + 50000u);
    host_sends(CC_PKT_HEARTBEAT, 102u, 0u, t + 200000u);
    host_requests(103u, 12u, 1u, 1u, t + 210000u);
    host_sends(CC_PKT_HEARTBEAT, 104u, 0u, t + 260000u);
    host_sends(CC_PKT_HEARTBEAT, 105u, 0u, t + 410000u);
    CHECK(ccsim_strict_report() == 11u);
    ccsim_filter_host_closed(t + 420000u);
    ccsim_filter_host_opened();
    host_sends(CC_PKT_HEARTBEAT, 106u, 0u, t + 570000u);
    host_sends(CC_PKT_HEARTBEAT, 107u, 0u, t + 720000u);
    CHECK(ccsim_strict_report() == 11u);
    host_sends(CC_PKT_HEARTBEAT, 108u, 0u, t + 870000u);
    CHECK(ccsim_strict_report() == 12u);

    if (g_failures != 0) {
        fprintf(stderr, "test_strict: %d check(s) failed\n", g_failures);
        return EXIT_FAILURE;
    }
    printf("test_strict: the host checker discounts the simulator's own stalls and a slow line's, owes nothing for a copy of an acknowledged packet, takes a copy for "
           "its request, ends a call at the device's answer, passes the device's bytes on as they come, waits for an ACK queued behind the "
           "host's own frame, judges a closed host's packets at once and owes nothing to nobody, and still catches a host\n");
    return EXIT_SUCCESS;
}
