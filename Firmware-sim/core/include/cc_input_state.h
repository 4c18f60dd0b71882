/* Private state of cc_input.c; public only so callers can allocate it statically. */
#ifndef CC_INPUT_STATE_H
#define CC_INPUT_STATE_H
struct cc_input {
    cc_input_config_t config;
};
#endif
