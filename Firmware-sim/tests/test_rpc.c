/* Device-level tests: handshake, dispatch errors, the call table, cancel. */
#include <string.h>

#include "cc_ids.h"
#include "cc_test.h"
#include "cc_wire.h"
#include "harness.h"

static void send_handshake(harness_t *h, uint32_t call_id, uint32_t major, uint32_t minor)
{
    Cameracontrol__V1__HandshakeRequest req = CAMERACONTROL__V1__HANDSHAKE_REQUEST__INIT;
    Cameracontrol__V1__ProtocolVersion v = CAMERACONTROL__V1__PROTOCOL_VERSION__INIT;
    v.major = major;
    v.minor = minor;
    req.host_version = &v;
    req.host_name = "test host";
    hx_request(h, call_id, CC_SERVICE_DEVICE_SERVICE, CC_METHOD_DEVICE_SERVICE_HANDSHAKE, &req.base);
}

static void open_event_stream(harness_t *h, uint32_t call_id)
{
    Cameracontrol__V1__StreamInputEventsRequest req = CAMERACONTROL__V1__STREAM_INPUT_EVENTS_REQUEST__INIT;
    hx_request(h, call_id, CC_SERVICE_INPUT_SERVICE, CC_METHOD_INPUT_SERVICE_STREAM_INPUT_EVENTS, &req.base);
}

/* The generated writer writes Capabilities by a loop over its field numbers
 * (scripts/gen_c_codec.py, SCALAR_LOOP_MIN): the device's answer must be byte
 * for byte what protobuf-c packs for the same message (its fields in order,
 * zeros and empty lists left out, the lists packed). */
static bool handshake_repacks_identically(const hx_packet_t *p, const Cameracontrol__V1__HandshakeResponse *resp)
{
    uint8_t repacked[CC_MAX_FRAME_BYTES];
    size_t len;
    if (cameracontrol__v1__handshake_response__get_packed_size(resp) > sizeof repacked) {
        return false;
    }
    len = cameracontrol__v1__handshake_response__pack(resp, repacked);
    return len == p->payload_len && memcmp(repacked, p->payload, len) == 0;
}

static void test_handshake_answers_capabilities(void)
{
    harness_t *h = hx_setup();
    const hx_packet_t *p;
    Cameracontrol__V1__HandshakeResponse *resp;
    cc_device_set_extension(&h->dev, NULL, NULL, true);
    CHECK(!cc_device_session_active(&h->dev));
    send_handshake(h, 7, 1, 3);   /* a newer minor: the session runs at ours */
    hx_poll(h);
    p = hx_find(h, CC_PKT_RESPONSE, 7);
    REQUIRE(p != NULL);
    CHECK_EQ(p->sequence, 0);   /* the device's sequence restarts at the handshake */
    CHECK(cc_device_session_active(&h->dev));
    resp = cameracontrol__v1__handshake_response__unpack(NULL, p->payload_len, p->payload);
    REQUIRE(resp != NULL);
    REQUIRE(resp->device_version != NULL && resp->negotiated_version != NULL);
    CHECK_EQ(resp->device_version->major, CC_PROTOCOL_MAJOR);
    CHECK_EQ(resp->device_version->minor, CC_PROTOCOL_MINOR);
    CHECK_EQ(resp->negotiated_version->major, 1);
    CHECK_EQ(resp->negotiated_version->minor, CC_PROTOCOL_MINOR);
    CHECK_EQ(resp->device_time_us, h->now_us);
    CHECK(resp->session_id != 0u);
    CHECK_EQ(resp->session_id, cc_device_session_id(&h->dev));
    REQUIRE(resp->identity != NULL && resp->capabilities != NULL);
    CHECK(strcmp(resp->identity->vendor, "Test") == 0);
    CHECK(strcmp(resp->identity->serial_number, "0001") == 0);
    {
        const Cameracontrol__V1__Capabilities *c = resp->capabilities;
        CHECK_EQ(c->max_frame_bytes, CC_MAX_FRAME_BYTES);
        CHECK_EQ(c->max_concurrent_calls, CC_MAX_CONCURRENT_CALLS);
        CHECK_EQ(c->heartbeat_interval_ms, CC_HEARTBEAT_INTERVAL_MS);
        CHECK(c->is_simulator);
        CHECK(c->has_force_sensor && c->has_touch_sensor && c->has_slide_strip && c->supports_controls);
        CHECK_EQ(c->n_buttons, 2);
        CHECK_EQ(c->n_sample_rates_hz, 4);
        CHECK(c->n_sample_rates_hz == 4 && c->sample_rates_hz[0] == 100u && c->sample_rates_hz[3] == 1000u);
        CHECK_EQ(c->n_haptic_patterns, 4);
        CHECK(c->has_speaker && c->has_indicator_led);
        CHECK_EQ(c->force_max_mn, 8000);
        CHECK_EQ(c->slide_resolution, 1024);
        CHECK_EQ(c->max_controls, 6);
        CHECK_EQ(c->slide_length_um, 20000);
        CHECK(c->has_settings);
        REQUIRE(c->thresholds != NULL);
        CHECK_EQ(c->thresholds->full_press_on_mn, cc_device_config(&h->dev)->full_press_on_mn);
        CHECK_EQ(c->thresholds->light_press_on_mn, cc_device_config(&h->dev)->light_press_on_mn);
    }
    CHECK(handshake_repacks_identically(p, resp));   /* with feedback: haptic patterns, a speaker, an LED */
    cameracontrol__v1__handshake_response__free_unpacked(resp, NULL);
}

