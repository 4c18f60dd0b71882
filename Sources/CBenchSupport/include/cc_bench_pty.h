#ifndef CC_BENCH_PTY_H
#define CC_BENCH_PTY_H

#include <stddef.h>
#include <stdint.h>

/* What one run of cc_bench_idle_c_link cost the calling thread. */
typedef struct {
    uint64_t cpu_micros;       /* user + system CPU time of the calling thread */
    uint64_t context_switches; /* voluntary + involuntary, of the calling thread */
    uint64_t wall_micros;      /* monotonic time the run took */
    uint64_t frames_received;  /* heartbeat frames read (both directions) */
} cc_bench_idle_cost;

/* The idle-session baseline: a minimal C event loop over a fresh pseudo-terminal pair that does an
 * idle link's heartbeat work for `seconds`, in the calling thread. Every `interval_micros` it writes the
 * `frame_length`-byte frame `frame` to each end, and it sleeps in poll() until the next heartbeat or
 * input; what arrives is read and its frames counted at each 0x00. Returns 0, or -1 when the pty cannot
 * be opened (errno set). Linux (RUSAGE_THREAD); elsewhere it returns -1. */
int cc_bench_idle_c_link(double seconds, uint32_t interval_micros, const uint8_t *frame, size_t frame_length,
                         cc_bench_idle_cost *cost);

/* Opens a raw pseudo-terminal pair: the master's descriptor in *master, the subordinate's path in `path`
 * (for the transport under test to open). Returns 0, or -1 (errno set). */
int cc_bench_open_pty(int *master, char *path, size_t path_size);

/* The bare one-way pty floor: `count` times, writes 2 bytes on a fresh pair's master and reads them on
 * its subordinate with blocking read(), in the calling thread; `micros[i]` is write() called → both bytes
 * read. Returns 0, or -1 (errno set). */
int cc_bench_pty_one_way(size_t count, double *micros);

/* The host-stack baseline, the same shape as `camctl-bench latency`'s host stack: `count` times, the
 * calling thread writes the `frame_length`-byte `frame` (ending in 0x00) to a fresh pair's master while
 * a second thread sleeps in poll() on the subordinate; that thread reads until the frame's 0x00 and
 * stamps the time; the writer waits for it, then sleeps `gap_micros` (200 µs: the reader is back asleep in
 * poll(), its code and data still in the caches; 20 ms: as between a person's presses, and cold).
 * `micros[i]` is write() called → frame read, across the thread wake-up a real host pays. Returns 0, or -1
 * (errno set). */
int cc_bench_pty_cross_thread(size_t count, const uint8_t *frame, size_t frame_length, unsigned gap_micros,
                              double *micros);

#endif
