/* Device-level tests: reliability, duplicates, heartbeats, liveness, link counters. */
#include <string.h>

#include "cc_frame.h"
#include "cc_ids.h"
#include "cc_test.h"
#include "cc_wire.h"
#include "harness.h"

static void open_event_stream(harness_t *h, uint32_t call_id)
{
    hx_request(h, call_id, CC_SERVICE_INPUT_SERVICE, CC_METHOD_INPUT_SERVICE_STREAM_INPUT_EVENTS, NULL);
    hx_poll(h);
}

/* Presses VOLUME_UP and waits past the debounce; returns the first event packet. */
static const hx_packet_t *press_button(harness_t *h)
{
    h->buttons = CC_BUTTON_VOLUME_UP;
    hx_advance(h, 10000);
    return hx_find(h, CC_PKT_STREAM_MESSAGE, HX_ANY_CALL);
}

static void test_reliable_event_retransmitted_until_ack(void)
{
    harness_t *h = hx_setup();
    const hx_packet_t *p;
    uint16_t seq;
    size_t i;
    Cameracontrol__V1__InputEvent *ev;
    REQUIRE(hx_handshake(h, 0));
    open_event_stream(h, 5);
    p = press_button(h);
    REQUIRE(p != NULL);
    CHECK_EQ(p->call_id, 5);
    CHECK(p->flags & CC_WIRE_FLAG_RELIABLE);
    ev = cameracontrol__v1__input_event__unpack(NULL, p->payload_len, p->payload);
    REQUIRE(ev != NULL);
    CHECK_EQ(ev->kind, CAMERACONTROL__V1__INPUT_EVENT_KIND__INPUT_EVENT_KIND_BUTTON_DOWN);
    CHECK_EQ(ev->source, CAMERACONTROL__V1__INPUT_SOURCE__INPUT_SOURCE_VOLUME_UP);
    cameracontrol__v1__input_event__free_unpacked(ev, NULL);
    seq = p->sequence;
    CHECK_EQ(hx_count(h, CC_PKT_STREAM_MESSAGE, 5), 1);
    /* no ACK: the same packet again after 20 ms, then 40 ms later */
    hx_clear(h);
    hx_heartbeat(h);
    hx_advance(h, 25000);
    CHECK_EQ(hx_count(h, CC_PKT_STREAM_MESSAGE, 5), 1);
    p = hx_find(h, CC_PKT_STREAM_MESSAGE, 5);
    REQUIRE(p != NULL);
    CHECK_EQ(p->sequence, seq);
    CHECK_EQ(cc_device_counters(&h->dev)->retransmissions, 1);
    hx_clear(h);
    hx_heartbeat(h);
    hx_advance(h, 20000);
    CHECK_EQ(hx_count(h, CC_PKT_STREAM_MESSAGE, 5), 0);   /* RTO doubled to 40 ms */
    hx_heartbeat(h);
    hx_advance(h, 25000);
    CHECK_EQ(hx_count(h, CC_PKT_STREAM_MESSAGE, 5), 1);
    CHECK_EQ(cc_device_counters(&h->dev)->retransmissions, 2);
    /* ACK: never again */
    hx_ack(h, seq);
    hx_poll(h);
    CHECK_EQ(h->dev.link.slots[0].used, false);
    hx_clear(h);
    hx_advance_alive(h, 400000);
    CHECK_EQ(hx_count(h, CC_PKT_STREAM_MESSAGE, 5), 0);
    CHECK_EQ(cc_device_counters(&h->dev)->retransmissions, 2);
    for (i = 0; i < CC_RELIABLE_SLOTS; i++) {
        CHECK(!h->dev.link.slots[i].used);
    }
}

/* Advances 1 ms at a time (at most limit_ms) until `count` copies of the
 * stream's messages were sent; returns the time of the last, or 0. */
static uint64_t time_of_copy(harness_t *h, uint32_t call_id, size_t count, unsigned limit_ms)
{
    unsigned i;
    for (i = 0; i < limit_ms; i++) {
        if (hx_count(h, CC_PKT_STREAM_MESSAGE, call_id) >= count) {
            return h->now_us;
        }
        hx_advance(h, 1000u);
    }
    return 0u;
}

/* Blocks the UART for block_us after a press, then returns how long after
 * its copy left (the first poll that found it gone) the event went out
 * again: 0 when it did not within 150 ms. */
static uint64_t retransmission_after_leaving(harness_t *h, uint64_t block_us)
{
    uint64_t left, again;
    if (!hx_handshake(h, 0)) {
        CHECK(false);
        return 0u;
    }
    open_event_stream(h, 5);
    hx_clear(h);
    hx_heartbeat(h);
    h->tx_blocked = true;   /* a slow line: the UART takes nothing for a while */
    h->buttons = CC_BUTTON_VOLUME_UP;
    hx_advance(h, block_us);
    CHECK_EQ(hx_count(h, CC_PKT_STREAM_MESSAGE, 5), 0);
    CHECK_EQ(cc_device_counters(&h->dev)->retransmissions, 0);   /* its copy waits: no second one */
    hx_heartbeat(h);
    h->tx_blocked = false;
    left = time_of_copy(h, 5, 1, 5);
    CHECK(left != 0u);
    again = time_of_copy(h, 5, 2, 150);
    return left == 0u || again == 0u ? 0u : again - left;
}

/* A copy that waited in the tx buffer is not sent again while it waits, and
 * its timeout (20 ms) counts from when it has left, whether that was after
 * its first timeout would have ended (97 ms) or before it (10 ms after the
 * press), not from its queueing (PROTOCOL.md §6). */
static void test_retransmission_timeout_counts_from_the_copy_leaving(void)
{
    uint64_t after = retransmission_after_leaving(hx_setup(), 97000u);
    CHECK(after >= 20000u && after <= 22000u);
    after = retransmission_after_leaving(hx_setup(), 10000u);
    CHECK(after >= 20000u && after <= 22000u);
}

/* The allowance for the ACK's time on a slow line also counts from the
 * copy's leaving: 20 ms and 33 ms after it at 9600 baud. */
static void test_retransmission_allowance_counts_from_the_copy_leaving(void)
{
    harness_t *h = hx_setup();
    uint64_t allowance = (uint64_t)CC_LINK_ACK_ALLOWANCE_BYTES * 10u * 1000000u / 9600u;
    uint64_t after;
    cc_device_set_line_speed(&h->dev, 9600u);
    after = retransmission_after_leaving(h, 97000u);
    CHECK(after >= 20000u + allowance - 1000u && after <= 20000u + allowance + 2000u);
}

/* On a line whose speed the board gave, every timeout also allows for the
 * ACK's time on it (CC_LINK_ACK_ALLOWANCE_BYTES): 33 ms more at 9600 baud. */
static void test_retransmission_timeout_allows_for_a_slow_line(void)
{
    harness_t *h = hx_setup();
    uint64_t first, second, third;
    uint64_t allowance = (uint64_t)CC_LINK_ACK_ALLOWANCE_BYTES * 10u * 1000000u / 9600u;
    REQUIRE(hx_handshake(h, 0));
    cc_device_set_line_speed(&h->dev, 9600u);
    CHECK_EQ(h->dev.link.ack_allowance_us, allowance);
    open_event_stream(h, 5);
    hx_clear(h);
    hx_heartbeat(h);
    h->buttons = CC_BUTTON_VOLUME_UP;
    first = time_of_copy(h, 5, 1, 30);
    REQUIRE(first != 0u);
    second = time_of_copy(h, 5, 2, 150);
    REQUIRE(second != 0u);
    CHECK(second - first >= 20000u + allowance - 1000u);
    CHECK(second - first <= 20000u + allowance + 2000u);
    hx_heartbeat(h);
    third = time_of_copy(h, 5, 3, 150);
    REQUIRE(third != 0u);
    CHECK(third - second >= 40000u + allowance - 1000u);   /* the timeout doubles, the allowance stays */
    CHECK(third - second <= 40000u + allowance + 2000u);
    cc_device_set_line_speed(&h->dev, 0u);
    CHECK_EQ(h->dev.link.ack_allowance_us, 0);
    cc_device_set_line_speed(&h->dev, 1u);   /* absurdly slow: bounded */
    CHECK_EQ(h->dev.link.ack_allowance_us, CC_LINK_MAX_ACK_ALLOWANCE_US);
}

