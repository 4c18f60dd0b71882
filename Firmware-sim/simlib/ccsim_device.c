/*
 * CameraControl simulator: the in-process device (see ccsim_device.h).
 */
#include "ccsim_device.h"

#include <stdio.h>
#include <string.h>

#include "cc_ids.h"
#include "cc_pb.h"
#include "cc_wire.h"

/* ------------------------------------------------------------------- rings */

static void ring_init(ccsim_ring_t *r, uint8_t *buf, size_t cap)
{
    r->buf = buf;
    r->cap = cap;
    r->head = 0;
    r->len = 0;
}

static size_t ring_put(ccsim_ring_t *r, const uint8_t *src, size_t n)
{
    size_t i, room = r->cap - r->len;
    if (n > room) {
        n = room;
    }
    for (i = 0; i < n; i++) {
        r->buf[(r->head + r->len + i) % r->cap] = src[i];
    }
    r->len += n;
    return n;
}

static size_t ring_get(ccsim_ring_t *r, uint8_t *dst, size_t cap)
{
    size_t i, n = r->len < cap ? r->len : cap;
    for (i = 0; i < n; i++) {
        dst[i] = r->buf[(r->head + i) % r->cap];
    }
    r->head = (r->head + n) % r->cap;
    r->len -= n;
    return n;
}

/* --------------------------------------------------------------------- HAL */

static uint64_t hal_now_us(void *ctx)
{
    return ((ccsim_device_t *)ctx)->now_us;
}

/* UART FIFO depth of the speed model: the most bytes that can pile up as credit. */
#define UART_FIFO_BYTES 16u

static void update_credit(ccsim_device_t *sim)
{
    uint64_t dt = sim->now_us - sim->credit_us;
    uint64_t cap = (uint64_t)UART_FIFO_BYTES * 1000u;
    /* bytes per us = baud / 10 / 1e6; credit in milli-bytes */
    uint64_t gain = dt > 1000000u ? cap : dt * (uint64_t)sim->baud / 10000u;
    sim->credit_us = sim->now_us;
    sim->tx_credit_milli = sim->tx_credit_milli + gain > cap ? cap : sim->tx_credit_milli + gain;
    sim->rx_credit_milli = sim->rx_credit_milli + gain > cap ? cap : sim->rx_credit_milli + gain;
}

static size_t limit(ccsim_device_t *sim, uint64_t *credit_milli, size_t n)
{
    size_t allowed;
    if (sim->baud == 0u) {
        return n;
    }
    update_credit(sim);
    allowed = (size_t)(*credit_milli / 1000u);
    if (n > allowed) {
        n = allowed;
    }
    *credit_milli -= (uint64_t)n * 1000u;
    return n;
}

static size_t hal_uart_read(void *ctx, uint8_t *buf, size_t cap)
{
    ccsim_device_t *sim = (ccsim_device_t *)ctx;
    size_t n = sim->rx.len < cap ? sim->rx.len : cap;
    return ring_get(&sim->rx, buf, limit(sim, &sim->rx_credit_milli, n));
}

/* The bytes host_write had to drop are the UART's overruns. */
static uint32_t hal_uart_take_overruns(void *ctx)
{
    ccsim_device_t *sim = (ccsim_device_t *)ctx;
    uint32_t n = sim->rx_dropped - sim->rx_dropped_reported;
    sim->rx_dropped_reported = sim->rx_dropped;
    return n;
}

static size_t hal_uart_write(void *ctx, const uint8_t *buf, size_t len)
{
    ccsim_device_t *sim = (ccsim_device_t *)ctx;
    size_t room = sim->tx.cap - sim->tx.len;
    size_t n = len < room ? len : room;
    return ring_put(&sim->tx, buf, limit(sim, &sim->tx_credit_milli, n));
}

static const ccsim_command_t *current_command(ccsim_device_t *sim)
{
    if (sim->manual_active && !ccsim_player_running(&sim->player)) {
        return &sim->manual;
    }
    return &sim->player.command;
}

