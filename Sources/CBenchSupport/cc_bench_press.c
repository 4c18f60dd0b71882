/* camctl-bench paced: a minimal C host, the baseline of press -> capture handler.
 *
 * It talks to the same camctl-sim over the same pty as CameraControlHost, and does what a host must and
 * nothing more, on one thread: poll(), read(), the firmware core's own frame decoder (COBS, CRC-16) and
 * envelope parser, duplicate dropping by sequence number, an ACK for every RELIABLE packet, HEARTBEATs
 * after the device's interval of silence (and in answer to the device's, PROTOCOL.md §8), and
 * protobuf-c's unpack of each InputEvent over a static arena (no heap). CLOCK_MONOTONIC is read right
 * after a press's InputEvent is unpacked, before its ACK is written, as CameraControlHost wakes its
 * consumer before it acknowledges. What is left between the device's sample and that moment is
 * camctl-sim's (its wake-up after the sample boundary, the firmware's work, its line pacing, its
 * write()) and the pty's (the kernel's hand-over and this thread's wake-up). */
#define _GNU_SOURCE
#include "cc_bench_press.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "cameracontrol/v1/common.pb-c.h"
#include "cameracontrol/v1/device.pb-c.h"
#include "cameracontrol/v1/input.pb-c.h"
#include "bench_arena.h"
#include "cc_envelope.h"
#include "cc_frame.h"
#include "cc_wire.h"

/* Method ids, as in Sources/CameraControlWire/Generated/MethodIDs.swift. */
#define DEVICE_SERVICE 1u
#define DEVICE_HANDSHAKE 1u
#define INPUT_SERVICE 2u
#define INPUT_STREAM_INPUT_EVENTS 1u
/* This host's two calls. */
#define HANDSHAKE_CALL 1u
#define STREAM_CALL 2u
/* PROTOCOL.md §8: the heartbeat interval when the device announces none. */
#define DEFAULT_HEARTBEAT_MS 50u
/* The longest poll() (ms): the deadline is looked at at least this often. */
#define MAX_WAIT_MS 100

typedef struct press_host {
    int fd;
    uint16_t tx_sequence;
    uint64_t last_tx_nanos;      /* when this host last wrote a packet */
    uint64_t woke_nanos;         /* when the last poll() returned */
    uint64_t interval_nanos;     /* the device's heartbeat interval */
    int session;                 /* the handshake was answered */
    size_t wanted;
    size_t stored;
    cc_bench_press_t *presses;
    cc_bench_press_host_counts_t *counts;
    uint8_t seen[65536u / 8u];   /* the device's sequence numbers received (it sends a few hundred a run) */
    cc_frame_decoder_t decoder;
} press_host_t;