static void test_reliable_gives_up_after_max_tries(void)
{
    harness_t *h = hx_setup();
    REQUIRE(hx_handshake(h, 0));
    open_event_stream(h, 5);
    REQUIRE(press_button(h) != NULL);
    hx_clear(h);
    hx_advance_alive(h, 10000000);   /* 10 s of heartbeats, no ACK */
    CHECK_EQ(cc_device_counters(&h->dev)->retransmissions, CC_WIRE_MAX_TRIES - 1u);
    CHECK_EQ(hx_count(h, CC_PKT_STREAM_MESSAGE, 5), CC_WIRE_MAX_TRIES - 1u);
    CHECK_EQ(cc_link_unacked(&h->dev.link), 0);
    CHECK_EQ(cc_device_counters(&h->dev)->reliable_given_up, 1);   /* the loss is on record */
}

static void test_cancel_stops_retransmission(void)
{
    harness_t *h = hx_setup();
    REQUIRE(hx_handshake(h, 0));
    open_event_stream(h, 5);
    REQUIRE(press_button(h) != NULL);
    CHECK_EQ(cc_link_unacked(&h->dev.link), 1);
    hx_cancel(h, 5);
    hx_poll(h);
    CHECK_EQ(cc_link_unacked(&h->dev.link), 0);
    hx_clear(h);
    hx_advance_alive(h, 500000);
    CHECK_EQ(hx_count(h, CC_PKT_STREAM_MESSAGE, 5), 0);   /* nothing more for a cancelled call */
    CHECK_EQ(cc_device_counters(&h->dev)->retransmissions, 0);
}

static void test_reliable_slots_full_still_sends(void)
{
    harness_t *h = hx_setup();
    unsigned presses;
    size_t i;
    uint16_t seen[64];
    size_t nseen = 0;
    size_t unflagged = 0;
    REQUIRE(hx_handshake(h, 0));
    open_event_stream(h, 5);
    for (presses = 0; presses < 10u; presses++) {   /* 20 reliable events, never acknowledged */
        hx_heartbeat(h);
        h->buttons = CC_BUTTON_VOLUME_UP;
        hx_advance(h, 10000);
        h->buttons = 0;
        hx_advance(h, 10000);
    }
    CHECK_EQ(cc_link_unacked(&h->dev.link), CC_RELIABLE_SLOTS);
    for (i = 0; i < h->npackets; i++) {
        size_t j;
        bool dup = false;
        if (h->packets[i].type != CC_PKT_STREAM_MESSAGE) {
            continue;
        }
        if ((h->packets[i].flags & CC_WIRE_FLAG_RELIABLE) == 0u) {
            unflagged++;   /* S5: sent unprotected, without the flag */
        }
        for (j = 0; j < nseen; j++) {
            dup = dup || seen[j] == h->packets[i].sequence;
        }
        if (!dup && nseen < 64u) {
            seen[nseen++] = h->packets[i].sequence;
        }
    }
    CHECK_EQ(nseen, 20);   /* every event went out at least once */
    CHECK_EQ(unflagged, 20u - CC_RELIABLE_SLOTS);
    CHECK_EQ(cc_device_counters(&h->dev)->reliable_unprotected, 20u - CC_RELIABLE_SLOTS);
}

static void test_best_effort_event_not_reliable(void)
{
    harness_t *h = hx_setup();
    const hx_packet_t *p;
    REQUIRE(hx_handshake(h, 0));
    open_event_stream(h, 5);
    h->reading.touched = true;
    h->reading.position = 300;
    hx_advance(h, 5000);
    p = hx_find(h, CC_PKT_STREAM_MESSAGE, 5);
    REQUIRE(p != NULL);
    CHECK_EQ(p->flags & CC_WIRE_FLAG_RELIABLE, 0);   /* TOUCH_DOWN is best-effort */
    CHECK_EQ(cc_link_unacked(&h->dev.link), 0);
}

static void test_reliable_request_acked_and_deduplicated(void)
{
    harness_t *h = hx_setup();
    uint16_t seq;
    size_t i;
    unsigned acks = 0;
    REQUIRE(hx_handshake(h, 0));
    seq = h->host_sequence;
    hx_send_packet_seq(h, seq, CC_PKT_REQUEST, CC_WIRE_FLAG_RELIABLE, 70, CC_SERVICE_DEVICE_SERVICE,
                       CC_METHOD_DEVICE_SERVICE_PING, NULL, 0);
    hx_send_packet_seq(h, seq, CC_PKT_REQUEST, CC_WIRE_FLAG_RELIABLE, 70, CC_SERVICE_DEVICE_SERVICE,
                       CC_METHOD_DEVICE_SERVICE_PING, NULL, 0);
    h->host_sequence = (uint16_t)(seq + 1u);   /* the test host's ACK of the response follows */
    hx_poll(h);
    CHECK_EQ(hx_count(h, CC_PKT_RESPONSE, 70), 1);   /* delivered once */
    for (i = 0; i < h->npackets; i++) {
        if (h->packets[i].type == CC_PKT_ACK) {
            CHECK_EQ(h->packets[i].payload_len, 2);
            CHECK_EQ(h->packets[i].payload[0] | (h->packets[i].payload[1] << 8), seq);
            CHECK_EQ(h->packets[i].call_id, 0);
            acks++;
        }
    }
    CHECK_EQ(acks, 2);   /* acknowledged every time */
    CHECK_EQ(cc_device_counters(&h->dev)->duplicates_dropped, 1);
    CHECK_EQ(cc_device_counters(&h->dev)->sequence_gaps, 0);
}

static void test_duplicate_window(void)
{
    harness_t *h = hx_setup();
    uint16_t base;
    uint16_t i;
    REQUIRE(hx_handshake(h, 0));
    base = h->host_sequence;
    for (i = 0; i < 70u; i++) {
        hx_send_packet_seq(h, (uint16_t)(base + i), CC_PKT_HEARTBEAT, CC_WIRE_FLAG_RELIABLE, 0, 0, 0, NULL, 0);
    }
    hx_poll(h);
    CHECK_EQ(cc_device_counters(&h->dev)->duplicates_dropped, 0);
    /* inside the window: duplicate; older than it: treated as duplicate too */
    hx_send_packet_seq(h, (uint16_t)(base + 69u - 63u), CC_PKT_HEARTBEAT, CC_WIRE_FLAG_RELIABLE, 0, 0, 0, NULL, 0);
    hx_send_packet_seq(h, base, CC_PKT_HEARTBEAT, CC_WIRE_FLAG_RELIABLE, 0, 0, 0, NULL, 0);
    hx_poll(h);
    CHECK_EQ(cc_device_counters(&h->dev)->duplicates_dropped, 2);
    CHECK_EQ(cc_device_counters(&h->dev)->sequence_gaps, 0);
}

/* Sends a reliable heartbeat numbered seq; true when the device dropped it as a duplicate. */
static bool dropped_as_duplicate(harness_t *h, uint16_t seq)
{
    uint32_t before = cc_device_counters(&h->dev)->duplicates_dropped;
    hx_send_packet_seq(h, seq, CC_PKT_HEARTBEAT, CC_WIRE_FLAG_RELIABLE, 0, 0, 0, NULL, 0);
    hx_poll(h);
    return cc_device_counters(&h->dev)->duplicates_dropped == before + 1u;
}

/* The window (two 32-bit words, cc_link.h) moved by more than 32 and by less
 * across its two words: what was delivered stays marked at its new age, what
 * was not stays free, in either word. */
