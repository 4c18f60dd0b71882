/*
 * micro:bit port: what the board announces (cc_device_info_t), as an
 * initializer: the HAL's microbit_info (board_hal.c) with the serial number
 * read at boot, and the board core's constant copy (CC_HAL_BOARD_INFO,
 * core/include/cc_device_info.h), so the handshake's and FeedbackService's
 * uses of it are folded at compile time.
 */
#ifndef MICROBIT_BOARD_INFO_H
#define MICROBIT_BOARD_INFO_H

#include "cc_hal.h"

/* The serial number, read at boot (board_hal.c): the one value the board core
 * takes at run time (CC_BOARD_SERIAL). */
extern char port_serial_number[];
#define CC_BOARD_SERIAL port_serial_number

#define MICROBIT_SLIDE_RESOLUTION 1024u

#define CC_BOARD_INFO(serial) {                                                                  \
    "BBC",                       /* vendor */                                                    \
    "micro:bit v1 (nRF51822)",   /* model */                                                     \
    (serial),                    /* serial_number: FICR.DEVICEID, read at boot */                \
    "1.0.0",                     /* firmware_version */                                          \
    0x0D28u,                     /* usb_vendor_id: the interface chip (DAPLink) */               \
    0x0204u,                     /* usb_product_id */                                            \
    true,                        /* has_force_sensor: FSR on P0 */                               \
    true,                        /* has_touch_sensor: P2 */                                      \
    true,                        /* has_slide_strip: soft potentiometer on P1 */                 \
    CC_BUTTON_VOLUME_UP | CC_BUTTON_VOLUME_DOWN | CC_BUTTON_ACTION, /* buttons */                \
    false,                       /* has_remote */                                                \
    10230u,                      /* force_max_mn: 1023 counts */                                 \
    MICROBIT_SLIDE_RESOLUTION,   /* slide_resolution */                                          \
    50000u,                      /* slide_length_um: a 50 mm soft potentiometer */               \
    6u,                          /* max_controls */                                              \
    0u,                          /* haptic_patterns: none */                                     \
    false,                       /* has_speaker */                                               \
    true,                        /* has_indicator_led */                                         \
}

#endif /* MICROBIT_BOARD_INFO_H */
