/*
 * CameraControl firmware core: what a port tells the device about itself
 * (cc_device_info_t), the extension handler type (cc_extension_fn) and the
 * device handle (cc_device_t). Included by cc_device.h, which has the
 * functions; split out so the definition of the device struct
 * (cc_device_state.h) does not need the device's API.
 */
#ifndef CC_DEVICE_INFO_H
#define CC_DEVICE_INFO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Protocol version this core speaks. */
#define CC_PROTOCOL_MAJOR 1u
#define CC_PROTOCOL_MINOR 2u

/* What the device says about itself in the handshake. Strings must outlive the device.
 * A board's own image may know it at compile time: a core built with
 * CC_HAL_BOARD_INFO (BOARD_CORE_DEFS) includes the port's "board_info.h",
 * whose CC_BOARD_INFO(serial) is an initializer of this struct, and announces
 * those values, folded where they are used (Capabilities, FeedbackService's
 * checks), with the serial number the board read at boot from the port's
 * CC_BOARD_SERIAL (a char array it names); the info given to cc_device_init is
 * then not read (may be NULL). A port that also keeps the info as a struct (for
 * its other images) builds it from the same initializer. */
typedef struct cc_device_info {
    const char *vendor;
    const char *model;
    const char *serial_number;
    const char *firmware_version;
    uint32_t usb_vendor_id;
    uint32_t usb_product_id;
    bool has_force_sensor;
    bool has_touch_sensor;
    bool has_slide_strip;
    uint32_t buttons;              /* CC_BUTTON_VOLUME_UP | ... present on the board */
    bool has_remote;               /* a remote-click source is paired/possible */
    uint32_t force_max_mn;
    uint32_t slide_resolution;
    uint32_t slide_length_um;
    uint32_t max_controls;
    uint32_t haptic_patterns;      /* bit n set: cameracontrol.v1.HapticPattern n is playable */
    bool has_speaker;
    bool has_indicator_led;
} cc_device_info_t;

/*
 * A handler for services the core does not serve itself (the simulator's
 * SimulatorService). Returns a cameracontrol status code (0 = OK, the
 * response is in resp[0 .. *resp_len)); CC_EXTENSION_NOT_MINE when it does
 * not know the method (the core answers UNIMPLEMENTED). *message may be set
 * to a static string for non-OK statuses.
 *
 * Called only for unary requests after the handshake, once the call table
 * checks passed; req is the raw request payload (unpack it yourself);
 * resp_cap is the largest payload that fits a frame. A status that is not a
 * byte (other than CC_EXTENSION_NOT_MINE) is answered as INTERNAL.
 */
#define CC_EXTENSION_NOT_MINE (-1)
typedef int (*cc_extension_fn)(void *ctx, uint8_t service, uint8_t method,
                               const uint8_t *req, size_t req_len,
                               uint8_t *resp, size_t resp_cap, size_t *resp_len,
                               const char **message);

typedef struct cc_device cc_device_t;

#ifdef __cplusplus
}
#endif

#endif /* CC_DEVICE_INFO_H */