static void test_duplicate_window_jumps(void)
{
    harness_t *h = hx_setup();
    uint16_t base;
    REQUIRE(hx_handshake(h, 0));
    base = h->host_sequence;   /* the handshake's number and those before it count as delivered */
    CHECK(!dropped_as_duplicate(h, (uint16_t)(base + 40u)));   /* 41 ahead */
    CHECK(!dropped_as_duplicate(h, (uint16_t)(base + 39u)));   /* age 1 */
    CHECK(!dropped_as_duplicate(h, (uint16_t)(base + 10u)));   /* age 30 */
    CHECK(!dropped_as_duplicate(h, (uint16_t)(base + 8u)));    /* age 32: the second word */
    CHECK(dropped_as_duplicate(h, (uint16_t)(base + 8u)));
    CHECK(dropped_as_duplicate(h, (uint16_t)(base + 40u)));
    CHECK(dropped_as_duplicate(h, (uint16_t)(base - 1u)));     /* age 41: the handshake */
    CHECK(!dropped_as_duplicate(h, (uint16_t)(base + 9u)));    /* age 31 */
    CHECK(!dropped_as_duplicate(h, (uint16_t)(base + 60u)));   /* 20 ahead: bits move into the second word */
    CHECK(dropped_as_duplicate(h, (uint16_t)(base + 40u)));    /* age 20 */
    CHECK(dropped_as_duplicate(h, (uint16_t)(base + 39u)));    /* age 21 */
    CHECK(dropped_as_duplicate(h, (uint16_t)(base + 10u)));    /* age 50 */
    CHECK(dropped_as_duplicate(h, (uint16_t)(base + 9u)));     /* age 51 */
    CHECK(dropped_as_duplicate(h, (uint16_t)(base + 8u)));     /* age 52 */
    CHECK(!dropped_as_duplicate(h, (uint16_t)(base + 11u)));   /* age 49: never delivered */
    CHECK(!dropped_as_duplicate(h, (uint16_t)(base + 20u)));   /* age 40 */
    CHECK(!dropped_as_duplicate(h, (uint16_t)(base + 59u)));   /* age 1 */
    CHECK(dropped_as_duplicate(h, (uint16_t)(base - 1u)));     /* age 61 */
    CHECK(dropped_as_duplicate(h, (uint16_t)(base - 4u)));     /* age 64: older than the window */
}

static void test_sequence_gaps_counted(void)
{
    harness_t *h = hx_setup();
    REQUIRE(hx_handshake(h, 0));   /* host sequence 0 used */
    hx_send_packet_seq(h, 1, CC_PKT_HEARTBEAT, 0, 0, 0, 0, NULL, 0);
    hx_send_packet_seq(h, 4, CC_PKT_HEARTBEAT, 0, 0, 0, 0, NULL, 0);   /* 2 and 3 lost */
    hx_send_packet_seq(h, 3, CC_PKT_HEARTBEAT, 0, 0, 0, 0, NULL, 0);   /* late: not a gap */
    hx_send_packet_seq(h, 5, CC_PKT_HEARTBEAT, 0, 0, 0, 0, NULL, 0);
    hx_send_packet_seq(h, 0xFFFF, CC_PKT_HEARTBEAT, 0, 0, 0, 0, NULL, 0); /* behind: ignored */
    hx_poll(h);
    CHECK_EQ(cc_device_counters(&h->dev)->sequence_gaps, 2);
    /* wrap-around */
    h->dev.link.rx_expected = 0xFFFEu;
    hx_send_packet_seq(h, 0xFFFE, CC_PKT_HEARTBEAT, 0, 0, 0, 0, NULL, 0);
    hx_send_packet_seq(h, 1, CC_PKT_HEARTBEAT, 0, 0, 0, 0, NULL, 0);     /* FFFF and 0 lost */
    hx_poll(h);
    CHECK_EQ(cc_device_counters(&h->dev)->sequence_gaps, 4);
}

static void test_heartbeat_when_idle(void)
{
    harness_t *h = hx_setup();
    const hx_packet_t *p;
    hx_advance(h, 200000);
    CHECK_EQ(h->npackets, 0);   /* no heartbeats before a handshake */
    REQUIRE(hx_handshake(h, 0));
    hx_advance(h, CC_HEARTBEAT_INTERVAL_MS * 1000u - 1000u);
    CHECK_EQ(hx_count(h, CC_PKT_HEARTBEAT, HX_ANY_CALL), 0);
    hx_advance(h, 1000);
    CHECK_EQ(hx_count(h, CC_PKT_HEARTBEAT, HX_ANY_CALL), 1);
    p = hx_find(h, CC_PKT_HEARTBEAT, HX_ANY_CALL);
    REQUIRE(p != NULL);
    CHECK_EQ(p->call_id, 0);
    CHECK_EQ(p->payload_len, 0);
    CHECK_EQ(p->sequence, 1);   /* the handshake response was 0 */
    /* the host keeps the link alive: one heartbeat per interval */
    hx_clear(h);
    hx_advance_alive(h, 1000000);
    CHECK_EQ(hx_count(h, CC_PKT_HEARTBEAT, HX_ANY_CALL), 1000u / CC_HEARTBEAT_INTERVAL_MS);
    CHECK(cc_device_session_active(&h->dev));
}

/* PROTOCOL.md §8 (v1.2): the heartbeat interval counts from when the tx buffer has drained. While a frame
 * waits for a slow UART no heartbeat queues behind it, so a long frame is followed by one heartbeat an
 * interval after it has left, not by one per interval it took (3 behind a 170 ms frame at 9600 baud). */
static void test_heartbeat_counts_from_the_line_draining(void)
{
    harness_t *h = hx_setup();
    uint64_t interval = CC_HEARTBEAT_INTERVAL_MS * 1000u;
    REQUIRE(hx_handshake(h, 0));
    hx_advance(h, interval);
    REQUIRE(hx_count(h, CC_PKT_HEARTBEAT, HX_ANY_CALL) == 1u);   /* the line idle: one per interval */
    hx_clear(h);
    h->tx_blocked = true;   /* the UART takes nothing: the next heartbeat waits in the tx buffer */
    hx_heartbeat(h);
    hx_advance(h, interval / 2u);
    hx_heartbeat(h);
    hx_advance(h, interval / 2u);
    hx_heartbeat(h);
    hx_advance(h, interval / 2u);
    hx_heartbeat(h);
    hx_advance(h, interval / 2u);
    REQUIRE(cc_device_session_active(&h->dev));
    CHECK_EQ(h->npackets, 0);
    CHECK(h->dev.link.tx_tail - h->dev.link.tx_head <= 16u);   /* one heartbeat, not one per interval */
    h->tx_blocked = false;
    hx_heartbeat(h);
    hx_advance(h, 1000u);
    CHECK_EQ(hx_count(h, CC_PKT_HEARTBEAT, HX_ANY_CALL), 1u);
    hx_advance(h, interval - 2000u);
    CHECK_EQ(hx_count(h, CC_PKT_HEARTBEAT, HX_ANY_CALL), 1u);   /* counted from the drain */
    hx_advance(h, 2000u);
    CHECK_EQ(hx_count(h, CC_PKT_HEARTBEAT, HX_ANY_CALL), 2u);
}

/* PROTOCOL.md §8 (v1.2): behind a frame that takes several intervals to leave (a Ping's echo held 3 intervals,
 * then over a line of 1 byte/ms, about 9600 baud) exactly one heartbeat comes right behind it, and the next one an interval after
 * the buffer has drained: not one per interval it took. */
static void test_one_heartbeat_behind_a_long_frame(void)
{
    harness_t *h = hx_setup();
    Cameracontrol__V1__PingRequest req = CAMERACONTROL__V1__PING_REQUEST__INIT;
    static uint8_t payload[CC_MAX_FRAME_BYTES - 64u];
    uint64_t interval = CC_HEARTBEAT_INTERVAL_MS * 1000u;
    const hx_packet_t *echo = NULL;
    size_t i, at = 0;
    uint64_t start;
    REQUIRE(hx_handshake(h, 0));
    memset(payload, 0x55, sizeof(payload));
    req.payload.data = payload;
    req.payload.len = sizeof(payload);
    hx_heartbeat(h);
    hx_poll(h);
    hx_clear(h);
    h->tx_per_ms = 1;
    h->tx_blocked = true;   /* the echo waits 3 intervals, then leaves at 1 byte/ms (in a 128-byte build too) */
    start = h->now_us;
    hx_request(h, 7u, CC_SERVICE_DEVICE_SERVICE, CC_METHOD_DEVICE_SERVICE_PING, &req.base);
    hx_advance_alive(h, 3u * interval);
    h->tx_blocked = false;
    hx_advance_alive(h, sizeof(payload) * 1000u + 5u * interval);
    for (i = 0; i < h->npackets && echo == NULL; i++) {
        if (h->packets[i].type == CC_PKT_RESPONSE && h->packets[i].call_id == 7u) {
            echo = &h->packets[i];
            at = i;
        }
    }
    REQUIRE(echo != NULL);
    REQUIRE(echo->received_us - start >= 2u * interval);   /* it took intervals to leave */
    for (i = 0; i < at; i++) {
        CHECK(h->packets[i].type != CC_PKT_HEARTBEAT);   /* none between the request and its echo */
    }
    REQUIRE(at + 2u < h->npackets);
    CHECK_EQ(h->packets[at + 1u].type, CC_PKT_HEARTBEAT);   /* one right behind it */
    CHECK(h->packets[at + 1u].received_us - echo->received_us <= 20000u);
    CHECK_EQ(h->packets[at + 2u].type, CC_PKT_HEARTBEAT);   /* the next an interval after the drain */
    CHECK(h->packets[at + 2u].received_us - h->packets[at + 1u].received_us >= interval - 1000u);
}

