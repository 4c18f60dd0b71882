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

#endif
