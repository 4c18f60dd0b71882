/*
 * CameraControl simulator: a whole simulated device in one struct.
 *
 * A ccsim_device_t bundles the real firmware core (cc_device_t) with a
 * virtual HAL: a virtual clock, host<->device byte rings, the finger and
 * button model, the scenario player, the SimulatorService and a log of the
 * feedback (haptics, sounds, indicator) the firmware produced. Nothing in it
 * calls the OS, so it runs in-process (Swift tests) as well as behind the
 * camctl-sim pseudo-terminal. Same seed and same inputs give the same bytes.
 *
 *   ccsim_device_t *sim = ...;            // must not move after init
 *   ccsim_device_init(sim, 42);
 *   ccsim_device_host_write(sim, frame, n);
 *   ccsim_device_advance(sim, 1000);      // 1 ms of device time
 *   n = ccsim_device_host_read(sim, buf, sizeof buf);
 */
#ifndef CCSIM_DEVICE_H
#define CCSIM_DEVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cc_device.h"
#include "ccsim_model.h"
#include "ccsim_scenario.h"

#ifdef __cplusplus
extern "C" {
#endif

#ifndef CCSIM_RX_BYTES
#define CCSIM_RX_BYTES 8192u      /* host -> device bytes not yet read by the firmware */
#endif
#ifndef CCSIM_TX_BYTES
#define CCSIM_TX_BYTES 65536u     /* device -> host bytes not yet read by the host */
#endif
#ifndef CCSIM_FEEDBACK_LOG
#define CCSIM_FEEDBACK_LOG 64u    /* feedback records kept (oldest dropped) */
#endif

/* Board description of the simulated device. */
#define CCSIM_SLIDE_RESOLUTION 1024u
#define CCSIM_FORCE_MAX_MN 10000u
/* Scenarios never start before this device time, so the firmware's start-up
 * tare sees an untouched sensor first. */
#define CCSIM_BOOT_SETTLE_US 100000u

/* A byte ring. */
typedef struct ccsim_ring {
    uint8_t *buf;
    size_t cap;
    size_t head;    /* oldest byte */
    size_t len;
} ccsim_ring_t;

/* What a feedback record is. */
typedef enum ccsim_feedback_kind {
    CCSIM_FEEDBACK_HAPTIC = 1,     /* a = cameracontrol.v1.HapticPattern, b = intensity % */
    CCSIM_FEEDBACK_SOUND = 2,      /* a = cameracontrol.v1.Sound */
    CCSIM_FEEDBACK_INDICATOR = 3   /* a = cameracontrol.v1.IndicatorMode, b = 0xRRGGBB */
} ccsim_feedback_kind_t;

/* One feedback the firmware started through the HAL. */
typedef struct ccsim_feedback {
    uint64_t timestamp_us;
    uint32_t kind;    /* ccsim_feedback_kind_t */
    uint32_t a;
    uint32_t b;
} ccsim_feedback_t;

/* One recorded input sample for ccsim_device_replay: what the sensors and
 * buttons read from t_us (after the replay's start) until the next sample. */
typedef struct ccsim_replay_sample {
    uint64_t t_us;
    int32_t force_mn;        /* the applied force (the board's own sensor offset and drift are added) */
    uint16_t position;       /* strip counts, 0 .. slide resolution - 1 */
    bool touched;
    uint8_t buttons;         /* CC_BUTTON_* levels (the firmware debounces them) */
    uint8_t remote_clicks;   /* clicks delivered when this sample is reached */
} ccsim_replay_sample_t;

/* The settings store's size: two slots (core/include/cc_settings.h). Built with
 * CCSIM_NO_STORE (the simulator as a board image, whose RAM a reset clears)
 * the HAL has no store: settings in RAM only, settings_persist false. */
#define CCSIM_STORE_BYTES (CC_SETTINGS_SLOTS * CC_SETTINGS_SLOT_BYTES)

/* Called after every write of the settings store with its whole image (the
 * simulator's flash); false reports the write as failed to the firmware. */
typedef bool (*ccsim_store_hook_fn)(void *ctx, const uint8_t *image, size_t len);

typedef struct ccsim_device {
    /* the firmware and its HAL */
    cc_device_t dev;
    cc_hal_t hal;
    cc_device_info_t info;
    char serial[24];

    uint64_t now_us;
    uint64_t seed;

    ccsim_ring_t rx;
    ccsim_ring_t tx;
    uint8_t rx_buf[CCSIM_RX_BYTES];
    uint8_t tx_buf[CCSIM_TX_BYTES];
    uint32_t rx_dropped;          /* host bytes that did not fit */
    uint32_t rx_dropped_reported; /* of them, told to the firmware (rx_overruns) */

    /* optional UART speed model (0 = unlimited) */
    uint32_t baud;
    uint64_t tx_credit_milli;     /* bytes the wire can take now, x1000 */
    uint64_t rx_credit_milli;
    uint64_t credit_us;           /* device time the credits were last updated */

    /* physics */
    ccsim_finger_t finger;
    ccsim_buttons_t buttons;
    ccsim_player_t player;
    ccsim_command_t manual;       /* finger command when no scenario plays */
    bool manual_active;
    uint32_t remote_clicks;       /* queued for the next reading's remote_clicks */
    bool scenario_noise;          /* a scenario plays: its `noise` steps last until it ends, is stopped or replaced */
    bool noise_outside;           /* the noise to restore then (ccsim_device_set_noise) */

    /* replay (ccsim_device_replay): recorded samples in place of the finger and the contacts */
    const ccsim_replay_sample_t *replay;   /* caller-owned; NULL when none */
    size_t replay_count;
    size_t replay_next;           /* the first sample not reached yet */
    uint64_t replay_start_us;

    /* SimulatorService */
    ccsim_scenario_t parsed;      /* scratch for parsing */
    char message[96];             /* status message of the last failed call */
    bool start_on_handshake;      /* camctl-sim: play `pending` at the first handshake */
    bool pending_valid;
    ccsim_scenario_t pending;
    bool session_seen;            /* the session was active at the last tick */
    uint64_t session_since_us;    /* when it became active */

    /* the settings store's emulated flash: slot 0 then slot 1 (0xFF: erased);
     * it survives ccsim_device_reset, and camctl-sim keeps it in a file */
    uint8_t store[CCSIM_STORE_BYTES];
    ccsim_store_hook_fn store_hook;
    void *store_hook_ctx;

    /* feedback log */
    ccsim_feedback_t feedback[CCSIM_FEEDBACK_LOG];
    uint32_t feedback_head;
    uint32_t feedback_count;
    uint32_t feedback_total;      /* records ever made */
} ccsim_device_t;

/* Initialises everything and boots the firmware at device time 0, with an
 * erased settings store. */
void ccsim_device_init(ccsim_device_t *sim, uint64_t seed);

/* As ccsim_device_init, the settings store holding image (len bytes, at most
 * CCSIM_STORE_BYTES; the rest erased) when the firmware boots. */
void ccsim_device_init_with_store(ccsim_device_t *sim, uint64_t seed, const uint8_t *image, size_t len);

/* Installs the hook that keeps the settings store (camctl-sim: a file). */
void ccsim_device_set_store_hook(ccsim_device_t *sim, ccsim_store_hook_fn hook, void *ctx);

/* The settings store's image (CCSIM_STORE_BYTES). */
const uint8_t *ccsim_device_store(const ccsim_device_t *sim);

/* A reset of the simulated board: the firmware boots again (cc_device_init)
 * and reads the settings store; the bytes in flight both ways are lost. The
 * simulator's clock, finger and scenario go on. */
void ccsim_device_reset(ccsim_device_t *sim);

/* Host -> device bytes; returns how many fit (the rest are dropped and counted). */
size_t ccsim_device_host_write(ccsim_device_t *sim, const uint8_t *bytes, size_t len);
/* Room in the host -> device ring: a caller that can hold bytes back (the
 * pty loop) writes no more than this, so nothing is dropped (PROTOCOL.md §2). */
size_t ccsim_device_host_room(const ccsim_device_t *sim);
/* Device -> host bytes; returns how many were copied (0 if none). */
size_t ccsim_device_host_read(ccsim_device_t *sim, uint8_t *buf, size_t cap);
/* Bytes waiting for the host. */
size_t ccsim_device_host_pending(const ccsim_device_t *sim);

/* Advances device time by micros, in steps of at most one sample period,
 * running the scenario player and cc_device_poll at every step. */
void ccsim_device_advance(ccsim_device_t *sim, uint64_t micros);
/* Runs the firmware once without advancing time (e.g. after host_write). */
void ccsim_device_poll(ccsim_device_t *sim);
uint64_t ccsim_device_now_us(const ccsim_device_t *sim);

/* Parses a scenario and starts it now (not before CCSIM_BOOT_SETTLE_US).
 * Returns 0, or non-zero with *err filled (err may be NULL). */
int ccsim_device_play_scenario(ccsim_device_t *sim, const char *text, size_t len,
                               ccsim_parse_error_t *err);
/* Parses a scenario to start at the host's first handshake (camctl-sim). */
/* How long after its handshake a host that opens no input stream is taken to be listening anyway (a
 * host that only calls: camctl info, a probe). */
#define CCSIM_LISTEN_WAIT_US 1000000u

/* A host is listening: its session is active and it has InputService/StreamInputEvents open, or the
 * session has been active for CCSIM_LISTEN_WAIT_US. What camctl-sim's --scenario and --replay wait for
 * (a host's stream opens after its handshake and clock pings: events made before it went nowhere). */
bool ccsim_device_host_listening(const ccsim_device_t *sim);

int ccsim_device_play_scenario_on_handshake(ccsim_device_t *sim, const char *text, size_t len,
                                            ccsim_parse_error_t *err);
/* Duration of the scenario playing (or queued), microseconds; 0 if none. */
uint64_t ccsim_device_scenario_duration_us(const ccsim_device_t *sim);
bool ccsim_device_scenario_running(const ccsim_device_t *sim);
/* Stops the scenario; the finger lifts. */
void ccsim_device_stop_scenario(ccsim_device_t *sim);

/* Direct control of the finger when no scenario plays (tests). position is
 * 0 .. CCSIM_POS_ONE; buttons CC_BUTTON_* bits. */
void ccsim_device_set_finger(ccsim_device_t *sim, bool touched, int32_t force_mn,
                             uint32_t position, uint32_t buttons);
/* Back to scenario/resting control of the finger. */
void ccsim_device_release_finger(ccsim_device_t *sim);
/* Queues remote clicks for the firmware's next sample. */
void ccsim_device_remote_click(ccsim_device_t *sim, uint32_t count);
/* Replays recorded samples in place of the finger model and the button
 * contacts (a session recorded on a board, docs/SIMULATOR.md): sample k is
 * what read_sensors gives from start + samples[k].t_us (t_us
 * rising) until the next, its remote clicks once. Starts now (not before
 * CCSIM_BOOT_SETTLE_US) and ends one sample period after the last sample;
 * the scenario player and the manual finger are not read meanwhile (before
 * the first sample's time they are, so the tare sees the board). The
 * array is the caller's and must outlive the replay; NULL or 0 stops it. */
void ccsim_device_replay(ccsim_device_t *sim, const ccsim_replay_sample_t *samples, size_t count);
bool ccsim_device_replay_running(const ccsim_device_t *sim);
/* Device time the replay ends, microseconds (0 when none plays). */
uint64_t ccsim_device_replay_end_us(const ccsim_device_t *sim);
/* Models a UART of `baud` bits per second, 8N1 (10 bits per byte), in both
 * directions: the firmware can read and write at most that many bytes per
 * unit of device time (with a 16-byte FIFO of slack). 0 (the default)
 * means unlimited. */
void ccsim_device_set_baud(ccsim_device_t *sim, uint32_t baud);

/* Sensor noise/tremor/jitter and contact bounce on or off (both on after init).
 * A scenario's `noise on|off` step lasts until that scenario ends, is stopped
 * or is replaced by another; then the noise set here is back. */
void ccsim_device_set_noise(ccsim_device_t *sim, bool on);
void ccsim_device_set_bounce(ccsim_device_t *sim, bool on);

/* Feedback records kept (at most CCSIM_FEEDBACK_LOG, oldest first). */
uint32_t ccsim_device_feedback_count(const ccsim_device_t *sim);
/* Record index (0 = oldest kept); false when out of range. */
bool ccsim_device_feedback_at(const ccsim_device_t *sim, uint32_t index, ccsim_feedback_t *out);
/* Forgets the log. */
void ccsim_device_feedback_clear(ccsim_device_t *sim);

/* The firmware's counters and input-queue overflows. */
const cc_counters_t *ccsim_device_counters(const ccsim_device_t *sim);
cc_device_t *ccsim_device_core(ccsim_device_t *sim);

/* The SimulatorService extension handler (installed by ccsim_device_init;
 * ctx is the ccsim_device_t). */
int ccsim_simulator_service(void *ctx, uint8_t service, uint8_t method, const uint8_t *req,
                            size_t req_len, uint8_t *resp, size_t resp_cap, size_t *resp_len,
                            const char **message);

#ifdef __cplusplus
}
#endif

#endif /* CCSIM_DEVICE_H */
