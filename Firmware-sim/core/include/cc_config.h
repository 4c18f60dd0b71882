/*
 * CameraControl firmware core: compile-time sizes. Override any with -D.
 */
#ifndef CC_CONFIG_H
#define CC_CONFIG_H

/* Unstuffed frame (envelope + payload + check), announced in Capabilities.
 * 1024 lets a host send a whole scenario or a long status message in one
 * frame; a board short of RAM may build with -DCC_MAX_FRAME_BYTES=256.
 * Between CC_WIRE_MIN_MAX_FRAME_BYTES (128) and CC_WIRE_MAX_MAX_FRAME_BYTES. */
#ifndef CC_MAX_FRAME_BYTES
#define CC_MAX_FRAME_BYTES 1024u
#endif
/* Calls in flight at once (at least 4); more get RESOURCE_EXHAUSTED. */
#ifndef CC_MAX_CONCURRENT_CALLS
#define CC_MAX_CONCURRENT_CALLS 8u
#endif
/* Reliable packets awaiting an ACK. */
#ifndef CC_RELIABLE_SLOTS
#define CC_RELIABLE_SLOTS 16u
#endif
/* Wire bytes waiting for the UART: 2 KB, or two largest frames if more. */
#ifndef CC_TX_BUFFER_BYTES
#define CC_TX_BUFFER_BYTES (2u * CC_MAX_FRAME_BYTES + 64u > 2048u ? 2u * CC_MAX_FRAME_BYTES + 64u : 2048u)
#endif
/* Bulk queue: bodies of best-effort bulk packets (raw sample batches), which
 * go to the UART only when nothing else waits (PROTOCOL.md §6, Priority).
 * Holds two or more full raw batches; more only makes samples staler on a
 * slow UART (at 9600 baud 384 bytes are 0.4 s of line time). */
#ifndef CC_TX_BULK_BYTES
#define CC_TX_BULK_BYTES 384u
#endif
/* Heartbeat after this long without sending, once a session runs. */
#ifndef CC_HEARTBEAT_INTERVAL_MS
#define CC_HEARTBEAT_INTERVAL_MS 50u
#endif

/* Bytes of the static arena protobuf-c unpacks one request into: 2 KB, or a
 * largest frame and 512 bytes if more (a Ping of a whole 4093-byte frame). */
#ifndef CC_ARENA_BYTES
#define CC_ARENA_BYTES (CC_MAX_FRAME_BYTES + 512u > 2048u ? CC_MAX_FRAME_BYTES + 512u : 2048u)
#endif

/* Wire bytes of the reliable packets awaiting an ACK, shared by the slots.
 * v1.1 sends responses and errors reliably (PROTOCOL.md §6): room for one
 * response of a full frame plus 48 bytes per slot (an input event is about
 * 30). A reliable packet that finds no room is sent once, unprotected. */
#ifndef CC_RELIABLE_STORE_BYTES
#define CC_RELIABLE_STORE_BYTES \
    (CC_MAX_FRAME_BYTES + (CC_MAX_FRAME_BYTES + 253u) / 254u + 1u + 48u * CC_RELIABLE_SLOTS)
#endif

/* Most samples in one RawSampleBatch (a stream asking for more gets this). */
#ifndef CC_RAW_MAX_SAMPLES_PER_BATCH
#define CC_RAW_MAX_SAMPLES_PER_BATCH 32u
#endif

/* Samples per batch when the request says 0. */
#ifndef CC_RAW_DEFAULT_SAMPLES_PER_BATCH
#define CC_RAW_DEFAULT_SAMPLES_PER_BATCH 25u
#endif

/* Bytes read from the UART per read call. */
#ifndef CC_UART_CHUNK_BYTES
#define CC_UART_CHUNK_BYTES 64u
#endif

/* Most bytes taken from the UART in one poll, so that a flood cannot hold
 * the main loop (the rest waits for the next poll). */
#ifndef CC_UART_MAX_BYTES_PER_POLL
#define CC_UART_MAX_BYTES_PER_POLL 4096u
#endif

/* Haptic intensity used for the device's own clicks and for requests that say 0. */
#ifndef CC_DEFAULT_HAPTIC_INTENSITY
#define CC_DEFAULT_HAPTIC_INTENSITY 100u
#endif

/* Checks of the sizes (PROTOCOL.md §2, §7). */
#if CC_MAX_FRAME_BYTES < 128u || CC_MAX_FRAME_BYTES > 4093u
#error "CC_MAX_FRAME_BYTES must be 128..4093 (PROTOCOL.md, Frame size)"
#endif
#if CC_MAX_CONCURRENT_CALLS < 4u
#error "CC_MAX_CONCURRENT_CALLS must be at least 4 (PROTOCOL.md, Calls)"
#endif
#if CC_TX_BUFFER_BYTES < CC_MAX_FRAME_BYTES + (CC_MAX_FRAME_BYTES + 253u) / 254u + 1u
#error "CC_TX_BUFFER_BYTES must hold at least one frame of CC_MAX_FRAME_BYTES"
#endif
#if CC_TX_BULK_BYTES < 64u || CC_TX_BULK_BYTES > 65535u
#error "CC_TX_BULK_BYTES must be 64..65535"
#endif
#if CC_RELIABLE_STORE_BYTES < 64u || CC_RELIABLE_STORE_BYTES > 65535u
#error "CC_RELIABLE_STORE_BYTES must be 64..65535"
#endif
#if CC_RELIABLE_SLOTS < 1u
#error "CC_RELIABLE_SLOTS must be at least 1"
#endif

#endif /* CC_CONFIG_H */
