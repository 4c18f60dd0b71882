/*
 * camctl-sim --replay FILE: the samples of a recording (or a CSV trace) for
 * ccsim_device_replay (docs/SIMULATOR.md, "Replay").
 *
 * One reader of recordings and traces: camctl's (RecordedInput, the Swift
 * tools). camctl-sim runs `camctl export FILE --samples TMP` and reads the
 * replay sample file that writes: a header line, then one sample a line,
 *
 *   # camctl-sim replay samples v1: t_us force_mn position touched buttons remote_clicks
 *   0 0 512 0 0 0
 *   1000 812 512 1 0 0
 *
 * six decimal integers separated by one space (t_us from the first sample,
 * rising or equal; force_mn a signed 32-bit value; position 0..65535;
 * touched 0..1; buttons 0..15; remote_clicks 0..255). The reader is strict,
 * bounded (CCSIM_REPLAY_MAX_SAMPLES samples, CCSIM_REPLAY_MAX_LINE bytes a
 * line) and names the first bad line.
 *
 * Host-side tool code (sim/), not the firmware core: it calls the OS and
 * allocates the samples (once, bounded).
 */
#ifndef CCSIM_REPLAY_H
#define CCSIM_REPLAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "ccsim_device.h"

/* About 16 minutes at 1 kHz (24 MB of samples). */
#define CCSIM_REPLAY_MAX_SAMPLES 1000000u
#define CCSIM_REPLAY_MAX_LINE 128u

/* The sample file's first line (RecordedInput.sampleFileHeader), without its newline. */
extern const char ccsim_replay_header[];

/* Reads a replay sample file from `in`. On success returns true with
 * *samples (malloc'd; the caller's, and it must outlive the replay) and
 * *count (at least 1). On failure returns false, *samples NULL, and
 * `line N: why` (or why) in msg. */
bool ccsim_replay_read(FILE *in, ccsim_replay_sample_t **samples, size_t *count, char *msg, size_t cap);

/* The samples of `file` (a recording or a CSV trace), through `camctl export
 * FILE --samples TMP`. camctl is `camctl_path` when not NULL, else the camctl
 * next to this executable, else `camctl` on PATH. On failure returns false
 * with the reason in msg (camctl's own message when it refused the file). */
bool ccsim_replay_load(const char *file, const char *camctl_path, ccsim_replay_sample_t **samples, size_t *count,
                       char *msg, size_t cap);

#endif
