/* camctl-bench's C: a bump allocator over a static block for protobuf-c's unpack (no heap per
 * message), as the firmware core once used; the firmware now reads with its generated codec. */
#ifndef CC_BENCH_ARENA_H
#define CC_BENCH_ARENA_H

#include <protobuf-c/protobuf-c.h>

/* The allocator, emptied first: everything unpacked before is gone. */
ProtobufCAllocator *cc_bench_arena(void);

#endif