static void test_handshake_without_feedback_announces_none(void)
{
    harness_t *h = hx_setup_without_feedback();
    const hx_packet_t *p;
    Cameracontrol__V1__HandshakeResponse *resp;
    send_handshake(h, 1, 1, 0);
    hx_poll(h);
    p = hx_find(h, CC_PKT_RESPONSE, 1);
    REQUIRE(p != NULL);
    resp = cameracontrol__v1__handshake_response__unpack(NULL, p->payload_len, p->payload);
    REQUIRE(resp != NULL && resp->capabilities != NULL);
    CHECK_EQ(resp->capabilities->n_haptic_patterns, 0);
    CHECK(!resp->capabilities->has_speaker);
    CHECK(!resp->capabilities->has_indicator_led);
    CHECK(!resp->capabilities->is_simulator);
    CHECK(handshake_repacks_identically(p, resp));
    cameracontrol__v1__handshake_response__free_unpacked(resp, NULL);
}

static void test_handshake_major_mismatch(void)
{
    harness_t *h = hx_setup();
    const hx_packet_t *p;
    send_handshake(h, 2, 2, 0);
    hx_poll(h);
    p = hx_find(h, CC_PKT_ERROR, 2);
    REQUIRE(p != NULL);
    CHECK_EQ(p->status, CC_STATUS_FAILED_PRECONDITION);
    {
        char text[CC_MAX_FRAME_BYTES + 1];
        memcpy(text, p->payload, p->payload_len);
        text[p->payload_len] = '\0';
        CHECK(strstr(text, "1.2") != NULL);   /* names the device's version */
    }
    CHECK(!cc_device_session_active(&h->dev));
    CHECK(hx_find(h, CC_PKT_RESPONSE, 2) == NULL);
    /* a missing version is major 0: also a mismatch */
    hx_clear(h);
    hx_request(h, 3, CC_SERVICE_DEVICE_SERVICE, CC_METHOD_DEVICE_SERVICE_HANDSHAKE, NULL);
    hx_poll(h);
    p = hx_find(h, CC_PKT_ERROR, 3);
    REQUIRE(p != NULL);
    CHECK_EQ(p->status, CC_STATUS_FAILED_PRECONDITION);
}

static void test_call_before_handshake(void)
{
    harness_t *h = hx_setup();
    const hx_packet_t *p;
    hx_request(h, 5, CC_SERVICE_DEVICE_SERVICE, CC_METHOD_DEVICE_SERVICE_PING, NULL);
    open_event_stream(h, 6);
    hx_poll(h);
    p = hx_find(h, CC_PKT_ERROR, 5);
    REQUIRE(p != NULL);
    CHECK_EQ(p->status, CC_STATUS_FAILED_PRECONDITION);
    p = hx_find(h, CC_PKT_ERROR, 6);
    REQUIRE(p != NULL);
    CHECK_EQ(p->status, CC_STATUS_FAILED_PRECONDITION);
    CHECK_EQ(cc_device_calls_in_flight(&h->dev), 0);
}

