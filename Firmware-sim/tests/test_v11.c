/* Protocol v1.1 rules (docs/PROTOCOL.md; issue 9 and the spec questions of
 * issue 8): each test names the rule it pins and fails on a v1.0 core. */
#include <string.h>

#include "cc_cobs.h"
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

static size_t handshake_payload(uint8_t *out, uint32_t minor)
{
    Cameracontrol__V1__HandshakeRequest req = CAMERACONTROL__V1__HANDSHAKE_REQUEST__INIT;
    Cameracontrol__V1__ProtocolVersion v = CAMERACONTROL__V1__PROTOCOL_VERSION__INIT;
    v.major = 1;
    v.minor = minor;
    req.host_version = &v;
    return protobuf_c_message_pack(&req.base, out);
}

/* Issue 9 item 2, R2: a duplicated unary request (same sequence number) runs
 * once, whatever its flags. v1.0 dropped only reliable duplicates, so a
 * best-effort copy of PlayHaptic played twice. */
static void test_duplicate_best_effort_request_runs_once(void)
{
    harness_t *h = hx_setup();
    Cameracontrol__V1__PlayHapticRequest req = CAMERACONTROL__V1__PLAY_HAPTIC_REQUEST__INIT;
    uint8_t payload[16];
    size_t len;
    uint16_t seq;
    REQUIRE(hx_handshake(h, 1));
    req.pattern = CAMERACONTROL__V1__HAPTIC_PATTERN__HAPTIC_PATTERN_CLICK;
    len = protobuf_c_message_pack(&req.base, payload);
    seq = h->host_sequence;
    hx_send_packet_seq(h, seq, CC_PKT_REQUEST, 0, 9, CC_SERVICE_FEEDBACK_SERVICE,
                       CC_METHOD_FEEDBACK_SERVICE_PLAY_HAPTIC, payload, len);
    hx_send_packet_seq(h, seq, CC_PKT_REQUEST, 0, 9, CC_SERVICE_FEEDBACK_SERVICE,
                       CC_METHOD_FEEDBACK_SERVICE_PLAY_HAPTIC, payload, len);
    h->host_sequence = (uint16_t)(seq + 1u);
    hx_poll(h);
    CHECK_EQ(h->haptic_calls, 1);
    CHECK_EQ(hx_count(h, CC_PKT_RESPONSE, 9), 1);
    CHECK_EQ(cc_device_counters(&h->dev)->duplicates_dropped, 1);
}

/* R1: a RESPONSE is reliable and retransmitted (same sequence) until ACKed;
 * an ERROR too. v1.0 sent both once, best-effort. */
static void test_response_and_error_are_reliable(void)
{
    harness_t *h = hx_setup();
    const hx_packet_t *p;
    uint16_t seq;
    REQUIRE(hx_handshake(h, 1));
    h->ack_replies = false;
    hx_request(h, 20, CC_SERVICE_DEVICE_SERVICE, CC_METHOD_DEVICE_SERVICE_PING, NULL);
    hx_request(h, 21, 9, 9, NULL);   /* no such service: ERROR UNIMPLEMENTED */
    hx_poll(h);
    p = hx_find(h, CC_PKT_RESPONSE, 20);
    REQUIRE(p != NULL);
    CHECK(p->flags & CC_WIRE_FLAG_RELIABLE);
    seq = p->sequence;
    p = hx_find(h, CC_PKT_ERROR, 21);
    REQUIRE(p != NULL);
    CHECK(p->flags & CC_WIRE_FLAG_RELIABLE);
    hx_clear(h);
    hx_heartbeat(h);
    hx_advance(h, 25000);
    p = hx_find(h, CC_PKT_RESPONSE, 20);
    REQUIRE(p != NULL);   /* not acknowledged: sent again */
    CHECK_EQ(p->sequence, seq);
    CHECK_EQ(hx_count(h, CC_PKT_ERROR, 21), 1);
    hx_ack(h, seq);
    hx_ack(h, hx_find(h, CC_PKT_ERROR, 21)->sequence);
    hx_poll(h);
    CHECK_EQ(cc_link_unacked(&h->dev.link), 0);
}