static uint32_t sample_period_us(const ccsim_device_t *sim);

/* The replay's sample for now (moving past the samples reached, queuing
 * their remote clicks), or NULL when no replay plays. */
static const ccsim_replay_sample_t *replay_sample(ccsim_device_t *sim)
{
#ifdef CCSIM_NO_REPLAY   /* a board image never replays: keep its flash */
    (void)sim;
    return 0;
#else
    if (sim->replay == 0) {
        return 0;
    }
    while (sim->replay_next < sim->replay_count &&
           sim->replay_start_us + sim->replay[sim->replay_next].t_us <= sim->now_us) {
        sim->remote_clicks += sim->replay[sim->replay_next].remote_clicks;
        sim->replay_next++;
    }
    if (sim->now_us >= ccsim_device_replay_end_us(sim)) {
        sim->replay = 0;   /* ended: the finger model again */
        return 0;
    }
    if (sim->replay_next == 0u) {
        return 0;          /* not started: the finger model (the tare sees the untouched board) */
    }
    return &sim->replay[sim->replay_next - 1u];
#endif
}

/* The finger model's (or the replay's) force, touch and position. */
static void read_finger(void *ctx, cc_sensor_reading_t *out)
{
    ccsim_device_t *sim = (ccsim_device_t *)ctx;
    const ccsim_replay_sample_t *r = replay_sample(sim);
    if (r != 0) {
        /* this board's unloaded reading (offset and drift) under the recorded force */
        int64_t drift = ((int64_t)sim->finger.drift_mn_per_ks * (int64_t)(sim->now_us / 1000u)) / 1000000;
        out->force_raw_mn = r->force_mn + sim->finger.baseline_offset_mn + (int32_t)drift;
        out->position = r->position;
        out->touched = r->touched;
        return;
    }
    ccsim_finger_read(&sim->finger, sim->now_us, current_command(sim), out);
}

static uint32_t read_buttons(void *ctx)
{
    ccsim_device_t *sim = (ccsim_device_t *)ctx;
    const ccsim_replay_sample_t *r = replay_sample(sim);
    if (r != 0) {
        return r->buttons;
    }
    return ccsim_buttons_read(&sim->buttons, sim->now_us, current_command(sim)->buttons);
}

static uint32_t take_remote_clicks(void *ctx)
{
    ccsim_device_t *sim = (ccsim_device_t *)ctx;
    uint32_t n = sim->remote_clicks + ccsim_player_take_remote_clicks(&sim->player);
    sim->remote_clicks = 0u;
    return n;
}

/* Everything one sample reads (cc_hal.h), in the order the core once asked
 * for it: sensors, buttons, remote clicks. */
static void hal_read_sensors(void *ctx, cc_sensor_reading_t *out)
{
    read_finger(ctx, out);
    out->buttons = read_buttons(ctx);
    out->remote_clicks = take_remote_clicks(ctx);
}

static void log_feedback(ccsim_device_t *sim, uint32_t kind, uint32_t a, uint32_t b)
{
    ccsim_feedback_t *f;
    if (sim->feedback_count < CCSIM_FEEDBACK_LOG) {
        f = &sim->feedback[(sim->feedback_head + sim->feedback_count) % CCSIM_FEEDBACK_LOG];
        sim->feedback_count++;
    } else {
        f = &sim->feedback[sim->feedback_head];
        sim->feedback_head = (sim->feedback_head + 1u) % CCSIM_FEEDBACK_LOG;
    }
    f->timestamp_us = sim->now_us;
    f->kind = kind;
    f->a = a;
    f->b = b;
    sim->feedback_total++;
}

static void hal_haptic_play(void *ctx, uint32_t pattern, uint32_t intensity_percent)
{
    log_feedback((ccsim_device_t *)ctx, CCSIM_FEEDBACK_HAPTIC, pattern, intensity_percent);
}