static void test_unknown_service_and_method(void)
{
    harness_t *h = hx_setup();
    const hx_packet_t *p;
    REQUIRE(hx_handshake(h, 0));
    hx_request(h, 10, 99, 1, NULL);
    hx_request(h, 11, CC_SERVICE_DEVICE_SERVICE, 77, NULL);
    hx_request(h, 12, CC_SERVICE_SIMULATOR_SERVICE, CC_METHOD_SIMULATOR_SERVICE_GET_SIMULATOR_STATUS, NULL);
    hx_poll(h);
    p = hx_find(h, CC_PKT_ERROR, 10);
    REQUIRE(p != NULL);
    CHECK_EQ(p->status, CC_STATUS_UNIMPLEMENTED);
    CHECK(p->payload_len == 18 && memcmp(p->payload, "no such service 99", 18) == 0);
    p = hx_find(h, CC_PKT_ERROR, 11);
    REQUIRE(p != NULL);
    CHECK_EQ(p->status, CC_STATUS_UNIMPLEMENTED);
    CHECK(p->payload_len == 19 && memcmp(p->payload, "no such method 1.77", 19) == 0);
    p = hx_find(h, CC_PKT_ERROR, 12);   /* no extension installed: a real device */
    REQUIRE(p != NULL);
    CHECK_EQ(p->status, CC_STATUS_UNIMPLEMENTED);
    CHECK_EQ(cc_device_counters(&h->dev)->unimplemented_calls, 3);
    CHECK(cc_device_session_active(&h->dev));   /* the link goes on */
}

/* An extension that knows SimulatorService/GetSimulatorStatus only. */
static unsigned ext_calls;
static int test_extension(void *ctx, uint8_t service, uint8_t method, const uint8_t *req, size_t req_len,
                          uint8_t *resp, size_t resp_cap, size_t *resp_len, const char **message)
{
    Cameracontrol__V1__SimulatorStatus status = CAMERACONTROL__V1__SIMULATOR_STATUS__INIT;
    (void)ctx;
    (void)req;
    (void)req_len;
    ext_calls++;
    if (service != CC_SERVICE_SIMULATOR_SERVICE) {
        return CC_EXTENSION_NOT_MINE;
    }
    if (method == CC_METHOD_SIMULATOR_SERVICE_RUN_SCENARIO) {
        *message = "bad scenario";
        return (int)CC_STATUS_INVALID_ARGUMENT;
    }
    if (method != CC_METHOD_SIMULATOR_SERVICE_GET_SIMULATOR_STATUS) {
        return CC_EXTENSION_NOT_MINE;
    }
    status.scenario_running = 1;
    status.device_time_us = 42;
    if (protobuf_c_message_get_packed_size(&status.base) > resp_cap) {
        return (int)CC_STATUS_RESOURCE_EXHAUSTED;
    }
    *resp_len = protobuf_c_message_pack(&status.base, resp);
    return 0;
}

static void test_extension_services(void)
{
    harness_t *h = hx_setup();
    const hx_packet_t *p;
    Cameracontrol__V1__SimulatorStatus *st;
    ext_calls = 0;
    cc_device_set_extension(&h->dev, test_extension, NULL, true);
    REQUIRE(hx_handshake(h, 0));
    hx_request(h, 20, CC_SERVICE_SIMULATOR_SERVICE, CC_METHOD_SIMULATOR_SERVICE_GET_SIMULATOR_STATUS, NULL);
    hx_request(h, 21, CC_SERVICE_SIMULATOR_SERVICE, 9, NULL);
    hx_request(h, 22, 42, 1, NULL);
    hx_request(h, 23, CC_SERVICE_SIMULATOR_SERVICE, CC_METHOD_SIMULATOR_SERVICE_RUN_SCENARIO, NULL);
    hx_poll(h);
    CHECK_EQ(ext_calls, 4);
    p = hx_find(h, CC_PKT_RESPONSE, 20);
    REQUIRE(p != NULL);
    st = cameracontrol__v1__simulator_status__unpack(NULL, p->payload_len, p->payload);
    REQUIRE(st != NULL);
    CHECK(st->scenario_running);
    CHECK_EQ(st->device_time_us, 42);
    cameracontrol__v1__simulator_status__free_unpacked(st, NULL);
    p = hx_find(h, CC_PKT_ERROR, 21);
    REQUIRE(p != NULL);
    CHECK_EQ(p->status, CC_STATUS_UNIMPLEMENTED);
    p = hx_find(h, CC_PKT_ERROR, 22);
    REQUIRE(p != NULL);
    CHECK_EQ(p->status, CC_STATUS_UNIMPLEMENTED);
    p = hx_find(h, CC_PKT_ERROR, 23);
    REQUIRE(p != NULL);
    CHECK_EQ(p->status, CC_STATUS_INVALID_ARGUMENT);
    CHECK(p->payload_len == 12 && memcmp(p->payload, "bad scenario", 12) == 0);
    CHECK_EQ(cc_device_counters(&h->dev)->unimplemented_calls, 2);
}

