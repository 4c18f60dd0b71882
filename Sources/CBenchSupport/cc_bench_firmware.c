/* camctl-bench decode: the firmware core's own receive path as a baseline for the host's Swift decode.
 *
 * The same steps, in the same order, as cc_device.c's receive_byte and receive_body and cc_rpc.c's
 * unpack of a request: one byte at a time into the streaming frame decoder (it buffers to the 0x00,
 * unstuffs COBS in place and checks the CRC-16), the envelope parse of each good body, then
 * protobuf-c's unpack of the payload over a static arena (no heap; the core itself now reads requests
 * with its generated codec, and InputEvent is a message it only sends). The link's sequence
 * window and the RPC dispatch that follow on the device are left out: the host side measured next to
 * it stops at the typed message too. */
#define _GNU_SOURCE
#include "cc_bench_support.h"

#include <time.h>

#include "cameracontrol/v1/input.pb-c.h"
#include "bench_arena.h"
#include "cc_envelope.h"
#include "cc_frame.h"
#include "cc_wire.h"

/* Static, as on the device (the frame decoder alone holds a stuffed frame of CC_MAX_FRAME_BYTES). */
static cc_frame_decoder_t firmware_decoder;

static int monotonic_nanos(uint64_t *out)
{
    struct timespec now;
    if (clock_gettime(CLOCK_MONOTONIC, &now) != 0) return -1;
    *out = (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
    return 0;
}

/* One good body: envelope, then (when unpack) the InputEvent over the arena. Returns 1 for a
 * message, 0 for a body that is not a STREAM_MESSAGE, -1 when it does not parse. */
static int receive_body(const uint8_t *body, size_t length, int unpack, uint64_t *checksum)
{
    cc_envelope_t envelope;
    const ProtobufCMessage *message;

    if (cc_envelope_parse(body, length, &envelope) != CC_ENVELOPE_OK) return -1;
    if (envelope.type != CC_PKT_STREAM_MESSAGE) return 0;
    if (!unpack) {
        *checksum += envelope.sequence;
        return 1;
    }
    message = protobuf_c_message_unpack(&cameracontrol__v1__input_event__descriptor, cc_bench_arena(),
                                        envelope.payload_len, envelope.payload);
    if (message == NULL) return -1;
    *checksum += ((const Cameracontrol__V1__InputEvent *)(const void *)message)->timestamp_us;
    return 1;
}

int cc_bench_firmware_decode(const uint8_t *wire, size_t length, size_t loops, int unpack,
                             cc_bench_firmware_decode_result_t *out)
{
    uint64_t start;
    uint64_t end;
    uint64_t messages = 0;
    uint64_t checksum = 0;
    int failed = 0;
    size_t loop;
    size_t index;

    cc_frame_decoder_init(&firmware_decoder);
    if (monotonic_nanos(&start) != 0) return -1;
    for (loop = 0; loop < loops; loop++) {
        for (index = 0; index < length; index++) {
            const uint8_t *body;
            size_t body_length;
            int received;

            switch (cc_frame_decoder_feed(&firmware_decoder, wire[index])) {
            case CC_FRAME_NEED_MORE:
            case CC_FRAME_EMPTY:
                break;
            case CC_FRAME_OK:
                body = cc_frame_decoder_body(&firmware_decoder, &body_length);
                received = receive_body(body, body_length, unpack, &checksum);
                if (received < 0) failed = 1;
                messages += (uint64_t)(received > 0);
                break;
            default:
                failed = 1;
                break;
            }
        }
    }
    if (monotonic_nanos(&end) != 0) return -1;
    out->nanos = end - start;
    out->messages = messages;
    out->checksum = checksum;
    return failed ? -1 : 0;
}