static void test_link_dead_after_silence(void)
{
    harness_t *h = hx_setup();
    uint64_t dead_after = (uint64_t)CC_HEARTBEAT_INTERVAL_MS * 1000u * CC_WIRE_DEAD_AFTER_HEARTBEATS;
    REQUIRE(hx_handshake(h, 0));
    open_event_stream(h, 9);
    CHECK_EQ(cc_device_calls_in_flight(&h->dev), 1);
    hx_clear(h);
    hx_advance(h, dead_after - 2000u);
    CHECK(cc_device_session_active(&h->dev));
    hx_advance(h, 3000u);
    CHECK(!cc_device_session_active(&h->dev));
    CHECK_EQ(cc_device_counters(&h->dev)->heartbeat_timeouts, 1);
    CHECK_EQ(cc_device_calls_in_flight(&h->dev), 0);
    CHECK_EQ(hx_count(h, CC_PKT_ERROR, HX_ANY_CALL), 0);        /* ended silently */
    CHECK_EQ(hx_count(h, CC_PKT_STREAM_END, HX_ANY_CALL), 0);
    /* heartbeats stop until the next handshake */
    hx_clear(h);
    hx_advance(h, 500000);
    CHECK_EQ(h->npackets, 0);
    CHECK_EQ(cc_device_counters(&h->dev)->heartbeat_timeouts, 1);
    /* calls need a handshake again */
    hx_request(h, 10, CC_SERVICE_DEVICE_SERVICE, CC_METHOD_DEVICE_SERVICE_PING, NULL);
    hx_poll(h);
    REQUIRE(hx_find(h, CC_PKT_ERROR, 10) != NULL);
    CHECK_EQ(hx_find(h, CC_PKT_ERROR, 10)->status, CC_STATUS_FAILED_PRECONDITION);
    REQUIRE(hx_handshake(h, 0));
    CHECK(cc_device_session_active(&h->dev));
}

/* A simulator catching up after a stall (cc_device_note_stall): the step it catches up does not count as
 * host silence, the silence before and after it does, and a stall as long as the dead timeout gives no
 * credit. */
static void test_link_stall_credit(void)
{
    harness_t *h = hx_setup();
    uint64_t dead_after = (uint64_t)CC_HEARTBEAT_INTERVAL_MS * 1000u * CC_WIRE_DEAD_AFTER_HEARTBEATS;
    REQUIRE(hx_handshake(h, 0));
    hx_advance(h, dead_after / 2u);                       /* half the dead time of real silence */
    cc_device_note_stall(&h->dev, h->now_us, 20000u, 5000u);
    hx_advance(h, 5000u);                                 /* the credited step */
    hx_advance(h, dead_after / 2u - 2000u);               /* still alive: 2 ms of silence left */
    CHECK(cc_device_session_active(&h->dev));
    hx_advance(h, 3000u);
    CHECK(!cc_device_session_active(&h->dev));            /* the silence before the stall counted */
    CHECK_EQ(cc_device_counters(&h->dev)->heartbeat_timeouts, 1);
    /* a stall as long as the dead timeout: the host gave up too, no credit */
    REQUIRE(hx_handshake(h, 0));
    hx_advance(h, dead_after - 4000u);
    cc_device_note_stall(&h->dev, h->now_us, dead_after, 5000u);
    hx_advance(h, 5000u);
    CHECK(!cc_device_session_active(&h->dev));
    CHECK_EQ(cc_device_counters(&h->dev)->heartbeat_timeouts, 2);
}

/* PROTOCOL.md §8 (v1.2): the host cannot answer a HandshakeResponse it has
 * not received. On a slow line the response takes longer than the dead
 * timeout to leave (a 330-byte response is 344 ms at 9600 baud), so the
 * device counts the silence from when it has left, not from the handshake. */
static void test_silence_counts_from_the_handshake_response_leaving(void)
{
    harness_t *h = hx_setup();
    uint64_t dead_after = (uint64_t)CC_HEARTBEAT_INTERVAL_MS * 1000u * CC_WIRE_DEAD_AFTER_HEARTBEATS;
    Cameracontrol__V1__HandshakeRequest req = CAMERACONTROL__V1__HANDSHAKE_REQUEST__INIT;
    Cameracontrol__V1__ProtocolVersion v = CAMERACONTROL__V1__PROTOCOL_VERSION__INIT;
    v.major = 1u;
    v.minor = 2u;
    req.host_version = &v;
    req.host_name = "slow line";
    h->tx_blocked = true;   /* the UART takes nothing: the response waits */
    hx_request(h, 1u, CC_SERVICE_DEVICE_SERVICE, CC_METHOD_DEVICE_SERVICE_HANDSHAKE, &req.base);
    hx_poll(h);
    REQUIRE(cc_device_session_active(&h->dev));
    hx_advance(h, 3u * dead_after);
    CHECK(cc_device_session_active(&h->dev));   /* its answer has not left: no silence yet */
    CHECK_EQ(cc_device_counters(&h->dev)->heartbeat_timeouts, 0);
    CHECK(hx_find(h, CC_PKT_RESPONSE, 1u) == NULL);
    h->tx_blocked = false;
    hx_advance(h, 1000u);
    CHECK(hx_find(h, CC_PKT_RESPONSE, 1u) != NULL);
    hx_advance(h, dead_after - 3000u);
    CHECK(cc_device_session_active(&h->dev));   /* counted from the answer's departure */
    hx_advance(h, 4000u);
    CHECK(!cc_device_session_active(&h->dev));  /* and then the rule holds as ever */
    CHECK_EQ(cc_device_counters(&h->dev)->heartbeat_timeouts, 1);
}

/* PROTOCOL.md §8 (v1.2): a frame still arriving keeps the link alive (on a slow line one frame can take
 * longer than the dead timeout: 1,024 bytes are 1.07 s at 9600 baud). A frame that then fails its check
 * leaves the silence counted from the last valid frame, and bytes past the largest frame keep nothing. */
