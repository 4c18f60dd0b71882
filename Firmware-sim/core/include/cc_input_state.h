/*
 * Private state of cc_input.c; public only so callers can allocate it
 * statically. Do not touch these fields from outside cc_input.c.
 */
#ifndef CC_INPUT_STATE_H
#define CC_INPUT_STATE_H

/* Buttons the pipeline debounces: volume up, volume down, action, shutter switch. */
#define CC_INPUT_DEBOUNCED_BUTTONS 4u

/* One debounced button. */
typedef struct cc_input_button_state {
    bool stable;              /* the debounced level */
    bool candidate;           /* the level seen most recently */
    uint64_t candidate_since_us;
} cc_input_button_state_t;

struct cc_input {
    /* Ordered for the Cortex-M0: what every sample reads comes first (its
     * byte loads reach 31 bytes, its word loads 124, from the struct). */

    /* Force conditioning, fixed point Q(CC_INPUT_FRAC_BITS) millinewtons. */
    bool tared;
    uint8_t filter_shift;         /* IIR coefficient 1/2^shift */
    uint8_t drift_shift;          /* baseline tracker coefficient 1/2^shift */
    /* Press stages: 0 none, 1 light, 2 full. */
    uint8_t force_stage;          /* from the force thresholds alone */
    uint8_t stage;                /* reported: max(force_stage, shutter switch) */
    /* Touch and slide. */
    bool touched;
    bool have_sample;             /* last_us and last_force_mn hold a sample */
    uint16_t position;            /* last position seen while touched */
    uint16_t slide_reported;      /* position of the last TOUCH_DOWN/SLIDE */
    int32_t baseline_q;           /* sensor offset being subtracted */
    int32_t filtered_q;           /* low-passed tared force */
    uint32_t samples_seen;        /* samples until the tare (then it stops counting) */
    uint32_t light_peak_mn;
    uint32_t full_peak_mn;
    uint32_t button_candidates;   /* CC_BUTTON_* bits of the candidate levels */
    uint32_t buttons_unsettled;   /* CC_BUTTON_* bits whose candidate is not yet stable */
    uint32_t count;               /* events queued */
    uint32_t head;                /* index of the oldest queued event */

    /* Last conditioned sample: its time and force (position and touch as above). */
    uint64_t last_us;
    uint16_t last_force_mn;

    cc_input_config_t config;
    uint32_t debounce_us;         /* config.debounce_ms in microseconds */
    uint32_t slide_interval_us;   /* config.slide_interval_ms in microseconds */

    uint32_t tare_count;          /* untouched samples averaged so far */
    uint32_t tare_target;         /* untouched samples the tare averages */
    uint32_t tare_give_up;        /* samples after which it tares with what it has */
    int32_t tare_sum_mn;          /* at most 32 clamped readings: |sum| <= 3.2e6 */
    uint64_t slide_last_us;

    /* Buttons, CC_BUTTON_* bit order. */
    cc_input_button_state_t buttons[CC_INPUT_DEBOUNCED_BUTTONS];

    /* Events. */
    uint32_t event_number;        /* number of the last event produced */
    uint32_t overflows;
    cc_input_event_t queue[CC_INPUT_QUEUE_LEN];
    /* The settings' gates (cc_input_set_gates) and, for each Camera Control
     * input open now, whether its DOWN was reported (GATE_* bits of
     * cc_input.c): its UP is reported exactly when its DOWN was. Last: only
     * an event reads them. */
    bool gate_camera_control;
    bool gate_adjustments;
    uint8_t gate_reported;
};

#endif /* CC_INPUT_STATE_H */