static void hal_sound_play(void *ctx, uint32_t sound)
{
    log_feedback((ccsim_device_t *)ctx, CCSIM_FEEDBACK_SOUND, sound, 0u);
}

static void hal_indicator_set(void *ctx, uint32_t mode, uint32_t rgb)
{
    log_feedback((ccsim_device_t *)ctx, CCSIM_FEEDBACK_INDICATOR, mode, rgb);
}

static bool hal_settings_read(void *ctx, uint32_t slot, uint8_t *buf, size_t len)
{
    const ccsim_device_t *sim = (const ccsim_device_t *)ctx;
    if (slot >= CC_SETTINGS_SLOTS || len != CC_SETTINGS_SLOT_BYTES) {
        return false;
    }
    memcpy(buf, &sim->store[slot * CC_SETTINGS_SLOT_BYTES], len);
    return true;
}

static bool hal_settings_write(void *ctx, uint32_t slot, const uint8_t *buf, size_t len)
{
    ccsim_device_t *sim = (ccsim_device_t *)ctx;
    if (slot >= CC_SETTINGS_SLOTS || len != CC_SETTINGS_SLOT_BYTES) {
        return false;
    }
    memcpy(&sim->store[slot * CC_SETTINGS_SLOT_BYTES], buf, len);
    return sim->store_hook == NULL || sim->store_hook(sim->store_hook_ctx, sim->store, sizeof sim->store);
}

/* ------------------------------------------------------------------ device */

void ccsim_device_init(ccsim_device_t *sim, uint64_t seed)
{
    ccsim_device_init_with_store(sim, seed, NULL, 0u);
}

void ccsim_device_set_store_hook(ccsim_device_t *sim, ccsim_store_hook_fn hook, void *ctx)
{
    sim->store_hook = hook;
    sim->store_hook_ctx = ctx;
}

const uint8_t *ccsim_device_store(const ccsim_device_t *sim)
{
    return sim->store;
}

void ccsim_device_reset(ccsim_device_t *sim)
{
    ring_init(&sim->rx, sim->rx_buf, sizeof(sim->rx_buf));
    ring_init(&sim->tx, sim->tx_buf, sizeof(sim->tx_buf));
    cc_device_init(&sim->dev, &sim->hal, &sim->info);
    cc_device_set_extension(&sim->dev, ccsim_simulator_service, sim, true);
    cc_device_set_line_speed(&sim->dev, sim->baud);   /* a reset keeps the line */
}