static void test_frame_still_arriving_keeps_the_link(void)
{
    harness_t *h = hx_setup();
    uint64_t dead_after = (uint64_t)CC_HEARTBEAT_INTERVAL_MS * 1000u * CC_WIRE_DEAD_AFTER_HEARTBEATS;
    uint8_t body[160];
    uint8_t wire[CC_FRAME_WIRE_BYTES(160)];
    uint8_t bad[sizeof wire];
    uint8_t garbage[64];
    cc_envelope_t env;
    size_t n, i, k, flipped = 0;
    uint32_t check_errors;

    REQUIRE(hx_handshake(h, 2));
    memset(&env, 0, sizeof env);
    env.type = CC_PKT_REQUEST;
    env.sequence = h->host_sequence++;
    env.call_id = 7u;
    env.service = CC_SERVICE_DEVICE_SERVICE;
    env.method = CC_METHOD_DEVICE_SERVICE_PING;
    n = cc_envelope_write(&env, body, sizeof body);
    body[n++] = 0x0Au;   /* PingRequest.payload, 100 bytes */
    body[n++] = 100u;
    memset(body + n, 0x55, 100u);
    n += 100u;
    k = cc_frame_encode(body, n, wire, sizeof wire);
    REQUIRE(k > 100u);

    /* A Ping whose frame takes three dead timeouts to arrive, a byte or two every 5 ms: answered, the
     * session kept all along. */
    for (i = 0; i + 1u < k; i += 2u) {
        hx_send_raw(h, wire + i, i + 3u <= k ? 2u : 1u);
        hx_advance(h, 3u * dead_after / (k / 2u));
        CHECK(cc_device_session_active(&h->dev));
    }
    hx_send_raw(h, wire + k - 1u, 1u);
    hx_poll(h);
    CHECK(hx_find(h, CC_PKT_RESPONSE, 7u) != NULL);
    CHECK(cc_device_session_active(&h->dev));
    CHECK_EQ(cc_device_counters(&h->dev)->heartbeat_timeouts, 0);

    /* The same frame with one payload byte changed, as slowly: alive while it arrives, and once it fails its
     * check the silence counts from the last valid frame (the Ping, long ago): the link is dead at once. */
    memcpy(bad, wire, k);
    for (i = k / 2u; i < k && flipped == 0u; i++) {
        if (bad[i] == 0x55u) {
            bad[i] = 0x54u;
            flipped = i;
        }
    }
    REQUIRE(flipped != 0u);
    check_errors = cc_device_counters(&h->dev)->check_errors;
    hx_clear(h);
    for (i = 0; i + 1u < k; i += 2u) {
        hx_send_raw(h, bad + i, i + 3u <= k ? 2u : 1u);
        hx_advance(h, 2u * dead_after / (k / 2u));
        CHECK(cc_device_session_active(&h->dev));
    }
    hx_send_raw(h, bad + k - 1u, 1u);
    hx_advance(h, 1000u);
    CHECK_EQ(cc_device_counters(&h->dev)->check_errors, check_errors + 1u);
    CHECK(!cc_device_session_active(&h->dev));
    CHECK_EQ(cc_device_counters(&h->dev)->heartbeat_timeouts, 1);
    CHECK(hx_find(h, CC_PKT_RESPONSE, 7u) == NULL);

    /* Bytes past the largest frame keep nothing: a run of non-zero bytes longer than any frame, still
     * arriving, does not hold off the dead timeout once it is over that size. */
    REQUIRE(hx_handshake(h, 2));
    memset(garbage, 0x41, sizeof garbage);
    for (i = 0; i < CC_FRAME_STUFFED_CAP + sizeof garbage; i += sizeof garbage) {
        hx_send_raw(h, garbage, sizeof garbage);
        hx_poll(h);
    }
    CHECK(cc_device_counters(&h->dev)->oversized_frames > 0u);
    for (i = 0; i < 2u * dead_after / 5000u && cc_device_session_active(&h->dev); i++) {
        hx_send_raw(h, garbage, 4u);
        hx_advance(h, 5000u);
    }
    CHECK(!cc_device_session_active(&h->dev));
    CHECK_EQ(cc_device_counters(&h->dev)->heartbeat_timeouts, 2);
}

/* PROTOCOL.md §8: frames that fail keep nothing alive, however the reads fall. A CRC-valid frame with a bad
 * envelope (a REQUEST on call id 0) is a whole frame, not one arriving; and garbage cut by delimiters, each
 * read ending inside its next "frame", never began while the link was alive. Both end the session. */
static void test_failed_frames_keep_nothing(void)
{
    harness_t *h = hx_setup();
    uint64_t dead_after = (uint64_t)CC_HEARTBEAT_INTERVAL_MS * 1000u * CC_WIRE_DEAD_AFTER_HEARTBEATS;
    uint8_t garbage[41];
    size_t i;

    REQUIRE(hx_handshake(h, 2));
    for (i = 0; i < 5u * dead_after / 20000u; i++) {
        hx_send_packet(h, CC_PKT_REQUEST, 0, 0u, CC_SERVICE_DEVICE_SERVICE, CC_METHOD_DEVICE_SERVICE_PING, NULL, 0);
        hx_advance(h, 20000u);
    }
    CHECK(cc_device_counters(&h->dev)->envelope_errors >= 5u * dead_after / 20000u);
    CHECK(!cc_device_session_active(&h->dev));
    CHECK_EQ(cc_device_counters(&h->dev)->heartbeat_timeouts, 1);

    REQUIRE(hx_handshake(h, 2));
    memset(garbage, 0x41, sizeof garbage);
    garbage[30] = 0u;   /* each read: the end of one "frame", the start of the next */
    for (i = 0; i < 5u * dead_after / 10000u; i++) {
        hx_send_raw(h, garbage, sizeof garbage);
        hx_advance(h, 10000u);
    }
    CHECK(!cc_device_session_active(&h->dev));
    CHECK_EQ(cc_device_counters(&h->dev)->heartbeat_timeouts, 2);
}

static void test_error_counters(void)
{
    harness_t *h = hx_setup();
    uint8_t body[16] = {0x08, 0x00, 0x00, 0x00};
    uint8_t wire[64];
    uint8_t junk[CC_FRAME_STUFFED_CAP + 10u];
    size_t n;
    static const uint8_t short_frame_body[] = {0x08, 0x00, 0x00};
    memset(junk, 0x41, sizeof junk);
    /* bad check */
    n = cc_frame_encode(body, 4, wire, sizeof wire);
    wire[1] ^= 0x01u;
    hx_send_raw(h, wire, n);
    /* short: shorter than an envelope, with a valid check (v1.1: short_frames) */
    memcpy(body, short_frame_body, 3);
    n = cc_frame_encode(body, 3, wire, sizeof wire);
    hx_send_raw(h, wire, n);
    /* framing: not COBS (a block running past the end) */
    {
        static const uint8_t bad_cobs[] = {0x09, 0x41, 0x42, 0x00};
        hx_send_raw(h, bad_cobs, sizeof bad_cobs);
    }
    /* oversized */
    hx_send_raw(h, junk, sizeof junk);
    {
        static const uint8_t zero = 0;
        hx_send_raw(h, &zero, 1);
    }
    /* a good heartbeat afterwards is received */
    hx_heartbeat(h);
    hx_poll(h);
    CHECK_EQ(cc_device_counters(&h->dev)->check_errors, 1);
    CHECK_EQ(cc_device_counters(&h->dev)->framing_errors, 1);
    CHECK_EQ(cc_device_counters(&h->dev)->short_frames, 1);
    CHECK_EQ(cc_device_counters(&h->dev)->oversized_frames, 1);
    CHECK_EQ(cc_device_counters(&h->dev)->frames_received, 1);
    CHECK_EQ(cc_device_counters(&h->dev)->bytes_received, h->rx_total);
    CHECK_EQ(h->npackets, 0);   /* nothing is answered */
}

static void test_request_split_at_every_byte_boundary(void)
{
    harness_t *h;
    uint8_t wire[64];
    size_t n;
    size_t split;
    /* a ping request, framed once */
    h = hx_setup();
    REQUIRE(hx_handshake(h, 0));
    h->rx_len = 0;
    hx_request(h, 77, CC_SERVICE_DEVICE_SERVICE, CC_METHOD_DEVICE_SERVICE_PING, NULL);
    n = h->rx_len;
    REQUIRE(n <= sizeof wire);
    memcpy(wire, h->rx, n);
    h->rx_len = 0;
    for (split = 0; split <= n; split++) {
        h = hx_setup();
        REQUIRE(hx_handshake(h, 0));
        hx_send_raw(h, wire, split);
        hx_poll(h);
        CHECK(hx_find(h, CC_PKT_RESPONSE, 77) == NULL || split == n);
        hx_send_raw(h, wire + split, n - split);
        hx_poll(h);
        CHECK_EQ(hx_count(h, CC_PKT_RESPONSE, 77), 1);
        CHECK_EQ(cc_device_counters(&h->dev)->framing_errors + cc_device_counters(&h->dev)->check_errors, 0);
    }
}