static void test_malformed_payload(void)
{
    harness_t *h = hx_setup();
    static const uint8_t garbage[] = {0xFF, 0xFF, 0xFF};
    /* field 1 (ping payload) declares 100 bytes but carries 2 */
    static const uint8_t truncated[] = {0x0A, 0x64, 0x01, 0x02};
    const hx_packet_t *p;
    REQUIRE(hx_handshake(h, 0));
    hx_send_packet(h, CC_PKT_REQUEST, 0, 30, CC_SERVICE_DEVICE_SERVICE, CC_METHOD_DEVICE_SERVICE_PING,
                   garbage, sizeof garbage);
    hx_send_packet(h, CC_PKT_REQUEST, 0, 31, CC_SERVICE_DEVICE_SERVICE, CC_METHOD_DEVICE_SERVICE_PING,
                   truncated, sizeof truncated);
    hx_poll(h);
    p = hx_find(h, CC_PKT_ERROR, 30);
    REQUIRE(p != NULL);
    CHECK_EQ(p->status, CC_STATUS_INVALID_ARGUMENT);
    p = hx_find(h, CC_PKT_ERROR, 31);
    REQUIRE(p != NULL);
    CHECK_EQ(p->status, CC_STATUS_INVALID_ARGUMENT);
    CHECK_EQ(cc_device_counters(&h->dev)->invalid_arguments, 2);
    /* the link goes on */
    hx_clear(h);
    hx_request(h, 32, CC_SERVICE_DEVICE_SERVICE, CC_METHOD_DEVICE_SERVICE_PING, NULL);
    hx_poll(h);
    CHECK(hx_find(h, CC_PKT_RESPONSE, 32) != NULL);
}

/* The generated readers (core/cc_pb.c) skip unknown fields without storing
 * them: a request of nothing but unknown fields, as many as a frame holds, is
 * answered (protobuf-c's unpack over an arena ran out of room on it). */
static void test_request_of_many_unknown_fields(void)
{
    harness_t *h = hx_setup();
    uint8_t payload[CC_MAX_FRAME_BYTES - 16u < 400u ? CC_MAX_FRAME_BYTES - 16u : 400u];
    size_t i;
    REQUIRE(hx_handshake(h, 0));
    /* unknown varint fields (field 9, value 1): valid protobuf */
    for (i = 0; i + 1u < sizeof payload; i += 2) {
        payload[i] = (uint8_t)(9u << 3);
        payload[i + 1u] = 0x01;
    }
    hx_send_packet(h, CC_PKT_REQUEST, 0, 35, CC_SERVICE_CONFIG_SERVICE, CC_METHOD_CONFIG_SERVICE_GET_CONFIG,
                   payload, sizeof payload & ~(size_t)1u);
    /* a truncated one (a key without its value) is malformed */
    hx_send_packet(h, CC_PKT_REQUEST, 0, 36, CC_SERVICE_CONFIG_SERVICE, CC_METHOD_CONFIG_SERVICE_GET_CONFIG,
                   payload, 5);
    hx_poll(h);
    CHECK(hx_find(h, CC_PKT_RESPONSE, 35) != NULL);
    REQUIRE(hx_find(h, CC_PKT_ERROR, 36) != NULL);
    CHECK_EQ(hx_find(h, CC_PKT_ERROR, 36)->status, CC_STATUS_INVALID_ARGUMENT);
    CHECK_EQ(cc_device_counters(&h->dev)->invalid_arguments, 1);
}

/* Issue 9 item 2 (R3): a REQUEST naming a live call is a retransmission that
 * slipped past the duplicate window. v1.0 answered ERROR ALREADY_EXISTS on
 * the live call's id, which ended the host's stream; now it is ignored and
 * counted, and the live call goes on delivering events. */
