/*
 * CameraControl firmware core: the device.
 *
 * One cc_device_t is one device: link (framing, envelope, sequence numbers,
 * reliable retransmission, heartbeats), RPC dispatch, the v1 services and the
 * input pipeline. All storage is inside the struct (no heap); the caller
 * allocates it, usually statically. Several devices may live in one process
 * (the simulator and the benchmarks do that).
 *
 * Main loop of a port:   cc_device_init(&dev, &hal, &info);
 *                        for (;;) cc_device_poll(&dev);
 */
#ifndef CC_DEVICE_H
#define CC_DEVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cc_config.h"
#include "cc_counters.h"
#include "cc_device_info.h"
#include "cc_hal.h"
#include "cc_input.h"
#include "cc_settings.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Compile-time sizes (CC_MAX_FRAME_BYTES, CC_MAX_CONCURRENT_CALLS,
 * CC_RELIABLE_SLOTS, CC_TX_BUFFER_BYTES, CC_HEARTBEAT_INTERVAL_MS, ...): cc_config.h. */

/* The protocol version this core speaks (CC_PROTOCOL_MAJOR, CC_PROTOCOL_MINOR),
 * cc_device_info_t (what the device says about itself), cc_extension_fn (a
 * handler for the services the core does not serve) and cc_device_t:
 * cc_device_info.h, included above. */

/* Starts a device: default configuration, no session. hal and info must
 * outlive the device; the device must not be moved afterwards. Calls
 * hal->now_us once. A core built with CC_HAL_BOARD_INFO (cc_device_info.h)
 * announces its board's constants and does not read info, which may be NULL. */
void cc_device_init(cc_device_t *dev, const cc_hal_t *hal, const cc_device_info_t *info);

/* Installs the extension handler; is_simulator is announced in Capabilities. */
void cc_device_set_extension(cc_device_t *dev, cc_extension_fn fn, void *ctx, bool is_simulator);

/* The speed of the board's serial line in bits per second (8N1), 0 when it is
 * not a UART or is fast (the default after cc_device_init): on a slow line
 * the retransmission timeouts allow for the host's ACK's time on the wire
 * (cc_link_set_line_speed). Call it after cc_device_init. */
void cc_device_set_line_speed(cc_device_t *dev, uint32_t bits_per_second);

/* Does all work that is due: reads the UART, dispatches, samples the sensors
 * when a sample period has passed, streams events, retransmits, heartbeats,
 * writes the UART. Call it at least once per sample period. */
void cc_device_poll(cc_device_t *dev);

/* The link and call counters (DiagnosticsService reports the same). */
const cc_counters_t *cc_device_counters(const cc_device_t *dev);

/* The configuration in force. */
const cc_input_config_t *cc_device_config(const cc_device_t *dev);

/* True between a successful handshake and the link being declared dead. */
bool cc_device_session_active(const cc_device_t *dev);

/* True while the host has InputService/StreamInputEvents open: input events
 * have somewhere to go. */
bool cc_device_input_stream_open(const cc_device_t *dev);

/* The device did not run for stall_us and is catching up, now at now_us, by a step of step_us of its time
 * (a simulator the host OS did not schedule; a board held up by a long flash write). What it sends while it
 * catches up reaches the host too late for an answer (a handshake response, after which a host starts its
 * heartbeats), so after a stall shorter than the dead timeout (4 heartbeat intervals, PROTOCOL.md §8) the
 * step does not count as host silence: the host, whose own timer ran in real time, has not given up
 * either. Host silence before the stall and after the catch-up still counts, so a host that really stopped
 * (or whose bytes a test's filter drops) is still declared dead, however often the machine stalls the
 * device. After a longer stall the host has declared the link dead itself, and so may the device. Call it
 * before each catch-up step with the stall's length when the catch-up began, never in normal running. */
void cc_device_note_stall(cc_device_t *dev, uint64_t now_us, uint64_t stall_us, uint64_t step_us);

/* For a HAL (or a simulator's filter) that holds a frame's bytes back until its delimiter: bytes of one host
 * frame are arriving at now_us. The link is not declared dead while they keep coming (PROTOCOL.md §8,
 * v1.2), as the core does for a frame whose bytes it has read, if the frame began while the link was alive;
 * it counts as valid only once it has passed its check. Never needed when the HAL hands the core every byte
 * as it arrives. */
void cc_device_note_frame_arriving(cc_device_t *dev, uint64_t now_us);

/* The user's settings in force (ConfigService/GetSettings reports the same). */
const cc_settings_t *cc_device_settings(const cc_device_t *dev);

/* Changes the user's settings as ConfigService/SetSettings does: next is the
 * whole set (cc_device_settings with some fields changed); it is written to
 * the settings store when the HAL has one and takes effect at once (the
 * light-press thresholds of its force, the gates of the input pipeline).
 * Returns 0 (CC_STATUS_OK), or the status SetSettings answers with *why set
 * to a static text: INVALID_ARGUMENT for a value out of range,
 * FAILED_PRECONDITION for a force that does not fit the configured full
 * press, INTERNAL for a failed write. A simulator's scenario changes them so
 * (the `settings` step, SIMULATOR.md §3). */
uint8_t cc_device_change_settings(cc_device_t *dev, const cc_settings_t *next, const char **why);

/* The session_id of the last successful handshake (0 before the first). */
uint32_t cc_device_session_id(const cc_device_t *dev);

/* True when Configure accepts this sample rate (100, 250, 500, 1000 Hz);
 * the same list is announced in Capabilities.sample_rates_hz. */
bool cc_device_sample_rate_supported(uint32_t hz);

/* Number of calls (server streams) in flight. */
size_t cc_device_calls_in_flight(const cc_device_t *dev);

/*
 * Notes on the services (PROTOCOL.md leaves these to the device):
 * - DiagnosticsService/ResetCounters answers with the counters as they were
 *   just before they were cleared.
 * - A new handshake and a dead link end every call silently and count each
 *   in cancelled_calls.
 * - StreamRawSamples: samples_per_batch 0 means CC_RAW_DEFAULT_SAMPLES_PER_BATCH;
 *   larger requests are clamped to what fits (CC_RAW_MAX_SAMPLES_PER_BATCH).
 * - A REQUEST with call id 0 is an envelope error (nowhere to answer; the
 *   envelope parser refuses call id 0 on every type but ACK and HEARTBEAT).
 * - A handshake is always served (even with the call table full); any other
 *   call before one gets FAILED_PRECONDITION.
 * - A request over a bound of its generated reader (core/cc_pb.limits) gets
 *   RESOURCE_EXHAUSTED; a payload that does not parse, INVALID_ARGUMENT.
 * - The device plays HAPTIC_PATTERN_CLICK at every FULL_PRESS_DOWN and
 *   HAPTIC_PATTERN_RELEASE at every FULL_PRESS_UP itself (if hal->haptic_play
 *   is set and the core was not built with CC_HAL_NO_HAPTIC: cc_hal.h).
 * More in Firmware-sim/core/README.md.
 */

#ifdef __cplusplus
}
#endif

/* The struct's definition (fields private to the core). */
#include "cc_device_state.h"

#endif /* CC_DEVICE_H */
