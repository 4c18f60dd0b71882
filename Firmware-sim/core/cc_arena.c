/* CameraControl firmware core: bump allocator for protobuf-c over a static arena. */
#include "cc_arena.h"

static void *arena_alloc(void *allocator_data, size_t size)
{
    cc_arena_t *arena = (cc_arena_t *)allocator_data;
    size_t rounded = (size + (CC_ARENA_ALIGN - 1u)) & ~(size_t)(CC_ARENA_ALIGN - 1u);
    void *p;

    if (rounded < size || rounded > sizeof arena->words - arena->used) {
        arena->exhausted = true;
        return NULL;
    }
    p = (uint8_t *)arena->words + arena->used;
    arena->used += rounded;
    return p;
}

static void arena_free(void *allocator_data, void *pointer)
{
    (void)allocator_data;   /* everything goes at the next reset */
    (void)pointer;
}

void cc_arena_init(cc_arena_t *arena)
{
    arena->used = 0;
    arena->exhausted = false;
    arena->allocator.alloc = arena_alloc;
    arena->allocator.free = arena_free;
    arena->allocator.allocator_data = arena;
}

void cc_arena_reset(cc_arena_t *arena)
{
    arena->used = 0;
    arena->exhausted = false;
}

ProtobufCAllocator *cc_arena_allocator(cc_arena_t *arena)
{
    return &arena->allocator;
}

bool cc_arena_exhausted(const cc_arena_t *arena)
{
    return arena->exhausted;
}

size_t cc_arena_used(const cc_arena_t *arena)
{
    return arena->used;
}
