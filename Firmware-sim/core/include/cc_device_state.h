/*
 * CameraControl firmware core: the definition of struct cc_device.
 *
 * Public only so callers can allocate a device statically; every field is
 * private to the core (use the functions of cc_device.h). A device must not
 * be moved or copied after cc_device_init (it points into itself).
 * Included by cc_device.h. Needs nothing of the device's API: the core's
 * lower layers (core/README.md) use the struct without calling upwards.
 */
#ifndef CC_DEVICE_STATE_H
#define CC_DEVICE_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cc_call.h"
#include "cc_counters.h"
#include "cc_device_info.h"   /* cc_device_info_t, cc_extension_fn, cc_device_t */
#include "cc_frame.h"
#include "cc_hal.h"
#include "cc_input.h"
#include "cc_link.h"
#include "cc_settings.h"

/* A method table entry of the core (core/cc_rpc_reply.h); opaque here. */
struct cc_method;
/* A request being answered (core/cc_rpc_reply.h); opaque here. */
struct cc_request;

/* Applies a validated configuration; installed by cc_device_init so that
 * ConfigService (cc_services.c) can change the sampling without calling up
 * into cc_device.c. */
typedef void (*cc_apply_config_fn)(cc_device_t *dev, const cc_input_config_t *cfg, uint64_t now_us);

struct cc_device {
    const cc_hal_t *hal;
    const cc_device_info_t *info;

    /* what every poll reads, ahead of the larger members (small offsets:
     * one load each on a Cortex-M0) */
    uint64_t next_sample_us;
    uint32_t sample_period_us;
    size_t rx_len;
    size_t rx_off;
    /* cc_rpc.c's dispatcher of the extension's services, installed with the
     * extension (cc_device_set_extension); NULL without one, and then an
     * image links no extension dispatch (a board's own). Here it fills the
     * 4 bytes before the link (8-byte aligned): no RAM. */
    void (*extension_dispatch)(cc_device_t *dev, const struct cc_request *rq);
    /* the link next: its own per-poll fields come first in cc_link_t */
    cc_link_t link;

    cc_extension_fn extension;
    void *extension_ctx;
    bool is_simulator;

    /* wiring passed down at cc_device_init: the dispatch table cc_rpc.c
     * serves (cc_services.c's methods) and the config callback */
    const struct cc_method *methods;
    size_t method_count;
    cc_apply_config_fn apply_config;

    cc_counters_t counters;

    /* input pipeline and the configuration in force */
    cc_input_config_t config;
    cc_input_t input;
#if !defined(CC_HAL_CLOCK_FROM_BOOT)
    /* the HAL's clock at boot: Counters.uptime_us is the time since
     * (CC_UPTIME_US; the simulator's clock runs on through a reset) */
    uint64_t boot_us;
#endif
    /* reliable-kind input events published since boot: each event carries
     * the count (InputEvent.reliable_event_number, PROTOCOL.md §6) */
    uint32_t reliable_events;

    /* session */
    uint32_t session_id;
    uint32_t handshakes;
    uint32_t negotiated_minor;
    uint32_t session_call_id;   /* call id of the handshake that started the session */

    /* bytes read from the UART and not yet decoded (held back while the
     * tx buffer lacks room for a reply: backpressure instead of dropped
     * answers) */
    uint8_t rx_chunk[CC_UART_CHUNK_BYTES];   /* rx_chunk[rx_off .. rx_len): see rx_len above */

    /* protocol stack */
    cc_frame_decoder_t decoder;
    cc_call_table_t calls;

    /* the user's settings (ConfigService/GetSettings, SetSettings) and their
     * store; last: no poll reads them */
    cc_settings_store_t settings;
};

#endif /* CC_DEVICE_STATE_H */
