/*
 * libFuzzer harness (scripts/fuzz fw-frames): well-formed frames (COBS, envelope, CRC) around fuzzed
 * payloads into cc_device_poll, so the fuzzer gets past the check into dispatch and protobuf parsing.
 *
 * The input is a script of records `T C S M L payload…`: T packet type and flags, C call id, S and M the
 * service and method (kept mostly in range), L the payload length; the sequence number mostly counts up
 * (T's top bit repeats the last one: a duplicate). Between records device time passes.
 *
 * Properties: no crash, no sanitizer report, no CC_ASSERT; and the device never goes deaf: after the
 * script, a handshake on a fresh sequence number and call id is answered.
 */
#include <stddef.h>
#include <stdint.h>

#include "cc_ids.h"
#include "cc_wire.h"
#include "harness.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    harness_t *h = hx_setup();
    size_t pos = 0;
    uint16_t seq = 1u;
    Cameracontrol__V1__HandshakeRequest req = CAMERACONTROL__V1__HANDSHAKE_REQUEST__INIT;
    Cameracontrol__V1__ProtocolVersion v = CAMERACONTROL__V1__PROTOCOL_VERSION__INIT;
    uint8_t payload[CC_MAX_FRAME_BYTES];
    size_t len;

    if (!hx_handshake(h, 1u)) {
        __builtin_trap();
    }
    while (pos + 5u <= size) {
        uint8_t t = data[pos], c = data[pos + 1u], s = data[pos + 2u], m = data[pos + 3u];
        size_t l = data[pos + 4u];
        pos += 5u;
        if (l > size - pos) {
            l = size - pos;
        }
        if (!(t & 0x80u)) {
            seq = (uint16_t)(seq + 1u);
        }
        hx_send_packet_seq(h, seq, (uint8_t)(t & 0x0Fu), (uint8_t)(t & 0x10u), c, (uint8_t)(s % 8u),
                           (uint8_t)(m % 4u), data + pos, l);
        pos += l;
        hx_advance_alive(h, (uint64_t)(t >> 5) * 3000u + 1000u);
    }
    hx_advance_alive(h, 100000u);

    /* Never deaf: a fresh handshake is answered. */
    hx_clear(h);
    v.major = 1u;
    v.minor = 1u;
    req.host_version = &v;
    req.host_name = "fuzz";
    len = protobuf_c_message_pack(&req.base, payload);
    hx_send_packet_seq(h, (uint16_t)(seq + 1u), CC_PKT_REQUEST, CC_WIRE_FLAG_RELIABLE, 0x7FFFFF00u, CC_SERVICE_DEVICE_SERVICE,
                       CC_METHOD_DEVICE_SERVICE_HANDSHAKE, payload, len);
    hx_advance_alive(h, 200000u);
    if (hx_find(h, CC_PKT_RESPONSE, 0x7FFFFF00u) == NULL) {
        __builtin_trap();
    }
    return 0;
}
