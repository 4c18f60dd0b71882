/*
 * CameraControl firmware core: a ProtobufCAllocator over a static arena.
 *
 * protobuf-c unpacks each request into the arena; the core resets it before
 * every message, so nothing is ever freed one by one and no heap is used.
 * An allocation that does not fit fails (protobuf-c then returns NULL) and
 * marks the arena exhausted so the caller can tell "too big" from "malformed".
 * The arena must not move after cc_arena_init (the allocator points at it).
 */
#ifndef CC_ARENA_H
#define CC_ARENA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <protobuf-c/protobuf-c.h>

#include "cc_config.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CC_ARENA_ALIGN 8u

typedef struct cc_arena {
    uint64_t words[(CC_ARENA_BYTES + 7u) / 8u];   /* 8-byte aligned storage */
    size_t used;
    bool exhausted;
    ProtobufCAllocator allocator;
} cc_arena_t;

void cc_arena_init(cc_arena_t *arena);

/* Forgets every allocation. */
void cc_arena_reset(cc_arena_t *arena);

/* The allocator to pass to protobuf-c's unpack functions. */
ProtobufCAllocator *cc_arena_allocator(cc_arena_t *arena);

/* True when an allocation failed since the last reset. */
bool cc_arena_exhausted(const cc_arena_t *arena);

/* Bytes in use since the last reset. */
size_t cc_arena_used(const cc_arena_t *arena);

#ifdef __cplusplus
}
#endif

#endif /* CC_ARENA_H */
