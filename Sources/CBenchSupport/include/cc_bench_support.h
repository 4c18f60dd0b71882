#ifndef CC_BENCH_SUPPORT_H
#define CC_BENCH_SUPPORT_H

#include <stddef.h>
#include <stdint.h>

/* Counts heap allocations (malloc, calloc, realloc, posix_memalign, aligned_alloc) made by the whole
 * process while counting is on, for camctl-bench's "allocations per message". The counting
 * definitions live in cc_bench_support.c, linked only into camctl-bench; they forward to glibc. */
void cc_bench_alloc_counting(int on);
uint64_t cc_bench_alloc_count(void);

/* The bare protobuf-c baseline: unpacks and frees one cameracontrol.v1.InputEvent with protobuf-c's
 * default allocator (returns 0 when it does not parse), and the same over an arena allocator that
 * never touches the heap (the firmware's way). */
int cc_bench_unpack_input_event(const uint8_t *data, size_t length);
int cc_bench_unpack_input_event_arena(const uint8_t *data, size_t length);

/* The firmware's own C receive path (cc_bench_firmware.c), for camctl-bench decode: what the
 * firmware core does with received bytes, here over frames carrying InputEvents. Every byte of
 * wire[0..length) goes through cc_frame_decoder_feed (COBS and the CRC-16 at each delimiter), each good
 * body through cc_envelope_parse, and, when `unpack` is non-zero, each STREAM_MESSAGE's payload through
 * protobuf_c_message_unpack over a static arena (bench_arena.h, emptied before each message; the
 * core itself reads requests with its generated codec and has no reader for InputEvent). The wire bytes are fed `loops` times; the time is CLOCK_MONOTONIC
 * around all of it. Returns 0, or -1 when a frame failed or the clock could not be read. */
typedef struct cc_bench_firmware_decode_result {
    uint64_t nanos;    /* CLOCK_MONOTONIC time of the whole run */
    uint64_t messages; /* InputEvents unpacked (unpack != 0), or STREAM_MESSAGE envelopes parsed */
    uint64_t checksum; /* the unpacked events' timestamps (or the envelopes' sequence numbers), summed */
} cc_bench_firmware_decode_result_t;

int cc_bench_firmware_decode(const uint8_t *wire, size_t length, size_t loops, int unpack,
                             cc_bench_firmware_decode_result_t *out);

/* camctl-bench scale (cc_bench_scale.c). A pseudo-terminal, raw: returns the master's descriptor
 * (non-blocking) and writes the subordinate's path into path, or returns -1. */
int cc_bench_scale_open_pty(char *path, size_t cap);

/* The feeder: `count` simulated devices (the real firmware, ccsim_device_t) on one thread in real time,
 * 1 ms steps, each behind one of `master_fds`. NULL when it cannot start. */
typedef struct cc_bench_feeder cc_bench_feeder_t;
cc_bench_feeder_t *cc_bench_feeder_start(int count, const int *master_fds);
/* The feeder thread's CPU time so far (ns), and its 1 ms steps that started over a step late. */
uint64_t cc_bench_feeder_cpu_ns(const cc_bench_feeder_t *feeder);
uint64_t cc_bench_feeder_late_steps(const cc_bench_feeder_t *feeder);
/* Stops the thread and frees everything (the descriptors stay open). */
void cc_bench_feeder_stop(cc_bench_feeder_t *feeder);

/* What the minimal C host counted over its measured window. */
typedef struct cc_bench_c_host_counts {
    uint64_t frames;      /* good frames */
    uint64_t samples;     /* raw samples received */
    uint64_t lost;        /* samples the device dropped (dropped_before) or that never came (timestamp gaps) */
    uint64_t bad_frames;  /* frames that failed COBS, the check or protobuf-c */
    uint64_t streaming;   /* devices whose stream was open at the end */
    uint64_t cpu_ns;      /* the host thread's CPU time over the window */
} cc_bench_c_host_counts_t;

/* The minimal C host: opens `paths`, handshakes, opens one raw sample stream on each, then reads,
 * COBS-decodes, CRC-checks and unpacks (protobuf-c) every frame for warmup_s + seconds on the calling
 * thread; counts over the last `seconds`. Returns 0, or -1 when a port does not open. */
int cc_bench_c_host_run(int count, const char *const *paths, double warmup_s, double seconds,
                        cc_bench_c_host_counts_t *out);

#endif