static void test_duplicate_call_id(void)
{
    harness_t *h = hx_setup();
    REQUIRE(hx_handshake(h, 0));
    open_event_stream(h, 40);
    hx_poll(h);
    CHECK_EQ(cc_device_calls_in_flight(&h->dev), 1);
    hx_request(h, 40, CC_SERVICE_DEVICE_SERVICE, CC_METHOD_DEVICE_SERVICE_PING, NULL);
    open_event_stream(h, 40);
    hx_poll(h);
    CHECK_EQ(hx_count(h, CC_PKT_ERROR, 40), 0);      /* nothing ends the live call */
    CHECK_EQ(hx_count(h, CC_PKT_RESPONSE, 40), 0);   /* nor is the ping run */
    CHECK_EQ(cc_device_counters(&h->dev)->duplicate_requests, 2);
    CHECK_EQ(cc_device_calls_in_flight(&h->dev), 1);   /* the earlier call goes on */
    h->buttons = CC_BUTTON_VOLUME_UP;
    hx_advance_alive(h, 20000);
    CHECK(hx_find(h, CC_PKT_STREAM_MESSAGE, 40) != NULL);
}

static void test_too_many_calls(void)
{
    harness_t *h = hx_setup();
    const hx_packet_t *p;
    uint32_t i;
    REQUIRE(hx_handshake(h, 0));
    for (i = 0; i < CC_MAX_CONCURRENT_CALLS; i++) {
        open_event_stream(h, 100u + i);
    }
    hx_poll(h);
    CHECK_EQ(cc_device_calls_in_flight(&h->dev), CC_MAX_CONCURRENT_CALLS);
    CHECK_EQ(hx_count(h, CC_PKT_ERROR, HX_ANY_CALL), 0);
    open_event_stream(h, 200);
    hx_request(h, 201, CC_SERVICE_DEVICE_SERVICE, CC_METHOD_DEVICE_SERVICE_PING, NULL);
    hx_poll(h);
    p = hx_find(h, CC_PKT_ERROR, 200);
    REQUIRE(p != NULL);
    CHECK_EQ(p->status, CC_STATUS_RESOURCE_EXHAUSTED);
    p = hx_find(h, CC_PKT_ERROR, 201);
    REQUIRE(p != NULL);
    CHECK_EQ(p->status, CC_STATUS_RESOURCE_EXHAUSTED);
    CHECK_EQ(cc_device_counters(&h->dev)->calls_refused, 2);
    /* a handshake is always served, and ends them all */
    hx_clear(h);
    REQUIRE(hx_handshake(h, 0));
    CHECK_EQ(cc_device_calls_in_flight(&h->dev), 0);
    CHECK_EQ(cc_device_counters(&h->dev)->cancelled_calls, CC_MAX_CONCURRENT_CALLS);
}

static void test_cancel(void)
{
    harness_t *h = hx_setup();
    REQUIRE(hx_handshake(h, 0));
    open_event_stream(h, 50);
    open_event_stream(h, 51);
    hx_poll(h);
    CHECK_EQ(cc_device_calls_in_flight(&h->dev), 2);
    hx_cancel(h, 50);
    hx_cancel(h, 999);   /* unknown: ignored */
    hx_poll(h);
    CHECK_EQ(cc_device_calls_in_flight(&h->dev), 1);
    CHECK_EQ(cc_device_counters(&h->dev)->cancelled_calls, 1);
    CHECK_EQ(h->npackets, 0);   /* nothing is answered to a cancel */
    /* an event now goes to the remaining stream only */
    h->buttons = CC_BUTTON_VOLUME_UP;
    hx_advance_alive(h, 40000);
    CHECK(hx_count(h, CC_PKT_STREAM_MESSAGE, 51) >= 1u);
    CHECK_EQ(hx_count(h, CC_PKT_STREAM_MESSAGE, 50), 0);
}

static void test_unknown_packet_type(void)
{
    harness_t *h = hx_setup();
    const hx_packet_t *p;
    hx_send_packet(h, 9, 0, 3, 0, 0, NULL, 0);
    hx_send_packet(h, 15, 0, 0, 0, 0, NULL, 0);    /* call id 0: counted, not answered */
    hx_send_packet(h, 0, 0, 4, 0, 0, NULL, 0);
    hx_poll(h);
    CHECK_EQ(cc_device_counters(&h->dev)->unknown_packet_types, 3);
    p = hx_find(h, CC_PKT_ERROR, 3);
    REQUIRE(p != NULL);
    CHECK_EQ(p->status, CC_STATUS_UNIMPLEMENTED);
    p = hx_find(h, CC_PKT_ERROR, 4);
    REQUIRE(p != NULL);
    CHECK_EQ(p->status, CC_STATUS_UNIMPLEMENTED);
    CHECK_EQ(hx_count(h, CC_PKT_ERROR, 0), 0);
    CHECK_EQ(h->npackets, 2);
}