void ccsim_device_init_with_store(ccsim_device_t *sim, uint64_t seed, const uint8_t *image, size_t len)
{
    memset(sim, 0, sizeof(*sim));
    memset(sim->store, 0xFF, sizeof sim->store);
    if (image != NULL) {
        memcpy(sim->store, image, len < sizeof sim->store ? len : sizeof sim->store);
    }
    sim->seed = seed;
    ring_init(&sim->rx, sim->rx_buf, sizeof(sim->rx_buf));
    ring_init(&sim->tx, sim->tx_buf, sizeof(sim->tx_buf));

    ccsim_finger_init(&sim->finger, seed, CCSIM_SLIDE_RESOLUTION);
    ccsim_buttons_init(&sim->buttons, seed);
    ccsim_player_init(&sim->player);
    sim->manual.position = CCSIM_POS_ONE / 2u;

#if CC_MAX_FRAME_BYTES < 160u
    /* A HandshakeResponse must fit the announced frame (PROTOCOL.md §2, v1.2):
     * the rest of it takes about 110 of 128 bytes, so the identity is short. */
    (void)snprintf(sim->serial, sizeof(sim->serial), "S%X", (unsigned)(seed & 0xFFFFFFFFu));
    sim->info.vendor = "CC";
    sim->info.model = "S";
    sim->info.firmware_version = "1";
#else
    (void)snprintf(sim->serial, sizeof(sim->serial), "SIM-%08X", (unsigned)(seed & 0xFFFFFFFFu));
    sim->info.vendor = "CameraControl";
    sim->info.model = "Simulator";
    sim->info.firmware_version = "1.0.0-sim";
#endif
    sim->info.serial_number = sim->serial;
    sim->info.usb_vendor_id = 0u;
    sim->info.usb_product_id = 0u;
    sim->info.has_force_sensor = true;
    sim->info.has_touch_sensor = true;
    sim->info.has_slide_strip = true;
    sim->info.buttons = CC_BUTTON_VOLUME_UP | CC_BUTTON_VOLUME_DOWN | CC_BUTTON_ACTION;
    sim->info.has_remote = true;
    sim->info.force_max_mn = CCSIM_FORCE_MAX_MN;
    sim->info.slide_resolution = CCSIM_SLIDE_RESOLUTION;
    sim->info.slide_length_um = 20000u;
    sim->info.max_controls = 8u;
    sim->info.haptic_patterns = (1u << CC_PB_HAPTIC_PATTERN_DETENT) |
                                (1u << CC_PB_HAPTIC_PATTERN_CLICK) |
                                (1u << CC_PB_HAPTIC_PATTERN_RELEASE) |
                                (1u << CC_PB_HAPTIC_PATTERN_LIMIT);
    sim->info.has_speaker = true;
    sim->info.has_indicator_led = true;

    sim->hal.ctx = sim;
    sim->hal.now_us = hal_now_us;
    sim->hal.uart_read = hal_uart_read;
    sim->hal.uart_write = hal_uart_write;
    sim->hal.read_sensors = hal_read_sensors;
    sim->hal.haptic_play = hal_haptic_play;
    sim->hal.sound_play = hal_sound_play;
    sim->hal.indicator_set = hal_indicator_set;
    sim->hal.uart_take_overruns = hal_uart_take_overruns;
#ifndef CCSIM_NO_STORE
    sim->hal.settings_read = hal_settings_read;
    sim->hal.settings_write = hal_settings_write;
#else
    (void)hal_settings_read;   /* a board image: its RAM does not survive the board's reset */
    (void)hal_settings_write;
#endif

    cc_device_init(&sim->dev, &sim->hal, &sim->info);
    cc_device_set_extension(&sim->dev, ccsim_simulator_service, sim, true);
}

size_t ccsim_device_host_write(ccsim_device_t *sim, const uint8_t *bytes, size_t len)
{
    size_t n = (bytes != 0 && len > 0u) ? ring_put(&sim->rx, bytes, len) : 0u;
    sim->rx_dropped += (uint32_t)(len - n);
    return n;
}

size_t ccsim_device_host_room(const ccsim_device_t *sim)
{
    return sim->rx.cap - sim->rx.len;
}

size_t ccsim_device_host_read(ccsim_device_t *sim, uint8_t *buf, size_t cap)
{
    return buf != 0 ? ring_get(&sim->tx, buf, cap) : 0u;
}

size_t ccsim_device_host_pending(const ccsim_device_t *sim)
{
    return sim->tx.len;
}

static uint32_t sample_period_us(const ccsim_device_t *sim)
{
    const cc_input_config_t *c = cc_device_config(&sim->dev);
    uint32_t rate = (c != 0 && c->sample_rate_hz != 0u) ? c->sample_rate_hz : 1000u;
    return 1000000u / rate;
}

/* A scenario ended, was stopped or is being replaced: its `noise` steps end
 * with it (one not yet applied too), and the device's own setting is back. */
static void end_scenario_noise(ccsim_device_t *sim)
{
    (void)ccsim_player_take_noise(&sim->player);
    if (sim->scenario_noise) {
        sim->scenario_noise = false;
        ccsim_finger_set_noise(&sim->finger, sim->noise_outside);
    }
}