/* Issue 9 item 3, R4: a server stream is confirmed by an empty, reliable
 * RESPONSE on its call id before any STREAM_MESSAGE (sessions at minor >= 1);
 * a v1.0 session gets none (it would count it as unexpected). */
static void test_stream_open_is_confirmed(void)
{
    harness_t *h = hx_setup();
    size_t i;
    const hx_packet_t *p;
    REQUIRE(hx_handshake(h, 1));
    open_event_stream(h, 5);
    p = hx_find(h, CC_PKT_RESPONSE, 5);
    REQUIRE(p != NULL);
    CHECK_EQ(p->payload_len, 0);
    CHECK(p->flags & CC_WIRE_FLAG_RELIABLE);
    h->buttons = CC_BUTTON_VOLUME_UP;
    hx_advance_alive(h, 20000);
    for (i = 0; i < h->npackets && h->packets[i].call_id != 5u; i++) {
    }
    REQUIRE(i < h->npackets);
    CHECK_EQ(h->packets[i].type, CC_PKT_RESPONSE);   /* before the first message */
    CHECK(hx_find(h, CC_PKT_STREAM_MESSAGE, 5) != NULL);

    h = hx_setup();
    REQUIRE(hx_handshake(h, 0));
    open_event_stream(h, 5);
    CHECK(hx_find(h, CC_PKT_RESPONSE, 5) == NULL);
}

/* R6: bytes the UART's receive ring dropped are counted in rx_overruns. */
static void test_rx_overruns_counted(void)
{
    harness_t *h = hx_setup();
    h->overruns = 37;
    hx_heartbeat(h);
    hx_poll(h);
    CHECK_EQ(cc_device_counters(&h->dev)->rx_overruns, 37);
}

/* R5 (device side): a retransmission of the handshake that started the
 * session (same sequence and call id, nothing newer since) is re-ACKed and
 * dropped; it does not start a second session that would renumber the
 * device's packets under the host's feet. */
static void test_retransmitted_handshake_runs_once(void)
{
    harness_t *h = hx_setup();
    uint8_t payload[32];
    size_t len = handshake_payload(payload, 1);
    uint32_t session;
    hx_send_packet_seq(h, 0, CC_PKT_REQUEST, CC_WIRE_FLAG_RELIABLE, 1, CC_SERVICE_DEVICE_SERVICE,
                       CC_METHOD_DEVICE_SERVICE_HANDSHAKE, payload, len);
    h->ack_replies = false;
    hx_poll(h);
    REQUIRE(hx_find(h, CC_PKT_RESPONSE, 1) != NULL);
    session = cc_device_session_id(&h->dev);
    hx_clear(h);
    hx_send_packet_seq(h, 0, CC_PKT_REQUEST, CC_WIRE_FLAG_RELIABLE, 1, CC_SERVICE_DEVICE_SERVICE,
                       CC_METHOD_DEVICE_SERVICE_HANDSHAKE, payload, len);
    hx_poll(h);
    CHECK_EQ(cc_device_session_id(&h->dev), session);
    CHECK_EQ(hx_count(h, CC_PKT_ACK, 0), 1);
    CHECK_EQ(cc_device_counters(&h->dev)->duplicates_dropped, 1);
    /* a fresh attempt (new call id, next sequence) is a new handshake */
    hx_send_packet_seq(h, 1, CC_PKT_REQUEST, CC_WIRE_FLAG_RELIABLE, 2, CC_SERVICE_DEVICE_SERVICE,
                       CC_METHOD_DEVICE_SERVICE_HANDSHAKE, payload, len);
    hx_poll(h);
    CHECK(hx_find(h, CC_PKT_RESPONSE, 2) != NULL);
    CHECK(cc_device_session_id(&h->dev) != session);
}

/* S6: a refused handshake leaves the running session alone: its calls and
 * its duplicate window go on. */