/* (v1.2) An unknown type on a live call's id is counted and not answered:
 * an ERROR would end the call at the host while it goes on here. */
static void test_unknown_packet_type_on_live_call(void)
{
    harness_t *h = hx_setup();
    REQUIRE(hx_handshake(h, 0));
    open_event_stream(h, 70);
    hx_poll(h);
    hx_clear(h);
    hx_send_packet(h, 9, CC_WIRE_FLAG_RELIABLE, 70, 0, 0, NULL, 0);
    hx_poll(h);
    CHECK_EQ(cc_device_counters(&h->dev)->unknown_packet_types, 1);
    CHECK_EQ(hx_count(h, CC_PKT_ERROR, 70), 0);
    CHECK_EQ(hx_count(h, CC_PKT_ACK, 0), 1);   /* acknowledged as any reliable packet (§6) */
    CHECK_EQ(cc_device_calls_in_flight(&h->dev), 1);
    /* the stream goes on */
    h->buttons = CC_BUTTON_VOLUME_UP;
    hx_advance_alive(h, 40000);
    CHECK(hx_count(h, CC_PKT_STREAM_MESSAGE, 70) >= 1u);
}

static void test_new_handshake_resets_session(void)
{
    harness_t *h = hx_setup();
    uint32_t first;
    const hx_packet_t *p;
    REQUIRE(hx_handshake(h, 0));
    first = cc_device_session_id(&h->dev);
    open_event_stream(h, 60);
    hx_request(h, 61, CC_SERVICE_DEVICE_SERVICE, CC_METHOD_DEVICE_SERVICE_PING, NULL);
    hx_request(h, 62, CC_SERVICE_DEVICE_SERVICE, CC_METHOD_DEVICE_SERVICE_PING, NULL);
    hx_poll(h);
    CHECK_EQ(hx_count(h, CC_PKT_RESPONSE, HX_ANY_CALL), 2);
    hx_clear(h);
    h->now_us += 1000;
    send_handshake(h, 63, 1, 0);
    hx_poll(h);
    p = hx_find(h, CC_PKT_RESPONSE, 63);
    REQUIRE(p != NULL);
    CHECK_EQ(p->sequence, 0);
    CHECK(cc_device_session_id(&h->dev) != first);
    CHECK(cc_device_session_id(&h->dev) != 0u);
    CHECK_EQ(cc_device_calls_in_flight(&h->dev), 0);
    CHECK_EQ(cc_device_counters(&h->dev)->cancelled_calls, 1);
    /* S4: the live call ends with ERROR CANCELLED "new session", before the response */
    REQUIRE(h->npackets >= 2u);
    CHECK_EQ(h->packets[0].type, CC_PKT_ERROR);
    CHECK_EQ(h->packets[0].call_id, 60);
    CHECK_EQ(h->packets[0].status, CC_STATUS_CANCELLED);
    CHECK(h->packets[0].payload_len == 11u && memcmp(h->packets[0].payload, "new session", 11) == 0);
    /* v1.2: best-effort, since the new session never retransmits it (PROTOCOL.md §9) */
    CHECK_EQ(h->packets[0].flags & CC_WIRE_FLAG_RELIABLE, 0);
    CHECK_EQ(h->packets[1].type, CC_PKT_RESPONSE);
    CHECK_EQ(h->packets[1].call_id, 63);
}

/* v1.2 (PROTOCOL.md §6; found by the link model, scripts/check-model): a
 * request of the old session retransmitted after the handshake that started a
 * new one is a duplicate, not a call of the new session. */