static void test_requests_in_random_splits(void)
{
    harness_t *h = hx_setup();
    uint32_t i;
    REQUIRE(hx_handshake(h, 0));
    h->rx_split_seed = 4242u;   /* the UART hands over 1..17 bytes at a time */
    for (i = 0; i < 50u; i++) {
        Cameracontrol__V1__PingRequest req = CAMERACONTROL__V1__PING_REQUEST__INIT;
        uint8_t data[40];
        size_t k;
        for (k = 0; k < sizeof data; k++) {
            data[k] = (uint8_t)((i * 7u + k) % 3u == 0u ? 0u : k + i);   /* zeros to stuff */
        }
        req.payload.data = data;
        req.payload.len = i % sizeof data;
        hx_request(h, 300u + i, CC_SERVICE_DEVICE_SERVICE, CC_METHOD_DEVICE_SERVICE_PING, &req.base);
    }
    /* The device reads until the UART is empty or its tx buffer lacks room for
     * another full reply (backpressure: it never drops an answer); a few polls
     * answer all 50. */
    for (i = 0; i < 20u && h->rx_len != 0u; i++) {
        cc_device_poll(&h->dev);
    }
    cc_device_poll(&h->dev);
    CHECK_EQ(h->rx_len, 0);
    CHECK_EQ(hx_count(h, CC_PKT_RESPONSE, HX_ANY_CALL), 50);
    CHECK_EQ(cc_device_counters(&h->dev)->tx_dropped, 0);
    for (i = 0; i < 50u && i < h->npackets; i++) {
        Cameracontrol__V1__PingResponse *resp;
        CHECK_EQ(h->packets[i].call_id, 300u + i);
        resp = cameracontrol__v1__ping_response__unpack(NULL, h->packets[i].payload_len, h->packets[i].payload);
        REQUIRE(resp != NULL);
        CHECK_EQ(resp->payload.len, i % 40u);
        cameracontrol__v1__ping_response__free_unpacked(resp, NULL);
    }
    CHECK_EQ(cc_device_counters(&h->dev)->framing_errors + cc_device_counters(&h->dev)->check_errors, 0);
}

static void test_tx_accounting_and_blocked_uart(void)
{
    harness_t *h = hx_setup();
    size_t before;
    REQUIRE(hx_handshake(h, 0));
    CHECK_EQ(cc_device_counters(&h->dev)->bytes_sent, h->tx_bytes);
    CHECK(cc_device_counters(&h->dev)->frames_sent >= 1u);
    /* a UART that takes nothing: bytes wait in the tx buffer, then go out in order */
    h->tx_blocked = true;
    hx_request(h, 80, CC_SERVICE_DEVICE_SERVICE, CC_METHOD_DEVICE_SERVICE_PING, NULL);
    hx_poll(h);
    CHECK_EQ(h->npackets, 0);
    before = h->tx_bytes;
    h->tx_blocked = false;
    hx_poll(h);
    CHECK(h->tx_bytes > before);
    CHECK_EQ(hx_count(h, CC_PKT_RESPONSE, 80), 1);
    CHECK_EQ(cc_device_counters(&h->dev)->bytes_sent, h->tx_bytes);
    CHECK_EQ(h->host_decode_errors, 0);
}

static void test_slow_uart_keeps_frames_intact(void)
{
    harness_t *h = hx_setup();
    uint32_t i;
    REQUIRE(hx_handshake(h, 0));
    h->tx_limit = 3;   /* the UART takes 3 bytes per poll */
    for (i = 0; i < 20u; i++) {
        hx_request(h, 100u + i, CC_SERVICE_DEVICE_SERVICE, CC_METHOD_DEVICE_SERVICE_PING, NULL);
    }
    for (i = 0; i < 400u; i++) {
        hx_poll(h);
    }
    CHECK_EQ(hx_count(h, CC_PKT_RESPONSE, HX_ANY_CALL), 20);
    for (i = 0; i < 20u && i < h->npackets; i++) {
        CHECK_EQ(h->packets[i].call_id, 100u + i);   /* in order */
    }
    CHECK_EQ(h->host_decode_errors, 0);
    CHECK_EQ(cc_device_counters(&h->dev)->tx_dropped, 0);
}

static void test_tx_buffer_compaction(void)
{
    harness_t *h = hx_setup();
    uint32_t i;
    uint32_t id = 1000;
    REQUIRE(hx_handshake(h, 0));
    h->tx_limit = 16;
    for (i = 0; i < 100u; i++) {
        hx_request(h, id++, CC_SERVICE_DEVICE_SERVICE, CC_METHOD_DEVICE_SERVICE_PING, NULL);
    }
    hx_poll(h);
    for (i = 0; i < 50u; i++) {
        hx_poll(h);   /* drain part of it: the pending bytes no longer start at 0 */
    }
    CHECK(h->dev.link.tx_head > 0u);
    for (i = 0; i < 100u; i++) {
        hx_request(h, id++, CC_SERVICE_DEVICE_SERVICE, CC_METHOD_DEVICE_SERVICE_PING, NULL);
    }
    for (i = 0; i < 1000u; i++) {
        hx_poll(h);
    }
    CHECK_EQ(cc_device_counters(&h->dev)->tx_dropped, 0);
    CHECK_EQ(hx_count(h, CC_PKT_RESPONSE, HX_ANY_CALL), 200);
    for (i = 0; i < h->npackets; i++) {
        CHECK_EQ(h->packets[i].call_id, 1000u + i);
    }
    CHECK_EQ(h->host_decode_errors, 0);
}

static uint32_t fuzz_state;
static uint32_t fuzz_next(void)
{
    fuzz_state = fuzz_state * 1103515245u + 12345u;
    return fuzz_state >> 8;
}

static void test_random_input_never_breaks_the_device(void)
{
    harness_t *h = hx_setup();
    unsigned round;
    fuzz_state = 777u;
    REQUIRE(hx_handshake(h, 0));
    for (round = 0; round < 3000u; round++) {
        uint8_t payload[300];
        size_t len = fuzz_next() % sizeof payload;
        size_t i;
        for (i = 0; i < len; i++) {
            payload[i] = (uint8_t)fuzz_next();
        }
        switch (fuzz_next() % 3u) {
        case 0:   /* raw garbage, sometimes with delimiters */
            hx_send_raw(h, payload, len);
            break;
        case 1:   /* a well-framed packet of any type with any ids and payload */
            hx_send_packet_seq(h, (uint16_t)fuzz_next(), (uint8_t)(fuzz_next() % 16u),
                               (uint8_t)(fuzz_next() & 0xF0u), fuzz_next() % 20u, (uint8_t)(fuzz_next() % 8u),
                               (uint8_t)(fuzz_next() % 4u), payload, len % 120u);
            break;
        default:  /* a request to a real method with a random payload */
            hx_send_packet(h, CC_PKT_REQUEST, 0, 1u + fuzz_next() % 30u, (uint8_t)(1u + fuzz_next() % 6u),
                           (uint8_t)(1u + fuzz_next() % 3u), payload, len % 100u);
            break;
        }
        h->now_us += 1000u;
        hx_poll(h);
        if (h->npackets > HX_MAX_PACKETS - 64u) {
            hx_clear(h);
        }
    }
    CHECK_EQ(h->host_decode_errors, 0);   /* whatever came in, what goes out is well-formed */
    /* still a working device */
    {
        static const uint8_t zero = 0;
        hx_send_raw(h, &zero, 1);
    }
    hx_clear(h);
    cc_device_set_extension(&h->dev, NULL, NULL, false);
    REQUIRE(hx_handshake(h, 0));
    hx_request(h, 99, CC_SERVICE_DEVICE_SERVICE, CC_METHOD_DEVICE_SERVICE_PING, NULL);
    hx_poll(h);
    CHECK(hx_find(h, CC_PKT_RESPONSE, 99) != NULL);
    CHECK(cc_device_counters(&h->dev)->framing_errors + cc_device_counters(&h->dev)->check_errors > 0u);
}

static void test_device_plays_its_own_click(void)
{
    harness_t *h = hx_setup();
    /* the full-press switch pressed: FULL_PRESS_DOWN without any host */
    h->buttons = CC_BUTTON_SHUTTER_SWITCH;
    hx_advance(h, 20000);
    CHECK(h->haptic_calls >= 1u);
    CHECK_EQ(h->last_haptic_pattern, CAMERACONTROL__V1__HAPTIC_PATTERN__HAPTIC_PATTERN_CLICK);
    h->buttons = 0;
    hx_advance(h, 20000);
    CHECK_EQ(h->last_haptic_pattern, CAMERACONTROL__V1__HAPTIC_PATTERN__HAPTIC_PATTERN_RELEASE);
    CHECK_EQ(h->npackets, 0);
}

/* ---- priority: reliable and control packets before raw sample batches ---- */

#define PRIO_EVENTS_CALL 5u
#define PRIO_RAW_CALL 6u
/* The largest raw batch frame on the wire: envelope, batch fields, records, check. */
#define PRIO_RAW_FRAME_MAX \
    CC_FRAME_WIRE_BYTES(CC_WIRE_MAX_ENVELOPE_BYTES + 24u + CC_RAW_MAX_SAMPLES_PER_BATCH * 4u + CC_WIRE_CHECK_BYTES)

