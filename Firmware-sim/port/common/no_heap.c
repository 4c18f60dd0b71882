/*
 * Every board port: protobuf-c's default allocator without a heap.
 *
 * The core passes its arena's ProtobufCAllocator to every protobuf-c call,
 * but protobuf-c.c still names malloc and free in its fallback allocator
 * (used only when a caller passes NULL). The board build (port/firmware.mk) compiles protobuf-c.c
 * with -Dmalloc=port_no_malloc -Dfree=port_no_free, so that fallback
 * lands here, fails every allocation, and newlib's malloc, free and _sbrk are
 * not linked at all (scripts/test-microbit and scripts/test-stm32 check the map files).
 */
#include <stddef.h>

void *port_no_malloc(size_t size);
void port_no_free(void *p);

void *port_no_malloc(size_t size)
{
    (void)size;
    return NULL;
}

void port_no_free(void *p)
{
    (void)p;
}
