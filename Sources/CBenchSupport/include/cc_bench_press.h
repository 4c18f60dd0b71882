#ifndef CC_BENCH_PRESS_H
#define CC_BENCH_PRESS_H

#include <stddef.h>
#include <stdint.h>

/* camctl-bench paced: the minimal C host (cc_bench_press.c), the floor camctl-sim and the pty impose on
 * press -> host latency, with no Swift host at all. */

/* One press the C host decoded: the device's timestamp of it and when the host had it. */
typedef struct cc_bench_press {
    uint64_t device_micros;  /* InputEvent.timestamp_us (device time) */
    uint64_t decoded_nanos;  /* CLOCK_MONOTONIC just after its frame was read and decoded */
    uint64_t woke_nanos;     /* CLOCK_MONOTONIC when the poll() that brought its frame returned */
    uint32_t event_number;   /* InputEvent.event_number */
    uint32_t wire_bytes;     /* its frame on the wire: COBS-stuffed, with the delimiter */
} cc_bench_press_t;

/* What the C host counted over its run. */
typedef struct cc_bench_press_host_counts {
    uint64_t frames;       /* good frames (COBS, check and envelope) */
    uint64_t bad_frames;   /* frames that failed COBS, the check or the envelope; InputEvents protobuf-c refused */
    uint64_t duplicates;   /* packets whose sequence number came before (retransmissions): dropped, re-ACKed */
    uint64_t events;       /* InputEvents decoded, of any kind */
    uint64_t acks;         /* ACKs sent */
    uint64_t heartbeats;   /* HEARTBEATs sent */
    uint64_t failed_writes; /* packets write() did not take whole (the simulator is gone) */
    uint32_t heartbeat_interval_ms; /* the device's, from its Capabilities (50 when it announces none) */
    int refused;           /* the device answered ERROR to the handshake or to StreamInputEvents */
} cc_bench_press_host_counts_t;

/* The minimal C host, on the calling thread: opens the terminal at `path` (raw, non-blocking), does the
 * handshake (DeviceService/Handshake, host version 1.1) and opens InputService/StreamInputEvents, then
 * loops on poll(): read, deframe (the firmware core's COBS + CRC-16 decoder), parse the envelope,
 * drop duplicates, ACK every RELIABLE packet, send HEARTBEATs, and unpack each InputEvent (protobuf-c,
 * over the core's arena). For each BUTTON_DOWN of VOLUME_DOWN it stores the event's timestamp and
 * CLOCK_MONOTONIC read right after the unpack in presses[], until `wanted` presses or `timeout_seconds`.
 * Returns the number of presses stored, or -1 when the terminal does not open (errno set). */
int cc_bench_press_host_run(const char *path, size_t wanted, double timeout_seconds, cc_bench_press_t *presses,
                            cc_bench_press_host_counts_t *counts);

/* Does nothing; called once for each press the C host stored, right after it, and by camctl-bench-probe's
 * capture handler for each press it is given: a mark where `camctl-bench presspath` has callgrind dump
 * its counts (the instructions and code one press ran since the read() that brought it). */
void cc_bench_press_handled(void);

#endif