/* An event stream and a raw stream of full batches over a line of 1 byte/ms
 * (about 10 000 baud, a 1 kHz stream needs ~5): after 500 ms the bulk queue
 * is backed up and batches are being dropped. */
static bool start_saturating_raw_stream(harness_t *h)
{
    Cameracontrol__V1__StreamRawSamplesRequest req = CAMERACONTROL__V1__STREAM_RAW_SAMPLES_REQUEST__INIT;
    unsigned ms;
    if (!hx_handshake(h, 0)) {
        return false;
    }
    open_event_stream(h, PRIO_EVENTS_CALL);
    /* the most a frame holds: 32, fewer in a 128-byte build (more is refused, v1.1) */
    req.samples_per_batch = CC_MAX_FRAME_BYTES >= 256u ? CC_RAW_MAX_SAMPLES_PER_BATCH : 23u;
    hx_request(h, PRIO_RAW_CALL, CC_SERVICE_INPUT_SERVICE, CC_METHOD_INPUT_SERVICE_STREAM_RAW_SAMPLES, &req.base);
    hx_poll(h);
    h->tx_per_ms = 1;
    h->reading.touched = true;   /* a finger resting on the strip: samples vary, no events */
    h->reading.position = 200;
    hx_advance_alive(h, 500000);
    /* the queue is full but for the moments after a frame has left it, until the next batch (32 ms) */
    for (ms = 0; ms < 100u && cc_link_bulk_free(&h->dev.link) >= PRIO_RAW_FRAME_MAX; ms++) {
        if (ms % 20u == 0u) {
            hx_heartbeat(h);
        }
        hx_advance(h, 1000u);
    }
    return cc_device_counters(&h->dev)->tx_dropped > 0u && cc_link_bulk_free(&h->dev.link) < PRIO_RAW_FRAME_MAX;
}

static size_t find_reliable_event(const harness_t *h, size_t from)
{
    size_t i;
    for (i = from; i < h->npackets; i++) {
        if (h->packets[i].call_id == PRIO_EVENTS_CALL && (h->packets[i].flags & CC_WIRE_FLAG_RELIABLE) != 0u) {
            return i;
        }
    }
    return h->npackets;
}

static void test_reliable_event_waits_for_one_raw_frame_at_most(void)
{
    harness_t *h = hx_setup();
    Cameracontrol__V1__InputEvent *ev;
    const hx_packet_t *p;
    uint32_t retransmissions;
    size_t at;
    size_t i;
    size_t raw_before = 0;
    unsigned ms;

    REQUIRE(start_saturating_raw_stream(h));
    hx_clear(h);
    retransmissions = cc_device_counters(&h->dev)->retransmissions;
    h->buttons = CC_BUTTON_VOLUME_UP;
    for (ms = 0; ms < 400u && find_reliable_event(h, 0) == h->npackets; ms++) {
        if (ms % 20u == 0u) {
            hx_heartbeat(h);
        }
        hx_advance(h, 1000);
    }
    at = find_reliable_event(h, 0);
    REQUIRE(at < h->npackets);
    p = &h->packets[at];
    ev = cameracontrol__v1__input_event__unpack(NULL, p->payload_len, p->payload);
    REQUIRE(ev != NULL);
    CHECK_EQ(ev->kind, CAMERACONTROL__V1__INPUT_EVENT_KIND__INPUT_EVENT_KIND_BUTTON_DOWN);
    for (i = 0; i < at; i++) {
        if (h->packets[i].call_id == PRIO_RAW_CALL && h->packets[i].received_us > ev->timestamp_us) {
            raw_before++;   /* finished after the event was queued */
        }
    }
    CHECK(raw_before <= 1u);   /* only the frame already on the line */
    /* the line time of one raw frame and the event's own frame (< 64 bytes; plus a heartbeat or ACK) */
    CHECK(p->received_us - ev->timestamp_us <= (PRIO_RAW_FRAME_MAX + 64u + 16u) * 1000u);
    /* no copy queued behind the first while it waited */
    CHECK_EQ(cc_device_counters(&h->dev)->retransmissions, retransmissions);
    CHECK_EQ(h->host_decode_errors, 0);
    cameracontrol__v1__input_event__free_unpacked(ev, NULL);
}

static void test_bulk_keeps_sequence_order(void)
{
    harness_t *h = hx_setup();
    size_t i;
    size_t raw = 0;
    size_t events = 0;
    uint16_t expected;
    uint32_t dropped_before = 0;
    Cameracontrol__V1__RawSampleBatch *b;

    REQUIRE(start_saturating_raw_stream(h));
    hx_clear(h);
    h->buttons = CC_BUTTON_VOLUME_UP;
    hx_advance_alive(h, 200000);
    h->buttons = 0;
    hx_advance_alive(h, 200000);
    REQUIRE(h->npackets > 0u);
    expected = h->packets[0].sequence;
    for (i = 0; i < h->npackets; i++) {
        const hx_packet_t *p = &h->packets[i];
        if (p->sequence == expected) {
            expected++;
        } else {
            /* only a retransmission may come out of order, and only an older number */
            CHECK(p->flags & CC_WIRE_FLAG_RELIABLE);
            CHECK((uint16_t)(expected - 1u - p->sequence) < CC_WIRE_SEQUENCE_HALF_RANGE);
        }
        if (p->call_id == PRIO_EVENTS_CALL) {
            events++;
        } else if (p->call_id == PRIO_RAW_CALL) {
            raw++;
            b = cameracontrol__v1__raw_sample_batch__unpack(NULL, p->payload_len, p->payload);
            REQUIRE(b != NULL);
            dropped_before += b->dropped_before;
            cameracontrol__v1__raw_sample_batch__free_unpacked(b, NULL);
        }
    }
    CHECK(events >= 2u);          /* BUTTON_DOWN and BUTTON_UP (and retransmissions) */
    CHECK(raw > 0u);              /* the stream goes on at what the line carries */
    CHECK(dropped_before > 0u);   /* and says what it dropped */
    CHECK_EQ(h->host_decode_errors, 0);
}

static void test_new_session_discards_queued_bulk(void)
{
    harness_t *h = hx_setup();
    size_t i;
    REQUIRE(start_saturating_raw_stream(h));
    h->tx_per_ms = 0;
    REQUIRE(hx_handshake(h, 0));   /* ends the raw call: its queued batches are not sent */
    CHECK_EQ(cc_link_bulk_free(&h->dev.link), CC_TX_BULK_BYTES);
    hx_advance_alive(h, 100000);
    for (i = 0; i < h->npackets; i++) {
        CHECK(h->packets[i].call_id != PRIO_RAW_CALL);
    }
    CHECK_EQ(h->host_decode_errors, 0);
}

/* Entries of call_id waiting in the device's bulk queue (each a u16 LE body length and the body). */
static size_t queued_bulk_of(const cc_link_t *link, uint32_t call_id)
{
    size_t pos = link->bulk_head;
    size_t n = 0;
    while (pos < link->bulk_tail) {
        size_t len = (size_t)link->bulk_buf[pos] | ((size_t)link->bulk_buf[pos + 1u] << 8);
        cc_envelope_t env;
        if (cc_envelope_parse(link->bulk_buf + pos + CC_LINK_BULK_LENGTH_BYTES, len, &env) == CC_ENVELOPE_OK
            && env.call_id == call_id) {
            n++;
        }
        pos += CC_LINK_BULK_LENGTH_BYTES + len;
    }
    return n;
}

/* A call id whose varint begins with PRIO_RAW_CALL's byte (0x86 0x01 after 0x06): the purge must
 * compare whole call ids, not their first byte. */
#define PRIO_RAW_CALL_2 (PRIO_RAW_CALL + 128u)

/* PROTOCOL.md §7: after a CANCEL the device sends nothing more for the call. Its batches still in the
 * bulk queue are forgotten with it (on a slow line they took hundreds of milliseconds to drain); the
 * frame already started goes out whole. Another raw stream's batches stay, in order, and the
 * sequence numbers have no gap (a bulk packet is numbered only when it starts). */