static void test_refused_handshake_keeps_session(void)
{
    harness_t *h = hx_setup();
    uint32_t session;
    REQUIRE(hx_handshake(h, 1));
    session = cc_device_session_id(&h->dev);
    open_event_stream(h, 5);
    hx_request(h, 6, CC_SERVICE_DEVICE_SERVICE, CC_METHOD_DEVICE_SERVICE_HANDSHAKE, NULL);   /* version 0.0 */
    hx_poll(h);
    REQUIRE(hx_find(h, CC_PKT_ERROR, 6) != NULL);
    CHECK_EQ(hx_find(h, CC_PKT_ERROR, 6)->status, CC_STATUS_FAILED_PRECONDITION);
    CHECK(cc_device_session_active(&h->dev));
    CHECK_EQ(cc_device_session_id(&h->dev), session);
    CHECK_EQ(cc_device_calls_in_flight(&h->dev), 1);
}

/* S1: a stuffed empty frame (01 00) and two delimiters in a row are empty
 * frames: counted in empty_frames, not framing errors. A run of 254
 * non-zero bytes at the end of a frame is accepted with or without the
 * trailing 01 code byte, and the encoder writes none. */
static void test_empty_frames_and_canonical_cobs(void)
{
    harness_t *h = hx_setup();
    static const uint8_t stuffed_empty[] = {0x01, 0x00, 0x00};
    uint8_t body[252];
    uint8_t wire[300];
    uint8_t decoded[300];
    size_t n;
    size_t out_len = 0;
    hx_send_raw(h, stuffed_empty, sizeof stuffed_empty);
    hx_poll(h);
    CHECK_EQ(cc_device_counters(&h->dev)->empty_frames, 2);
    CHECK_EQ(cc_device_counters(&h->dev)->framing_errors, 0);
    memset(body, 0x41, sizeof body);   /* + 2 check bytes (non-zero here or not: any) */
    n = cc_cobs_encode(body, 254 - 2, wire, sizeof wire);
    CHECK_EQ(n, 253);   /* 252 bytes: one block, no trailing code byte */
    memset(decoded, 0x42, 254);
    n = cc_cobs_encode(decoded, 254, wire, sizeof wire);
    CHECK_EQ(n, 255);   /* a full 254-byte run: 0xFF + 254, no trailing 0x01 */
    CHECK_EQ(wire[0], 0xFF);
    CHECK_EQ(cc_cobs_decode(wire, n, decoded, sizeof decoded, &out_len), 0);
    CHECK_EQ(out_len, 254);
    wire[n] = 0x01;   /* the non-canonical form */
    CHECK_EQ(cc_cobs_decode(wire, n + 1u, decoded, sizeof decoded, &out_len), 0);
    CHECK_EQ(out_len, 254);
}

/* S2 and S3: exactly one counter per bad frame, in the order COBS, length,
 * CRC, envelope; call id 0 on a call's type, an ACK without its payload and
 * an over-long varint are envelope errors; device-bound RESPONSE,
 * STREAM_MESSAGE, STREAM_END and ERROR are unexpected packets. */
