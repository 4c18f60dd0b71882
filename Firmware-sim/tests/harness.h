/*
 * Test harness: a mock HAL (scripted UART input, captured UART output, a
 * manual clock, scripted sensors, logged feedback) around one cc_device_t,
 * and a minimal host that frames requests and decodes what the device sends.
 */
#ifndef CC_TEST_HARNESS_H
#define CC_TEST_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <protobuf-c/protobuf-c.h>

#include "CameraControlProto.h"
#include "cc_device.h"
#include "cc_envelope.h"
#include "cc_frame.h"

#define HX_MAX_PACKETS 512u
#define HX_RX_BYTES 65536u
#define HX_MAX_SEND_BYTES (CC_WIRE_MAX_MAX_FRAME_BYTES + 64u)   /* largest packet the test host frames */

/* One packet the device sent, decoded by the test host. */
typedef struct hx_packet {
    uint8_t type;
    uint8_t flags;
    uint16_t sequence;
    uint32_t call_id;
    uint8_t status;
    uint64_t received_us;         /* clock when its last byte left the UART */
    size_t payload_len;
    uint8_t payload[CC_MAX_FRAME_BYTES];
} hx_packet_t;

typedef struct harness {
    cc_hal_t hal;
    cc_device_info_t info;
    cc_device_t dev;
    uint64_t now_us;

    /* host -> device bytes */
    uint8_t rx[HX_RX_BYTES];
    size_t rx_len;
    size_t rx_pos;
    size_t rx_total;              /* bytes ever queued for the device */
    uint32_t rx_split_seed;       /* non-zero: uart_read returns 1..17 bytes, pseudo-randomly */
    /* device -> host */
    bool tx_blocked;              /* uart_write takes nothing */
    size_t tx_limit;              /* most bytes uart_write takes per call (0: all) */
    size_t tx_per_ms;             /* a slow line: most bytes per millisecond of the clock (0: no limit) */
    uint64_t tx_window_ms;        /* the millisecond tx_window_bytes counts in */
    size_t tx_window_bytes;
    size_t tx_bytes;              /* bytes the UART took */
    cc_frame_decoder_t host_decoder;
    unsigned host_decode_errors;
    hx_packet_t packets[HX_MAX_PACKETS];
    size_t npackets;
    uint16_t host_sequence;
    /* the test host ACKs every reliable RESPONSE and ERROR it decodes, as a
     * real host does (v1.1 sends them reliably); stream messages are left to
     * the test. On by default. */
    bool ack_replies;
    /* rx overruns the mock UART reports at the next uart_take_overruns */
    uint32_t overruns;

    /* scripted inputs */
    cc_sensor_reading_t reading;
    uint32_t buttons;
    uint32_t remote_clicks;

    /* the settings store (cc_hal_t.settings_read/write): two slots, erased
     * (0xFF) at hx_setup, kept by hx_reboot */
    uint8_t store[CC_SETTINGS_SLOTS][CC_SETTINGS_SLOT_BYTES];
    unsigned store_writes;        /* settings_write calls */
    int store_cut_after;          /* >= 0: the next write stops after this many bytes (a reset mid-write) */
    bool store_fail;              /* settings_write reports failure */
    /* feedback log */
    unsigned haptic_calls;
    uint32_t last_haptic_pattern;
    uint32_t last_haptic_intensity;
    unsigned sound_calls;
    uint32_t last_sound;
    unsigned indicator_calls;
    uint32_t last_indicator_mode;
    uint32_t last_indicator_rgb;
} harness_t;

/* A fresh device (all HAL functions present) at t = 1 s. */
harness_t *hx_setup(void);
/* As hx_setup, without the optional feedback functions of the HAL. */
harness_t *hx_setup_without_feedback(void);

/* A reset of the board: the device starts again (cc_device_init) at the
 * current time; the settings store keeps its bytes, the link and the host's
 * packets start afresh. */
void hx_reboot(harness_t *h);
/* As hx_setup, with a HAL that has no settings store (RAM only). */
harness_t *hx_setup_without_store(void);
void hx_send_raw(harness_t *h, const uint8_t *bytes, size_t len);
/* Frames one packet with the host's next sequence number. */
void hx_send_packet(harness_t *h, uint8_t type, uint8_t flags, uint32_t call_id, uint8_t service,
                    uint8_t method, const uint8_t *payload, size_t len);
/* As hx_send_packet with an explicit sequence (the host counter is not advanced). */
void hx_send_packet_seq(harness_t *h, uint16_t seq, uint8_t type, uint8_t flags, uint32_t call_id,
                        uint8_t service, uint8_t method, const uint8_t *payload, size_t len);
/* A REQUEST carrying msg (NULL: empty payload). */
void hx_request(harness_t *h, uint32_t call_id, uint8_t service, uint8_t method, const ProtobufCMessage *msg);
void hx_cancel(harness_t *h, uint32_t call_id);
void hx_ack(harness_t *h, uint16_t seq);
void hx_heartbeat(harness_t *h);

/* cc_device_poll at the current time, repeated while host bytes are unread. */
void hx_poll(harness_t *h);
/* Advances the clock by us in 1 ms steps, polling after each. */
void hx_advance(harness_t *h, uint64_t us);
/* As hx_advance, the host sending a heartbeat every 20 ms (link stays alive). */
void hx_advance_alive(harness_t *h, uint64_t us);

/* Handshake at version 1.minor on call id 1; true when answered. Clears the packets. */
bool hx_handshake(harness_t *h, uint32_t minor);
/* The same handshake, keeping the packets: the device's RESPONSE, or NULL. */
const hx_packet_t *hx_handshake_response(harness_t *h, uint32_t minor);

/* Captured packets. */
void hx_clear(harness_t *h);
const hx_packet_t *hx_find(const harness_t *h, uint8_t type, uint32_t call_id);
size_t hx_count(const harness_t *h, uint8_t type, uint32_t call_id);
/* call_id matching any when HX_ANY_CALL. */
#define HX_ANY_CALL 0xFFFFFFFFu

#endif /* CC_TEST_HARNESS_H */
