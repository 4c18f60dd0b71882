/*
 * CameraControl firmware: the user's settings and their store (PROTOCOL.md
 * §7, "Settings"; config.proto Settings).
 *
 * Pure: bytes in, bytes out; the device reads and writes the store through
 * the HAL (cc_hal_t.settings_read / settings_write). The store is two slots of
 * CC_SETTINGS_SLOT_BYTES, written alternately, each a whole copy with a
 * sequence number and a CRC:
 *
 *   offset  0   1   2        3        4..7          8     9      10    11    12..13  14..15
 *         +---+---+--------+--------+-------------+-----+------+-----+-----+-------+--------+
 *         | C | S | format | length | sequence LE | lpf | dlps | cc  | adj | 0 0   | CRC LE |
 *         +---+---+--------+--------+-------------+-----+------+-----+-----+-------+--------+
 *
 * format 1, length 4 (the settings bytes), lpf/dlps/cc/adj the wire's enum
 * values (LightPressForce, DoubleLightPressSpeed, SettingSwitch), the CRC the
 * protocol's CRC-16 (cc_crc16) of bytes 0..13. A write goes to the slot that
 * does not hold the copy in force, with the next sequence number, so a write
 * cut short (power lost mid-erase or mid-program) damages only that slot and
 * the other still holds the last good copy. At boot the valid copy with the
 * newest sequence number (serial-number arithmetic) wins.
 */
#ifndef CC_SETTINGS_H
#define CC_SETTINGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CC_SETTINGS_SLOTS 2u
#define CC_SETTINGS_SLOT_BYTES 16u

/* The user's settings: the wire's enum values, never 0 (UNSPECIFIED). */
typedef struct cc_settings {
    uint8_t light_press_force;         /* CC_PB_LIGHT_PRESS_FORCE_* */
    uint8_t double_light_press_speed;  /* CC_PB_DOUBLE_LIGHT_PRESS_SPEED_* */
    uint8_t camera_control;            /* CC_PB_SETTING_SWITCH_ON / _OFF */
    uint8_t camera_adjustments;        /* CC_PB_SETTING_SWITCH_ON / _OFF */
} cc_settings_t;

/* The settings in force and what the store holds. */
typedef struct cc_settings_store {
    cc_settings_t current;
    uint32_t sequence;     /* of the copy in force; 0 when none is stored */
    uint32_t writes;       /* copies written since boot */
    uint8_t next_slot;     /* where the next copy goes */
    uint8_t origin;        /* CC_PB_SETTINGS_ORIGIN_*: where `current` came from at boot */
} cc_settings_store_t;

/* Apple's defaults: DEFAULT force, DEFAULT speed, Camera Control and Camera
 * Adjustments on. */
void cc_settings_defaults(cc_settings_t *out);

/* True when every field is a known, non-zero value. */
bool cc_settings_valid(const cc_settings_t *s);

/* True when a and b are the same settings. */
bool cc_settings_equal(const cc_settings_t *a, const cc_settings_t *b);

/* Writes one slot's bytes. */
void cc_settings_encode(const cc_settings_t *s, uint32_t sequence, uint8_t out[CC_SETTINGS_SLOT_BYTES]);

/* Reads one slot: true with *out and *sequence when it holds a valid copy. */
bool cc_settings_decode(const uint8_t slot[CC_SETTINGS_SLOT_BYTES], cc_settings_t *out, uint32_t *sequence);

/* True when a slot holds nothing (all 0xFF, erased flash, or all 0x00). */
bool cc_settings_blank(const uint8_t slot[CC_SETTINGS_SLOT_BYTES]);

/* Boot: picks the settings from the two slots' bytes (NULL: the slot could not
 * be read, counted as blank) and sets origin LOADED, RECOVERED, EMPTY or
 * CORRUPT; with neither (no store at all: slot0 and slot1 NULL and
 * has_store false) the defaults with origin VOLATILE. */
void cc_settings_load(cc_settings_store_t *st, bool has_store, const uint8_t *slot0, const uint8_t *slot1);

/* The next copy of s: returns the slot to write, its bytes in out. Nothing
 * changes until cc_settings_commit. */
uint32_t cc_settings_prepare(const cc_settings_store_t *st, const cc_settings_t *s,
                             uint8_t out[CC_SETTINGS_SLOT_BYTES]);

/* After the copy of cc_settings_prepare was written (stored: true) or when
 * there is no store (stored: false): s is in force. */
void cc_settings_commit(cc_settings_store_t *st, const cc_settings_t *s, bool stored);

/* The light-press thresholds (millinewtons) of a LightPressForce value:
 * LIGHTER 600 / 400, DEFAULT 800 / 500, FIRMER 1100 / 700. False for an
 * unknown value (nothing written). */
bool cc_settings_light_press_mn(uint8_t force, uint32_t *on_mn, uint32_t *off_mn);

#ifdef __cplusplus
}
#endif

#endif /* CC_SETTINGS_H */