static void start_scenario(ccsim_device_t *sim, const ccsim_scenario_t *s)
{
    uint64_t at = sim->now_us < CCSIM_BOOT_SETTLE_US ? CCSIM_BOOT_SETTLE_US : sim->now_us;
    if (s->has_seed) {
        /* Reseed the noise only: the sensor's offset is a property of the board. */
        ccsim_rng_seed(&sim->finger.rng, s->seed);
        ccsim_buttons_init(&sim->buttons, s->seed);
        ccsim_buttons_set_bounce(&sim->buttons, sim->buttons.bounce);
    }
    end_scenario_noise(sim);   /* a scenario replaced: its noise steps end here */
    sim->scenario_noise = true;
    sim->noise_outside = sim->finger.noise;
    ccsim_player_start(&sim->player, s, at);
}

/* One step of time: the world moves first, then the firmware looks at it. */
static void tick(ccsim_device_t *sim)
{
    uint32_t noise;
    uint8_t changed[CCSIM_SETTINGS_COUNT];
    bool active = cc_device_session_active(&sim->dev);
    if (active && !sim->session_seen) {
        sim->session_since_us = sim->now_us;
    }
    sim->session_seen = active;
    if (sim->pending_valid && ccsim_device_host_listening(sim)) {
        sim->pending_valid = false;
        start_scenario(sim, &sim->pending);
    }
    (void)ccsim_player_update(&sim->player, sim->now_us);
    noise = ccsim_player_take_noise(&sim->player);
    if (noise != 0u) {
        ccsim_finger_set_noise(&sim->finger, noise == 2u);
    }
    if (sim->scenario_noise && !ccsim_player_running(&sim->player)) {
        end_scenario_noise(sim);
    }
    if (ccsim_player_take_settings(&sim->player, changed)) {
        /* as a host's SetSettings: stored, in force at once; a change it would
         * refuse (a force that does not fit the configured full press) is not
         * made */
        cc_settings_t next = *cc_device_settings(&sim->dev);
        const char *why = 0;
        next.light_press_force = changed[CCSIM_SETTING_LIGHT_PRESS_FORCE] != 0u
            ? changed[CCSIM_SETTING_LIGHT_PRESS_FORCE] : next.light_press_force;
        next.double_light_press_speed = changed[CCSIM_SETTING_DOUBLE_LIGHT_PRESS_SPEED] != 0u
            ? changed[CCSIM_SETTING_DOUBLE_LIGHT_PRESS_SPEED] : next.double_light_press_speed;
        next.camera_control = changed[CCSIM_SETTING_CAMERA_CONTROL] != 0u
            ? changed[CCSIM_SETTING_CAMERA_CONTROL] : next.camera_control;
        next.camera_adjustments = changed[CCSIM_SETTING_CAMERA_ADJUSTMENTS] != 0u
            ? changed[CCSIM_SETTING_CAMERA_ADJUSTMENTS] : next.camera_adjustments;
        (void)cc_device_change_settings(&sim->dev, &next, &why);
    }
    cc_device_poll(&sim->dev);
}

void ccsim_device_advance(ccsim_device_t *sim, uint64_t micros)
{
    uint64_t end = micros > UINT64_MAX - sim->now_us ? UINT64_MAX : sim->now_us + micros;
    while (sim->now_us < end) {
        uint64_t period = sample_period_us(sim);
        uint64_t next = (sim->now_us / period + 1u) * period;
        sim->now_us = next < end ? next : end;
        tick(sim);
    }
}

void ccsim_device_poll(ccsim_device_t *sim)
{
    tick(sim);
}

uint64_t ccsim_device_now_us(const ccsim_device_t *sim)
{
    return sim->now_us;
}

int ccsim_device_play_scenario(ccsim_device_t *sim, const char *text, size_t len,
                               ccsim_parse_error_t *err)
{
    if (ccsim_scenario_parse(text, len, &sim->parsed, err) != 0) {
        return 1;
    }
    sim->pending_valid = false;
    start_scenario(sim, &sim->parsed);
    return 0;
}

bool ccsim_device_host_listening(const ccsim_device_t *sim)
{
    return sim->session_seen &&
           (cc_device_input_stream_open(&sim->dev) || sim->now_us - sim->session_since_us >= CCSIM_LISTEN_WAIT_US);
}