static void test_old_request_not_resurrected(void)
{
    harness_t *h = hx_setup();
    uint8_t empty[1];
    uint16_t old_seq;
    REQUIRE(hx_handshake(h, 2));
    old_seq = h->host_sequence;
    hx_request(h, 70, CC_SERVICE_DEVICE_SERVICE, CC_METHOD_DEVICE_SERVICE_PING, NULL);
    hx_poll(h);
    CHECK_EQ(hx_count(h, CC_PKT_RESPONSE, 70), 1);
    send_handshake(h, 71, 1, 2);
    hx_poll(h);
    REQUIRE(hx_find(h, CC_PKT_RESPONSE, 71) != NULL);
    hx_clear(h);
    /* the host retransmits the Ping's REQUEST (its ACK was lost) after the handshake */
    hx_send_packet_seq(h, old_seq, CC_PKT_REQUEST, CC_WIRE_FLAG_RELIABLE, 70, CC_SERVICE_DEVICE_SERVICE,
                       CC_METHOD_DEVICE_SERVICE_PING, empty, 0);
    hx_poll(h);
    CHECK_EQ(hx_count(h, CC_PKT_RESPONSE, 70), 0);   /* not executed again */
    CHECK_EQ(hx_count(h, CC_PKT_ACK, HX_ANY_CALL), 1);   /* re-ACKed: the first ACK was lost */
    CHECK_EQ(cc_device_calls_in_flight(&h->dev), 0);
}

static void test_reconnecting_host_restarts_sequence(void)
{
    harness_t *h = hx_setup();
    Cameracontrol__V1__HandshakeRequest req = CAMERACONTROL__V1__HANDSHAKE_REQUEST__INIT;
    Cameracontrol__V1__ProtocolVersion v = CAMERACONTROL__V1__PROTOCOL_VERSION__INIT;
    uint8_t payload[64];
    size_t len;
    uint16_t i;
    REQUIRE(hx_handshake(h, 0));
    for (i = 0; i < 100u; i++) {
        hx_heartbeat(h);
    }
    hx_poll(h);
    /* the host restarts: its numbering begins at 0 again, handshake sent reliably */
    v.major = 1;
    req.host_version = &v;
    len = protobuf_c_message_pack(&req.base, payload);
    hx_send_packet_seq(h, 0, CC_PKT_REQUEST, CC_WIRE_FLAG_RELIABLE, 1, CC_SERVICE_DEVICE_SERVICE,
                       CC_METHOD_DEVICE_SERVICE_HANDSHAKE, payload, len);
    hx_send_packet_seq(h, 1, CC_PKT_REQUEST, CC_WIRE_FLAG_RELIABLE, 2, CC_SERVICE_DEVICE_SERVICE,
                       CC_METHOD_DEVICE_SERVICE_PING, NULL, 0);
    h->host_sequence = 2;   /* the test host's own ACKs follow */
    hx_poll(h);
    CHECK(hx_find(h, CC_PKT_RESPONSE, 1) != NULL);
    CHECK(hx_find(h, CC_PKT_RESPONSE, 2) != NULL);
    CHECK_EQ(cc_device_counters(&h->dev)->duplicates_dropped, 0);
    CHECK_EQ(cc_device_counters(&h->dev)->sequence_gaps, 0);
}

static void test_request_with_call_id_zero(void)
{
    harness_t *h = hx_setup();
    REQUIRE(hx_handshake(h, 0));
    hx_request(h, 0, CC_SERVICE_DEVICE_SERVICE, CC_METHOD_DEVICE_SERVICE_PING, NULL);
    hx_poll(h);
    CHECK_EQ(h->npackets, 0);
    CHECK_EQ(cc_device_counters(&h->dev)->envelope_errors, 1);   /* S3 (v1.0: framing_errors) */
}

const cc_test_case_t cc_tests_rpc[] = {
    {"handshake_answers_capabilities", test_handshake_answers_capabilities},
    {"handshake_without_feedback_announces_none", test_handshake_without_feedback_announces_none},
    {"handshake_major_mismatch", test_handshake_major_mismatch},
    {"call_before_handshake", test_call_before_handshake},
    {"unknown_service_and_method", test_unknown_service_and_method},
    {"extension_services", test_extension_services},
    {"malformed_payload", test_malformed_payload},
    {"request_of_many_unknown_fields", test_request_of_many_unknown_fields},
    {"duplicate_call_id", test_duplicate_call_id},
    {"too_many_calls", test_too_many_calls},
    {"cancel", test_cancel},
    {"unknown_packet_type", test_unknown_packet_type},
    {"unknown_packet_type_on_live_call", test_unknown_packet_type_on_live_call},
    {"new_handshake_resets_session", test_new_handshake_resets_session},
    {"old_request_not_resurrected", test_old_request_not_resurrected},
    {"reconnecting_host_restarts_sequence", test_reconnecting_host_restarts_sequence},
    {"request_with_call_id_zero", test_request_with_call_id_zero},
};
const size_t cc_tests_rpc_count = CC_TEST_COUNT(cc_tests_rpc);