static void test_cancel_forgets_queued_bulk(void)
{
    harness_t *h = hx_setup();
    Cameracontrol__V1__StreamRawSamplesRequest req = CAMERACONTROL__V1__STREAM_RAW_SAMPLES_REQUEST__INIT;
    size_t i;
    size_t late = 0;
    size_t other = 0;
    uint16_t expected;

    REQUIRE(start_saturating_raw_stream(h));
    req.samples_per_batch = 5;
    hx_request(h, PRIO_RAW_CALL_2, CC_SERVICE_INPUT_SERVICE, CC_METHOD_INPUT_SERVICE_STREAM_RAW_SAMPLES, &req.base);
    hx_poll(h);
    hx_advance_alive(h, 200000);
    REQUIRE(queued_bulk_of(&h->dev.link, PRIO_RAW_CALL) > 0u);     /* both streams wait in the queue */
    REQUIRE(queued_bulk_of(&h->dev.link, PRIO_RAW_CALL_2) > 0u);
    hx_clear(h);
    hx_cancel(h, PRIO_RAW_CALL);
    hx_poll(h);
    CHECK_EQ(queued_bulk_of(&h->dev.link, PRIO_RAW_CALL), 0);
    CHECK(queued_bulk_of(&h->dev.link, PRIO_RAW_CALL_2) > 0u);
    hx_advance_alive(h, 400000);   /* longer than the whole queue takes at 1 byte/ms */
    REQUIRE(h->npackets > 0u);
    expected = h->packets[0].sequence;
    for (i = 0; i < h->npackets; i++) {
        const hx_packet_t *p = &h->packets[i];
        if (p->call_id == PRIO_RAW_CALL) {
            late++;
        } else if (p->call_id == PRIO_RAW_CALL_2) {
            other++;
        }
        if (p->sequence == expected) {
            expected++;
        } else {   /* only a retransmission, of an older number */
            CHECK(p->flags & CC_WIRE_FLAG_RELIABLE);
            CHECK((uint16_t)(expected - 1u - p->sequence) < CC_WIRE_SEQUENCE_HALF_RANGE);
        }
    }
    CHECK(late <= 1u);    /* at most the frame already on the line when the CANCEL came */
    CHECK(other > 0u);    /* the other stream goes on */
    CHECK_EQ(cc_device_counters(&h->dev)->cancelled_calls, 1);
    CHECK_EQ(h->host_decode_errors, 0);
}

/* The link alone: cc_link_forget_call takes exactly the call's bulk packets, whatever the length of
 * the call ids' varints, and keeps the others in their order. */
static void test_forget_call_takes_only_its_bulk_packets(void)
{
    static const uint32_t ids[] = {6u, 134u, 0x10000006u, 6u, 134u, 0x10000006u, 7u, 6u};
    static const uint32_t kept[] = {134u, 0x10000006u, 134u, 0x10000006u, 7u};
    cc_counters_t counters;
    cc_link_t link;
    cc_frame_decoder_t dec;
    cc_envelope_t env;
    size_t i;
    size_t k = 0;
    size_t len;
    const uint8_t *wire;

    memset(&counters, 0, sizeof counters);
    cc_link_init(&link, &counters, CC_HEARTBEAT_INTERVAL_MS);
    for (i = 0; i < sizeof ids / sizeof ids[0]; i++) {
        memset(cc_link_payload(&link), (int)(0x40u + i), 8u);
        REQUIRE(cc_link_send_bulk(&link, CC_PKT_STREAM_MESSAGE, ids[i], 8u, 0u) == CC_SEND_OK);
    }
    cc_link_forget_call(&link, 6u);
    CHECK_EQ(queued_bulk_of(&link, 6u), 0);
    CHECK_EQ(queued_bulk_of(&link, 134u), 2);
    CHECK_EQ(queued_bulk_of(&link, 0x10000006u), 2);
    cc_link_forget_call(&link, 42u);   /* no packet of its own: nothing changes */
    CHECK_EQ(cc_link_bulk_free(&link), CC_TX_BULK_BYTES - 5u * (CC_LINK_BULK_LENGTH_BYTES + 8u)
                                           - 2u * (cc_envelope_size_of(CC_PKT_STREAM_MESSAGE, 134u)
                                                   + cc_envelope_size_of(CC_PKT_STREAM_MESSAGE, 0x10000006u))
                                           - cc_envelope_size_of(CC_PKT_STREAM_MESSAGE, 7u));
    cc_frame_decoder_init(&dec);
    while ((wire = cc_link_tx_pending(&link, &len)) != NULL) {
        size_t j;
        for (j = 0; j < len; j++) {
            if (cc_frame_decoder_feed(&dec, wire[j]) == CC_FRAME_OK) {
                size_t body_len;
                const uint8_t *body = cc_frame_decoder_body(&dec, &body_len);
                REQUIRE(cc_envelope_parse(body, body_len, &env) == CC_ENVELOPE_OK);
                REQUIRE(k < sizeof kept / sizeof kept[0]);
                CHECK_EQ(env.call_id, kept[k]);
                CHECK_EQ(env.sequence, k);   /* numbered as they start: no gap */
                CHECK_EQ(env.payload_len, 8u);
                k++;
            }
        }
        cc_link_tx_consume(&link, len);
    }
    CHECK_EQ(k, sizeof kept / sizeof kept[0]);
}

const cc_test_case_t cc_tests_link[] = {
    {"reliable_event_retransmitted_until_ack", test_reliable_event_retransmitted_until_ack},
    {"retransmission_timeout_counts_from_the_copy_leaving", test_retransmission_timeout_counts_from_the_copy_leaving},
    {"retransmission_allowance_counts_from_the_copy_leaving", test_retransmission_allowance_counts_from_the_copy_leaving},
    {"retransmission_timeout_allows_for_a_slow_line", test_retransmission_timeout_allows_for_a_slow_line},
    {"reliable_gives_up_after_max_tries", test_reliable_gives_up_after_max_tries},
    {"cancel_stops_retransmission", test_cancel_stops_retransmission},
    {"reliable_slots_full_still_sends", test_reliable_slots_full_still_sends},
    {"best_effort_event_not_reliable", test_best_effort_event_not_reliable},
    {"reliable_request_acked_and_deduplicated", test_reliable_request_acked_and_deduplicated},
    {"duplicate_window", test_duplicate_window},
    {"duplicate_window_jumps", test_duplicate_window_jumps},
    {"sequence_gaps_counted", test_sequence_gaps_counted},
    {"heartbeat_when_idle", test_heartbeat_when_idle},
    {"heartbeat_counts_from_the_line_draining", test_heartbeat_counts_from_the_line_draining},
    {"one_heartbeat_behind_a_long_frame", test_one_heartbeat_behind_a_long_frame},
    {"link_dead_after_silence", test_link_dead_after_silence},
    {"link_stall_credit", test_link_stall_credit},
    {"silence_counts_from_the_handshake_response_leaving", test_silence_counts_from_the_handshake_response_leaving},
    {"frame_still_arriving_keeps_the_link", test_frame_still_arriving_keeps_the_link},
    {"failed_frames_keep_nothing", test_failed_frames_keep_nothing},
    {"error_counters", test_error_counters},
    {"request_split_at_every_byte_boundary", test_request_split_at_every_byte_boundary},
    {"requests_in_random_splits", test_requests_in_random_splits},
    {"tx_accounting_and_blocked_uart", test_tx_accounting_and_blocked_uart},
    {"slow_uart_keeps_frames_intact", test_slow_uart_keeps_frames_intact},
    {"tx_buffer_compaction", test_tx_buffer_compaction},
    {"random_input_never_breaks_the_device", test_random_input_never_breaks_the_device},
    {"device_plays_its_own_click", test_device_plays_its_own_click},
    {"reliable_event_waits_for_one_raw_frame_at_most", test_reliable_event_waits_for_one_raw_frame_at_most},
    {"bulk_keeps_sequence_order", test_bulk_keeps_sequence_order},
    {"new_session_discards_queued_bulk", test_new_session_discards_queued_bulk},
    {"cancel_forgets_queued_bulk", test_cancel_forgets_queued_bulk},
    {"forget_call_takes_only_its_bulk_packets", test_forget_call_takes_only_its_bulk_packets},
};
const size_t cc_tests_link_count = CC_TEST_COUNT(cc_tests_link);
