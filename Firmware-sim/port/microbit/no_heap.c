/*
 * micro:bit port: protobuf-c's default allocator without a heap.
 *
 * The core passes its arena's ProtobufCAllocator to every protobuf-c call,
 * but protobuf-c.c still names malloc and free in its fallback allocator
 * (used only when a caller passes NULL). The Makefile compiles protobuf-c.c
 * with -Dmalloc=microbit_no_malloc -Dfree=microbit_no_free, so that fallback
 * lands here, fails every allocation, and newlib's malloc, free and _sbrk are
 * not linked at all (scripts/test-microbit checks the map file).
 */
#include <stddef.h>

void *microbit_no_malloc(size_t size);
void microbit_no_free(void *p);

void *microbit_no_malloc(size_t size)
{
    (void)size;
    return NULL;
}

void microbit_no_free(void *p)
{
    (void)p;
}
