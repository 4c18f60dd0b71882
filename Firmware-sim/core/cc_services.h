/*
 * CameraControl firmware core: the v1 methods (private). DeviceService,
 * ConfigService, FeedbackService, DiagnosticsService and InputService's
 * stream openers, as a dispatch table for cc_rpc.c. Layer order in README.md.
 */
#ifndef CC_SERVICES_H
#define CC_SERVICES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cc_rpc_reply.h"

/* The table of the v1 methods; *count is set to its length. */
const cc_method_t *cc_services_methods(size_t *count);

/* True when Configure accepts this sample rate (the list announced in Capabilities). */
bool cc_services_sample_rate_supported(uint32_t hz);

/* Boot: reads the settings store through the HAL (cc_hal_t.settings_read)
 * and applies the settings it holds: the light-press thresholds of their
 * force and the gates of the input pipeline. Called by cc_device_init. */
void cc_services_load_settings(cc_device_t *dev, uint64_t now_us);

/* SetSettings without the wire (cc_device_change_settings). */
uint8_t cc_services_change_settings(cc_device_t *dev, const cc_settings_t *next, uint64_t now_us, const char **why);

#endif /* CC_SERVICES_H */