int ccsim_device_play_scenario_on_handshake(ccsim_device_t *sim, const char *text, size_t len,
                                            ccsim_parse_error_t *err)
{
    if (ccsim_scenario_parse(text, len, &sim->pending, err) != 0) {
        sim->pending_valid = false;
        return 1;
    }
    sim->pending_valid = true;
    return 0;
}

uint64_t ccsim_device_scenario_duration_us(const ccsim_device_t *sim)
{
    if (sim->pending_valid) {
        return ccsim_scenario_duration(&sim->pending, &sim->player.state);
    }
    if (!ccsim_player_running(&sim->player)) {
        return 0u;
    }
    return ccsim_scenario_duration(&sim->player.scenario, &sim->player.state);
}

bool ccsim_device_scenario_running(const ccsim_device_t *sim)
{
    return sim->pending_valid || ccsim_player_running(&sim->player);
}

void ccsim_device_stop_scenario(ccsim_device_t *sim)
{
    sim->pending_valid = false;
    ccsim_player_stop(&sim->player);
    end_scenario_noise(sim);
}

void ccsim_device_set_finger(ccsim_device_t *sim, bool touched, int32_t force_mn,
                             uint32_t position, uint32_t buttons)
{
    sim->manual_active = true;
    sim->manual.touched = touched;
    sim->manual.force_mn = force_mn;
    sim->manual.position = position > CCSIM_POS_ONE ? CCSIM_POS_ONE : position;
    sim->manual.buttons = buttons;
}

void ccsim_device_release_finger(ccsim_device_t *sim)
{
    sim->manual_active = false;
}

void ccsim_device_remote_click(ccsim_device_t *sim, uint32_t count)
{
    sim->remote_clicks += count;
}

void ccsim_device_replay(ccsim_device_t *sim, const ccsim_replay_sample_t *samples, size_t count)
{
    sim->replay = count != 0u ? samples : 0;
    sim->replay_count = samples != 0 ? count : 0u;
    sim->replay_next = 0u;
    sim->replay_start_us = sim->now_us < CCSIM_BOOT_SETTLE_US ? CCSIM_BOOT_SETTLE_US : sim->now_us;
}

bool ccsim_device_replay_running(const ccsim_device_t *sim)
{
    return sim->replay != 0 && sim->now_us < ccsim_device_replay_end_us(sim);
}

uint64_t ccsim_device_replay_end_us(const ccsim_device_t *sim)
{
    if (sim->replay == 0 || sim->replay_count == 0u) {
        return 0u;
    }
    return sim->replay_start_us + sim->replay[sim->replay_count - 1u].t_us + sample_period_us(sim);
}

void ccsim_device_set_baud(ccsim_device_t *sim, uint32_t baud)
{
    sim->baud = baud;
    cc_device_set_line_speed(&sim->dev, baud);
    sim->credit_us = sim->now_us;
    sim->tx_credit_milli = (uint64_t)UART_FIFO_BYTES * 1000u;
    sim->rx_credit_milli = (uint64_t)UART_FIFO_BYTES * 1000u;
}

void ccsim_device_set_noise(ccsim_device_t *sim, bool on)
{
    ccsim_finger_set_noise(&sim->finger, on);
    sim->noise_outside = on;
}

void ccsim_device_set_bounce(ccsim_device_t *sim, bool on)
{
    ccsim_buttons_set_bounce(&sim->buttons, on);
}

uint32_t ccsim_device_feedback_count(const ccsim_device_t *sim)
{
    return sim->feedback_count;
}

bool ccsim_device_feedback_at(const ccsim_device_t *sim, uint32_t index, ccsim_feedback_t *out)
{
    if (index >= sim->feedback_count || out == 0) {
        return false;
    }
    *out = sim->feedback[(sim->feedback_head + index) % CCSIM_FEEDBACK_LOG];
    return true;
}