static void test_counter_precedence_and_envelope_rules(void)
{
    harness_t *h = hx_setup();
    static const uint8_t short_body[] = {0x08, 0x00, 0x00};               /* 3 bytes before the check */
    static const uint8_t cancel_call_0[] = {0x05, 0x00, 0x00, 0x00};
    static const uint8_t ack_no_payload[] = {0x07, 0x00, 0x00, 0x00};
    static const uint8_t six_byte_varint[] = {0x08, 0x00, 0x00, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00};
    static const uint8_t non_minimal_heartbeat[] = {0x08, 0x09, 0x00, 0x80, 0x00};   /* call id 80 00 = 0 */
    uint8_t wire[64];
    size_t n;
    const cc_counters_t *c = cc_device_counters(&h->dev);
    REQUIRE(hx_handshake(h, 1));
    {   /* 3 bytes and a wrong check: counted short, once (the CRC is not looked at) */
        uint8_t raw[5];
        memcpy(raw, short_body, sizeof short_body);
        raw[3] = 0x12;
        raw[4] = 0x34;
        n = cc_cobs_encode(raw, sizeof raw, wire, sizeof wire - 1u);
        wire[n++] = 0x00;
        hx_send_raw(h, wire, n);
    }
    n = cc_frame_encode(cancel_call_0, sizeof cancel_call_0, wire, sizeof wire);
    hx_send_raw(h, wire, n);
    n = cc_frame_encode(ack_no_payload, sizeof ack_no_payload, wire, sizeof wire);
    hx_send_raw(h, wire, n);
    n = cc_frame_encode(six_byte_varint, sizeof six_byte_varint, wire, sizeof wire);
    hx_send_raw(h, wire, n);
    n = cc_frame_encode(non_minimal_heartbeat, sizeof non_minimal_heartbeat, wire, sizeof wire);
    hx_send_raw(h, wire, n);
    h->host_sequence = 10;
    hx_send_packet(h, CC_PKT_RESPONSE, 0, 3, 0, 0, NULL, 0);
    hx_send_packet(h, CC_PKT_STREAM_MESSAGE, 0, 3, 0, 0, NULL, 0);
    hx_send_packet(h, CC_PKT_ERROR, 0, 3, 0, 0, NULL, 0);
    hx_poll(h);
    CHECK_EQ(c->short_frames, 1);
    CHECK_EQ(c->check_errors, 0);
    CHECK_EQ(c->envelope_errors, 3);
    CHECK_EQ(c->framing_errors, 0);
    CHECK_EQ(c->unexpected_packets, 3);
    CHECK_EQ(hx_count(h, CC_PKT_ERROR, HX_ANY_CALL), 0);   /* none of them is answered */
}

/* S7: samples_per_batch outside 1..32 (0 means the default) is refused with
 * INVALID_ARGUMENT, not clamped. */
static void test_samples_per_batch_refused(void)
{
    harness_t *h = hx_setup();
    Cameracontrol__V1__StreamRawSamplesRequest req = CAMERACONTROL__V1__STREAM_RAW_SAMPLES_REQUEST__INIT;
    const hx_packet_t *p;
    REQUIRE(hx_handshake(h, 1));
    req.samples_per_batch = 33;
    hx_request(h, 4, CC_SERVICE_INPUT_SERVICE, CC_METHOD_INPUT_SERVICE_STREAM_RAW_SAMPLES, &req.base);
    hx_poll(h);
    p = hx_find(h, CC_PKT_ERROR, 4);
    REQUIRE(p != NULL);
    CHECK_EQ(p->status, CC_STATUS_INVALID_ARGUMENT);
    CHECK_EQ(cc_device_calls_in_flight(&h->dev), 0);
}

/* S6: before a handshake an unknown method also gets FAILED_PRECONDITION. */
static void test_unknown_method_before_handshake(void)
{
    harness_t *h = hx_setup();
    const hx_packet_t *p;
    hx_request(h, 3, 9, 9, NULL);
    hx_poll(h);
    p = hx_find(h, CC_PKT_ERROR, 3);
    REQUIRE(p != NULL);
    CHECK_EQ(p->status, CC_STATUS_FAILED_PRECONDITION);
}

const cc_test_case_t cc_tests_v11[] = {
    {"duplicate_best_effort_request_runs_once", test_duplicate_best_effort_request_runs_once},
    {"response_and_error_are_reliable", test_response_and_error_are_reliable},
    {"stream_open_is_confirmed", test_stream_open_is_confirmed},
    {"rx_overruns_counted", test_rx_overruns_counted},
    {"retransmitted_handshake_runs_once", test_retransmitted_handshake_runs_once},
    {"refused_handshake_keeps_session", test_refused_handshake_keeps_session},
    {"empty_frames_and_canonical_cobs", test_empty_frames_and_canonical_cobs},
    {"counter_precedence_and_envelope_rules", test_counter_precedence_and_envelope_rules},
    {"samples_per_batch_refused", test_samples_per_batch_refused},
    {"unknown_method_before_handshake", test_unknown_method_before_handshake},
};
const size_t cc_tests_v11_count = CC_TEST_COUNT(cc_tests_v11);
