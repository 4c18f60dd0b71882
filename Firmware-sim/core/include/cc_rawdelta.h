/*
 * CameraControl firmware core: the delta coding of raw samples (input.proto
 * RawSampleBatch.delta_samples, PROTOCOL.md §7, v1.2).
 *
 * Each sample, in order, against the one before it (the first against force 0,
 * position 0); zigzag(d) = 2d for d >= 0, -2d - 1 for d < 0:
 *
 *   varint  zigzag(force - previous force) * 4 + moved * 2 + touch
 *   varint  zigzag(position - previous position)      only when moved is 1
 *
 * A sample whose force moved by less than 16 mN and whose position did not
 * move takes one byte; the worst case takes 6 (so a batch is sent delta-coded
 * only when that is shorter than its 4-byte records).
 */
#ifndef CC_RAWDELTA_H
#define CC_RAWDELTA_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Delta-codes `count` 4-byte records (RawSampleBatch.samples, little-endian)
 * into out[0..cap); returns the length, or 0 when it needs more than cap bytes. */
size_t cc_rawdelta_encode(const uint8_t *records, size_t count, uint8_t *out, size_t cap);

#ifdef __cplusplus
}
#endif

#endif /* CC_RAWDELTA_H */
