#define _GNU_SOURCE
#include "cc_bench_support.h"

#include "bench_arena.h"

#include <errno.h>
#include <stdlib.h>

#include "cameracontrol/v1/input.pb-c.h"

#if defined(__GLIBC__)
extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *pointer, size_t size);
extern void *__libc_memalign(size_t alignment, size_t size);

static volatile int counting;
static volatile uint64_t allocations;

void cc_bench_alloc_counting(int on) { counting = on; }
uint64_t cc_bench_alloc_count(void) { return allocations; }

void *malloc(size_t size) {
    if (counting) __atomic_add_fetch(&allocations, 1, __ATOMIC_RELAXED);
    return __libc_malloc(size);
}

void *calloc(size_t count, size_t size) {
    if (counting) __atomic_add_fetch(&allocations, 1, __ATOMIC_RELAXED);
    return __libc_calloc(count, size);
}

void *realloc(void *pointer, size_t size) {
    if (counting) __atomic_add_fetch(&allocations, 1, __ATOMIC_RELAXED);
    return __libc_realloc(pointer, size);
}

int posix_memalign(void **out, size_t alignment, size_t size) {
    if (counting) __atomic_add_fetch(&allocations, 1, __ATOMIC_RELAXED);
    void *pointer = __libc_memalign(alignment, size);
    if (pointer == NULL) return ENOMEM;
    *out = pointer;
    return 0;
}

void *aligned_alloc(size_t alignment, size_t size) {
    if (counting) __atomic_add_fetch(&allocations, 1, __ATOMIC_RELAXED);
    return __libc_memalign(alignment, size);
}
#else
void cc_bench_alloc_counting(int on) { (void)on; }
uint64_t cc_bench_alloc_count(void) { return 0; }
#endif

int cc_bench_unpack_input_event(const uint8_t *data, size_t length) {
    Cameracontrol__V1__InputEvent *event = cameracontrol__v1__input_event__unpack(NULL, length, data);
    if (event == NULL) return 0;
    int kind = (int)event->kind;
    cameracontrol__v1__input_event__free_unpacked(event, NULL);
    return kind;
}

/* A bump allocator over a static block, reset for every message. */
static unsigned char arena_block[1024];
static size_t arena_used;

static void *arena_alloc(void *data, size_t size) {
    (void)data;
    size = (size + 15u) & ~(size_t)15u;
    if (arena_used + size > sizeof arena_block) return NULL;
    void *pointer = arena_block + arena_used;
    arena_used += size;
    return pointer;
}

static void arena_free(void *data, void *pointer) {
    (void)data;
    (void)pointer;
}

static ProtobufCAllocator arena_allocator = {arena_alloc, arena_free, NULL};

ProtobufCAllocator *cc_bench_arena(void) {
    arena_used = 0;
    return &arena_allocator;
}

int cc_bench_unpack_input_event_arena(const uint8_t *data, size_t length) {
    Cameracontrol__V1__InputEvent *event = cameracontrol__v1__input_event__unpack(cc_bench_arena(), length, data);
    return event == NULL ? 0 : (int)event->kind;
}
