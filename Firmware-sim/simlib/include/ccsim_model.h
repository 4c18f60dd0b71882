/*
 * CameraControl simulator: the physical model of a finger on the Camera
 * Control and of bouncing buttons. Deterministic under a seed: every random
 * draw comes from the model's own PRNG, every computation is integer.
 */
#ifndef CCSIM_MODEL_H
#define CCSIM_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#include "cc_hal.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A small PRNG (xorshift64*): state never zero. */
typedef struct ccsim_rng {
    uint64_t state;
} ccsim_rng_t;

/* Seeds the generator; any seed (also 0) is fine. */
void ccsim_rng_seed(ccsim_rng_t *rng, uint64_t seed);
/* The next 32 random bits. */
uint32_t ccsim_rng_next(ccsim_rng_t *rng);
/* A uniform integer in lo .. hi (inclusive); lo <= hi. */
int32_t ccsim_rng_range(ccsim_rng_t *rng, int32_t lo, int32_t hi);

/* Position as a fraction of the strip: 0 = one end, CCSIM_POS_ONE = the other. */
#define CCSIM_POS_ONE 65535u

/* What the finger (or the hand on a button) intends at an instant:
 * produced by the scenario player, turned into sensor readings by the model. */
typedef struct ccsim_command {
    bool touched;          /* skin on the capacitive strip */
    int32_t force_mn;      /* force the finger applies (before sensor effects) */
    uint32_t position;     /* 0 .. CCSIM_POS_ONE */
    uint32_t buttons;      /* CC_BUTTON_* held (before contact bounce) */
} ccsim_command_t;

/* The finger and sensor model. Fields are private. */
typedef struct ccsim_finger {
    ccsim_rng_t rng;
    bool noise;                    /* tremor, sensor noise, jitter, force variation */
    int32_t baseline_offset_mn;    /* the unloaded sensor's reading */
    int32_t drift_mn_per_ks;       /* baseline drift, millinewtons per 1000 s */
    uint32_t tremor_centihz;       /* physiological tremor frequency */
    uint32_t tremor_phase;         /* 0 .. 65535 */
    int32_t press_scale_permille;  /* per-touch variation of the applied force */
    bool was_touched;
    uint32_t slide_resolution;     /* positions on the strip */
} ccsim_finger_t;

/* Seeds the model: offset, drift, tremor frequency and noise follow from the seed. */
void ccsim_finger_init(ccsim_finger_t *f, uint64_t seed, uint32_t slide_resolution);
/* Noise on (default) or off: off gives exact forces and positions (offset and drift stay). */
void ccsim_finger_set_noise(ccsim_finger_t *f, bool on);
/* The sensor reading at now_us for the commanded finger. */
void ccsim_finger_read(ccsim_finger_t *f, uint64_t now_us, const ccsim_command_t *cmd,
                       cc_sensor_reading_t *out);

/* Contact bounce of mechanical buttons: for a few ms after each edge of the
 * commanded level the contact chatters. */
#define CCSIM_BUTTON_COUNT 4u
typedef struct ccsim_buttons {
    ccsim_rng_t rng;
    bool bounce;
    uint32_t commanded;                       /* last commanded bits */
    uint64_t edge_us[CCSIM_BUTTON_COUNT];     /* time of the last commanded edge */
    uint32_t bounce_us[CCSIM_BUTTON_COUNT];   /* chatter length after that edge */
    uint32_t level;                           /* what the contacts read now */
} ccsim_buttons_t;

void ccsim_buttons_init(ccsim_buttons_t *b, uint64_t seed);
/* Bounce on (default) or off. */
void ccsim_buttons_set_bounce(ccsim_buttons_t *b, bool on);
/* The raw contact levels at now_us for the commanded bits. */
uint32_t ccsim_buttons_read(ccsim_buttons_t *b, uint64_t now_us, uint32_t commanded);

#ifdef __cplusplus
}
#endif

#endif /* CCSIM_MODEL_H */
