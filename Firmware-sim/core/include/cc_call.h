/*
 * CameraControl firmware core: the table of calls in flight (PROTOCOL.md §7).
 *
 * Unary calls are answered while their request is dispatched, so the table
 * holds the long-lived ones: server streams. A slot is free when kind is
 * CC_CALL_FREE.
 */
#ifndef CC_CALL_H
#define CC_CALL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cc_config.h"
#include "cc_wire.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum cc_call_kind {
    CC_CALL_FREE = 0,
    CC_CALL_EVENT_STREAM,   /* InputService/StreamInputEvents */
    CC_CALL_RAW_STREAM      /* InputService/StreamRawSamples */
} cc_call_kind_t;

/* Bytes of one raw sample record (input.proto RawSampleBatch.samples). */
#define CC_RAW_RECORD_BYTES CC_WIRE_RAW_RECORD_BYTES

/* Button level changes one batch holds (RawSampleBatch.button_levels); a
 * batch that would need more ends early. Eight hold a bouncing press and its
 * release (docs/SIMULATOR.md: 1 to 4 ms of chatter an edge at 1 kHz). */
#ifndef CC_RAW_MAX_BUTTON_CHANGES
#define CC_RAW_MAX_BUTTON_CHANGES 8u
#endif

/* A raw sample stream's batch under construction. */
typedef struct cc_raw_batch {
    uint16_t samples_per_batch;
    uint16_t count;                 /* records in this batch so far */
    uint8_t buttons;                /* the levels of the batch's last sample (0 before its first) */
    uint8_t button_change_count;    /* entries in button_changes */
    uint16_t button_changes[CC_RAW_MAX_BUTTON_CHANGES];   /* sample_index * 16 + levels */
    uint32_t interval_us;           /* sample period of the records */
    uint64_t first_timestamp_us;
    uint32_t dropped_before;        /* samples dropped since the last batch sent */
    uint8_t records[CC_RAW_MAX_SAMPLES_PER_BATCH * CC_RAW_RECORD_BYTES];
} cc_raw_batch_t;

typedef struct cc_call {
    uint32_t id;
    uint8_t kind;                   /* cc_call_kind_t */
    cc_raw_batch_t raw;             /* CC_CALL_RAW_STREAM only */
} cc_call_t;

typedef struct cc_call_table {
    cc_call_t calls[CC_MAX_CONCURRENT_CALLS];
    uint8_t raw_streams;            /* calls of kind CC_CALL_RAW_STREAM (0: no sample to batch) */
} cc_call_table_t;

void cc_call_table_init(cc_call_table_t *table);

/* The call in flight with this id, or NULL. */
cc_call_t *cc_call_find(cc_call_table_t *table, uint32_t id);

/* Takes a free slot for a new call; NULL when the table is full. */
cc_call_t *cc_call_open(cc_call_table_t *table, uint32_t id, cc_call_kind_t kind);

void cc_call_close(cc_call_table_t *table, cc_call_t *call);

/* Calls in flight. */
size_t cc_call_count(const cc_call_table_t *table);

/* Ends every call (no packets are sent). Returns how many were open. */
size_t cc_call_table_clear(cc_call_table_t *table);

#ifdef __cplusplus
}
#endif

#endif /* CC_CALL_H */