static uint64_t monotonic_nanos(void)
{
    struct timespec now;
    (void)clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

/* Writes one packet: the envelope (this direction's next sequence number), the payload, the CRC-16,
 * COBS and the delimiter, in one write(). */
static void send_packet(press_host_t *host, uint8_t type, uint8_t flags, uint32_t call_id, uint8_t service,
                        uint8_t method, const uint8_t *payload, size_t payload_length)
{
    uint8_t body[128];
    uint8_t wire[CC_FRAME_WIRE_BYTES(sizeof body)];
    cc_envelope_t envelope;
    size_t length;
    size_t wire_length;

    memset(&envelope, 0, sizeof envelope);
    envelope.type = type;
    envelope.flags = flags;
    envelope.sequence = host->tx_sequence;
    envelope.call_id = call_id;
    envelope.service = service;
    envelope.method = method;
    length = cc_envelope_write(&envelope, body, sizeof body);
    if (length == 0u || payload_length > sizeof body - length) return;
    if (payload_length > 0u) memcpy(body + length, payload, payload_length);
    wire_length = cc_frame_encode(body, length + payload_length, wire, sizeof wire);
    if (wire_length == 0u) return;
    host->tx_sequence++;
    /* A few dozen bytes into a pty that its reader empties: the write is whole or the link is gone. */
    if (write(host->fd, wire, wire_length) != (ssize_t)wire_length) host->counts->failed_writes++;
    host->last_tx_nanos = monotonic_nanos();
}

static void send_handshake(press_host_t *host)
{
    Cameracontrol__V1__ProtocolVersion version = CAMERACONTROL__V1__PROTOCOL_VERSION__INIT;
    Cameracontrol__V1__HandshakeRequest request = CAMERACONTROL__V1__HANDSHAKE_REQUEST__INIT;
    uint8_t payload[64];
    char name[] = "camctl-bench-c";
    version.major = 1;
    version.minor = 1;
    request.host_version = &version;
    request.host_name = name;
    if (cameracontrol__v1__handshake_request__get_packed_size(&request) > sizeof payload) return;
    send_packet(host, CC_PKT_REQUEST, CC_WIRE_FLAG_RELIABLE, HANDSHAKE_CALL, DEVICE_SERVICE, DEVICE_HANDSHAKE, payload,
                cameracontrol__v1__handshake_request__pack(&request, payload));
}

/* The handshake's RESPONSE: the session starts (the device numbers its packets from 0 again) at the
 * device's heartbeat interval, and the input event stream is asked for (an empty request). */
static void start_session(press_host_t *host, const cc_envelope_t *envelope)
{
    Cameracontrol__V1__HandshakeResponse *response =
        cameracontrol__v1__handshake_response__unpack(NULL, envelope->payload_len, envelope->payload);
    uint32_t interval_ms = DEFAULT_HEARTBEAT_MS;
    if (response != NULL) {
        if (response->capabilities != NULL && response->capabilities->heartbeat_interval_ms != 0u) {
            interval_ms = response->capabilities->heartbeat_interval_ms;
        }
        cameracontrol__v1__handshake_response__free_unpacked(response, NULL);
    }
    host->counts->heartbeat_interval_ms = interval_ms;
    host->interval_nanos = (uint64_t)interval_ms * 1000000u;
    host->session = 1;
    memset(host->seen, 0, sizeof host->seen);
    host->seen[envelope->sequence / 8u] |= (uint8_t)(1u << (envelope->sequence % 8u));
    send_packet(host, CC_PKT_REQUEST, CC_WIRE_FLAG_RELIABLE, STREAM_CALL, INPUT_SERVICE, INPUT_STREAM_INPUT_EVENTS, NULL, 0u);
}

/* One InputEvent of the stream (its frame's body is body_length bytes): a volume-down press is
 * timestamped and stored. */
static void receive_event(press_host_t *host, const cc_envelope_t *envelope, size_t body_length)
{
    const Cameracontrol__V1__InputEvent *event;
    uint64_t now;

    event = (const Cameracontrol__V1__InputEvent *)(const void *)protobuf_c_message_unpack(
        &cameracontrol__v1__input_event__descriptor, cc_bench_arena(), envelope->payload_len,
        envelope->payload);
    if (event == NULL) {
        host->counts->bad_frames++;
        return;
    }
    now = monotonic_nanos();
    host->counts->events++;
    if (event->kind == CAMERACONTROL__V1__INPUT_EVENT_KIND__INPUT_EVENT_KIND_BUTTON_DOWN &&
        event->source == CAMERACONTROL__V1__INPUT_SOURCE__INPUT_SOURCE_VOLUME_DOWN && host->stored < host->wanted) {
        host->presses[host->stored].device_micros = event->timestamp_us;
        host->presses[host->stored].decoded_nanos = now;
        host->presses[host->stored].woke_nanos = host->woke_nanos;
        host->presses[host->stored].event_number = event->event_number;
        host->presses[host->stored].wire_bytes = (uint32_t)CC_FRAME_WIRE_BYTES(body_length + CC_WIRE_CHECK_BYTES);
        host->stored++;
        cc_bench_press_handled();
    }
}

__attribute__((noinline)) void cc_bench_press_handled(void)
{
    __asm__ volatile("");  /* kept as a call of its own: callgrind dumps before it */
}

/* One good frame's body. */
static void receive_body(press_host_t *host, const uint8_t *body, size_t length)
{
    cc_envelope_t envelope;
    int reliable;
    uint8_t bit;

    if (cc_envelope_parse(body, length, &envelope) != CC_ENVELOPE_OK) {
        host->counts->bad_frames++;
        return;
    }
    host->counts->frames++;
    reliable = (envelope.flags & CC_WIRE_FLAG_RELIABLE) != 0u;
    bit = (uint8_t)(1u << (envelope.sequence % 8u));
    if (host->session && (host->seen[envelope.sequence / 8u] & bit) != 0u) {
        host->counts->duplicates++; /* dropped, but acknowledged again: the first ACK may have been lost */
    } else {
        host->seen[envelope.sequence / 8u] |= bit;
        switch (envelope.type) {
        case CC_PKT_RESPONSE:
            if (envelope.call_id == HANDSHAKE_CALL && !host->session) start_session(host, &envelope);
            break; /* on STREAM_CALL: the stream is open (§7) */
        case CC_PKT_STREAM_MESSAGE:
            if (envelope.call_id == STREAM_CALL) receive_event(host, &envelope, length);
            break;
        case CC_PKT_ERROR:
        case CC_PKT_STREAM_END:
            if (envelope.call_id == HANDSHAKE_CALL || envelope.call_id == STREAM_CALL) host->counts->refused = 1;
            break;
        case CC_PKT_HEARTBEAT:
            /* v1.1's host rule: answer when this host has been silent for half an interval. */
            if (host->session && monotonic_nanos() - host->last_tx_nanos >= host->interval_nanos / 2u) {
                send_packet(host, CC_PKT_HEARTBEAT, 0u, CC_WIRE_LINK_CALL_ID, 0u, 0u, NULL, 0u);
                host->counts->heartbeats++;
            }
            break;
        default:
            break; /* ACKs of this host's requests: it never retransmits (a pty loses nothing) */
        }
    }
    if (reliable) {
        uint8_t acked[CC_WIRE_ACK_PAYLOAD_BYTES];
        acked[0] = (uint8_t)(envelope.sequence & 0xFFu);
        acked[1] = (uint8_t)(envelope.sequence >> 8);
        send_packet(host, CC_PKT_ACK, 0u, CC_WIRE_LINK_CALL_ID, 0u, 0u, acked, sizeof acked);
        host->counts->acks++;
    }
}

/* Opens the terminal like a host opens a serial port: non-blocking, raw (8N1, no flow control). */
static int open_terminal(const char *path)
{
    struct termios settings;
    int fd = open(path, O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return -1;
    if (tcgetattr(fd, &settings) != 0) {
        int saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    cfmakeraw(&settings);
    settings.c_cflag |= (tcflag_t)(CLOCAL | CREAD);
    settings.c_iflag &= ~(tcflag_t)(IXON | IXOFF | IXANY);
    settings.c_cc[VMIN] = 0;
    settings.c_cc[VTIME] = 0;
    if (tcsetattr(fd, TCSANOW, &settings) != 0) {
        int saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    return fd;
}

int cc_bench_press_host_run(const char *path, size_t wanted, double timeout_seconds, cc_bench_press_t *presses,
                            cc_bench_press_host_counts_t *counts)
{
    press_host_t *host;
    uint64_t deadline;
    int stored;

    memset(counts, 0, sizeof *counts);
    host = calloc(1, sizeof *host);
    if (host == NULL) return -1;
    host->fd = open_terminal(path);
    if (host->fd < 0) {
        free(host);
        return -1;
    }
    host->wanted = wanted;
    host->presses = presses;
    host->counts = counts;
    host->interval_nanos = (uint64_t)DEFAULT_HEARTBEAT_MS * 1000000u;
    cc_frame_decoder_init(&host->decoder);
    deadline = monotonic_nanos() + (uint64_t)(timeout_seconds * 1e9);
    send_handshake(host);

    while (host->stored < wanted && !counts->refused) {
        struct pollfd descriptor;
        uint64_t now = monotonic_nanos();
        uint64_t wake = deadline;
        uint64_t wait_ms;
        int ready;

        if (now >= deadline) break;
        if (host->session) {
            if (now - host->last_tx_nanos >= host->interval_nanos) {
                send_packet(host, CC_PKT_HEARTBEAT, 0u, CC_WIRE_LINK_CALL_ID, 0u, 0u, NULL, 0u);
                counts->heartbeats++;
            }
            if (host->last_tx_nanos + host->interval_nanos < wake) wake = host->last_tx_nanos + host->interval_nanos;
        }
        wait_ms = wake > now ? (wake - now + 999999u) / 1000000u : 0u;
        descriptor.fd = host->fd;
        descriptor.events = POLLIN;
        descriptor.revents = 0;
        ready = poll(&descriptor, 1, wait_ms < MAX_WAIT_MS ? (int)wait_ms : MAX_WAIT_MS);
        host->woke_nanos = monotonic_nanos();
        if (ready < 0 && errno != EINTR) break;
        if (ready <= 0) continue;
        if ((descriptor.revents & POLLIN) != 0) {
            uint8_t buffer[512];
            ssize_t got;
            while ((got = read(host->fd, buffer, sizeof buffer)) > 0) {
                ssize_t index;
                for (index = 0; index < got; index++) {
                    const uint8_t *body;
                    size_t length;
                    switch (cc_frame_decoder_feed(&host->decoder, buffer[index])) {
                    case CC_FRAME_OK:
                        body = cc_frame_decoder_body(&host->decoder, &length);
                        receive_body(host, body, length);
                        break;
                    case CC_FRAME_NEED_MORE:
                    case CC_FRAME_EMPTY:
                        break;
                    default:
                        counts->bad_frames++;
                        break;
                    }
                }
            }
        } else if ((descriptor.revents & (POLLHUP | POLLERR | POLLNVAL)) != 0) {
            break; /* the simulator is gone */
        }
    }
    if (host->session) send_packet(host, CC_PKT_CANCEL, 0u, STREAM_CALL, 0u, 0u, NULL, 0u);
    close(host->fd);
    stored = (int)host->stored;
    free(host);
    return stored;
}
