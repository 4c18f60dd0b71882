/* CameraControl firmware core: link and call counters (DiagnosticsService). */
#ifndef CC_COUNTERS_H
#define CC_COUNTERS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Link and call counters; mirrors cameracontrol.v1.Counters. */
typedef struct cc_counters {
    uint32_t frames_received;
    uint32_t frames_sent;
    uint32_t bytes_received;
    uint32_t bytes_sent;
    uint32_t check_errors;
    uint32_t framing_errors;
    uint32_t oversized_frames;
    uint32_t unknown_packet_types;
    uint32_t unimplemented_calls;
    uint32_t invalid_arguments;
    uint32_t cancelled_calls;
    uint32_t retransmissions;
    uint32_t duplicates_dropped;
    uint32_t sequence_gaps;
    uint32_t heartbeat_timeouts;
    uint32_t calls_refused;
    uint32_t tx_dropped;
    uint32_t reliable_given_up;
    uint32_t reliable_unprotected;
} cc_counters_t;

#ifdef __cplusplus
}
#endif

#endif /* CC_COUNTERS_H */
