/*
 * CameraControl simulator: finger and button model (see ccsim_model.h).
 *
 * Numbers (all drawn from the seed where a range is given):
 *   baseline offset   150 .. 550 mN (the unloaded sensor never reads zero)
 *   baseline drift    -2 .. +2 mN per second (temperature)
 *   tremor            8 .. 12 Hz (physiological tremor), 6 mN + 1.5 % of the force
 *   sensor noise      sum of four uniform draws of +-4 mN (roughly Gaussian, sigma ~4.6 mN)
 *   force variation   each touch applies 97 .. 103 % of the commanded force
 *   position jitter   -1, 0 or +1 counts per sample
 *   contact bounce    chatter for 1 .. 4 ms after every edge of a button
 */
#include "ccsim_model.h"

void ccsim_rng_seed(ccsim_rng_t *rng, uint64_t seed)
{
    /* splitmix64 step so that nearby seeds give unrelated streams. */
    uint64_t z = seed + 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    rng->state = z != 0u ? z : 0x2545F4914F6CDD1Dull;
}

uint32_t ccsim_rng_next(ccsim_rng_t *rng)
{
    uint64_t x = rng->state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    rng->state = x;
    return (uint32_t)((x * 0x2545F4914F6CDD1Dull) >> 32);
}

int32_t ccsim_rng_range(ccsim_rng_t *rng, int32_t lo, int32_t hi)
{
    uint32_t span;
    if (hi <= lo) {
        return lo;
    }
    span = (uint32_t)(hi - lo) + 1u;
    return lo + (int32_t)(ccsim_rng_next(rng) % span);
}

/* sin(2 pi phase / 65536) in Q15, Bhaskara I's approximation (error < 0.2 %). */
static int32_t sin_q15(uint32_t phase)
{
    uint32_t p = phase & 0xFFFFu;
    int64_t x = (int64_t)(p & 0x7FFFu);          /* 0 .. pi in 0 .. 32768 */
    int64_t v = x * (32768 - x);                 /* u(1-u) in Q30 */
    int64_t s = (16 * v * 32768) / (5 * ((int64_t)1 << 30) - 4 * v);
    return p < 0x8000u ? (int32_t)s : (int32_t)-s;
}

void ccsim_finger_init(ccsim_finger_t *f, uint64_t seed, uint32_t slide_resolution)
{
    ccsim_rng_seed(&f->rng, seed);
    f->noise = true;
    f->baseline_offset_mn = ccsim_rng_range(&f->rng, 150, 550);
    f->drift_mn_per_ks = ccsim_rng_range(&f->rng, -2000, 2000);
    f->tremor_centihz = (uint32_t)ccsim_rng_range(&f->rng, 800, 1200);
    f->tremor_phase = (uint32_t)ccsim_rng_range(&f->rng, 0, 65535);
    f->press_scale_permille = 1000;
    f->was_touched = false;
    f->slide_resolution = slide_resolution > 1u ? slide_resolution : 2u;
}

void ccsim_finger_set_noise(ccsim_finger_t *f, bool on)
{
    f->noise = on;
    if (!on) {
        f->press_scale_permille = 1000;
    }
}

void ccsim_finger_read(ccsim_finger_t *f, uint64_t now_us, const ccsim_command_t *cmd,
                       cc_sensor_reading_t *out)
{
    int64_t force = cmd->force_mn > 0 ? cmd->force_mn : 0;
    int64_t drift = ((int64_t)f->drift_mn_per_ks * (int64_t)(now_us / 1000u)) / 1000000;
    int64_t pos;

    if (cmd->touched && !f->was_touched && f->noise) {
        f->press_scale_permille = ccsim_rng_range(&f->rng, 970, 1030);
    }
    f->was_touched = cmd->touched;

    force = force * f->press_scale_permille / 1000;
    if (f->noise) {
        if (force > 0) {
            /* phase advances tremor_centihz / 100 cycles per second */
            uint64_t cycles_q16 = (now_us * (uint64_t)f->tremor_centihz * 65536u) / 100000000u;
            int64_t amp = 6 + force * 15 / 1000;
            force += amp * sin_q15((uint32_t)cycles_q16 + f->tremor_phase) / 32768;
        }
        force += ccsim_rng_range(&f->rng, -4, 4) + ccsim_rng_range(&f->rng, -4, 4) +
                 ccsim_rng_range(&f->rng, -4, 4) + ccsim_rng_range(&f->rng, -4, 4);
    }
    force += f->baseline_offset_mn + drift;
    if (force > 1000000) {
        force = 1000000;
    } else if (force < -1000000) {
        force = -1000000;
    }
    out->force_raw_mn = (int32_t)force;
    out->touched = cmd->touched;

    pos = ((int64_t)(cmd->position > CCSIM_POS_ONE ? CCSIM_POS_ONE : cmd->position) *
               (int64_t)(f->slide_resolution - 1u) + CCSIM_POS_ONE / 2) / CCSIM_POS_ONE;
    if (!cmd->touched) {
        pos = 0;
    } else if (f->noise) {
        pos += ccsim_rng_range(&f->rng, -1, 1);
    }
    if (pos < 0) {
        pos = 0;
    } else if (pos > (int64_t)f->slide_resolution - 1) {
        pos = (int64_t)f->slide_resolution - 1;
    }
    out->position = (uint16_t)pos;
}

void ccsim_buttons_init(ccsim_buttons_t *b, uint64_t seed)
{
    unsigned i;
    ccsim_rng_seed(&b->rng, seed ^ 0xB0B0CAFEull);
    b->bounce = true;
    b->commanded = 0u;
    b->level = 0u;
    for (i = 0; i < CCSIM_BUTTON_COUNT; i++) {
        b->edge_us[i] = 0u;
        b->bounce_us[i] = 0u;
    }
}

void ccsim_buttons_set_bounce(ccsim_buttons_t *b, bool on)
{
    b->bounce = on;
}

uint32_t ccsim_buttons_read(ccsim_buttons_t *b, uint64_t now_us, uint32_t commanded)
{
    unsigned i;
    uint32_t level = 0u;
    for (i = 0; i < CCSIM_BUTTON_COUNT; i++) {
        uint32_t bit = 1u << i;
        bool want = (commanded & bit) != 0u;
        if (want != ((b->commanded & bit) != 0u)) {
            b->edge_us[i] = now_us;
            b->bounce_us[i] = b->bounce ? (uint32_t)ccsim_rng_range(&b->rng, 1000, 4000) : 0u;
        }
        if (now_us - b->edge_us[i] < b->bounce_us[i]) {
            /* chatter: each read is open or closed at random */
            if ((ccsim_rng_next(&b->rng) & 1u) != 0u) {
                level |= bit;
            }
        } else if (want) {
            level |= bit;
        }
    }
    b->commanded = commanded;
    b->level = level;
    return level;
}