void ccsim_device_feedback_clear(ccsim_device_t *sim)
{
    sim->feedback_head = 0u;
    sim->feedback_count = 0u;
}

const cc_counters_t *ccsim_device_counters(const ccsim_device_t *sim)
{
    return cc_device_counters(&sim->dev);
}

cc_device_t *ccsim_device_core(ccsim_device_t *sim)
{
    return &sim->dev;
}

/* -------------------------------------------------------- SimulatorService */

/* The answer written into resp, or RESOURCE_EXHAUSTED when it does not fit. */
static int written(const cc_pbw_t *w, size_t *resp_len, const char **message)
{
    if (!cc_pbw_ok(w)) {
        *message = "response does not fit the frame";
        return (int)CC_STATUS_RESOURCE_EXHAUSTED;
    }
    *resp_len = cc_pbw_len(w);
    return (int)CC_STATUS_OK;
}

typedef char ccsim_filled_run_scenario_response[CC_PB_RUN_SCENARIO_RESPONSE_FIELD_COUNT == 2u ? 1 : -1];
typedef char ccsim_filled_simulator_status[CC_PB_SIMULATOR_STATUS_FIELD_COUNT == 3u ? 1 : -1];

int ccsim_simulator_service(void *ctx, uint8_t service, uint8_t method, const uint8_t *req,
                            size_t req_len, uint8_t *resp, size_t resp_cap, size_t *resp_len,
                            const char **message)
{
    ccsim_device_t *sim = (ccsim_device_t *)ctx;
    cc_pbw_t w;
    *resp_len = 0u;
    if (service != CC_SERVICE_SIMULATOR_SERVICE) {
        return CC_EXTENSION_NOT_MINE;
    }
    cc_pbw_init(&w, resp, resp_cap);
    if (method == CC_METHOD_SIMULATOR_SERVICE_RUN_SCENARIO) {
        cc_pb_run_scenario_request_in_t rq;
        cc_pb_run_scenario_response_t rs;
        cc_pbr_status_t status = cc_pbr_read_run_scenario_request(&rq, req, req_len);
        ccsim_parse_error_t err;
        if (status != CC_PBR_OK) {
            *message = status == CC_PBR_TOO_LARGE ? "scenario too large" : "malformed RunScenarioRequest";
            return (int)(status == CC_PBR_TOO_LARGE ? CC_STATUS_RESOURCE_EXHAUSTED : CC_STATUS_INVALID_ARGUMENT);
        }
        if (ccsim_scenario_parse((const char *)rq.scenario.data, rq.scenario.len, &sim->parsed, &err) != 0) {
            memcpy(sim->message, err.message, sizeof(sim->message));
            sim->message[sizeof(sim->message) - 1u] = '\0';
            *message = sim->message;
            return (int)CC_STATUS_INVALID_ARGUMENT;
        }
        sim->pending_valid = false;
        start_scenario(sim, &sim->parsed);
        rs.steps = sim->parsed.count;
        rs.duration_us = ccsim_scenario_duration(&sim->player.scenario, &sim->player.state);
        cc_pbw_write_run_scenario_response(&w, &rs);
        return written(&w, resp_len, message);
    }
    if (method == CC_METHOD_SIMULATOR_SERVICE_GET_SIMULATOR_STATUS) {
        cc_pb_get_simulator_status_request_in_t rq;
        cc_pb_simulator_status_t st;
        if (cc_pbr_read_get_simulator_status_request(&rq, req, req_len) != CC_PBR_OK) {
            *message = "malformed GetSimulatorStatusRequest";
            return (int)CC_STATUS_INVALID_ARGUMENT;
        }
        st.scenario_running = ccsim_device_scenario_running(sim);
        st.device_time_us = sim->now_us;
        st.retransmission_allowance_us = sim->dev.link.ack_allowance_us;
        cc_pbw_write_simulator_status(&w, &st);
        return written(&w, resp_len, message);
    }
    return CC_EXTENSION_NOT_MINE;
}
