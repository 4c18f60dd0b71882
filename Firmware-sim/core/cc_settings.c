/* CameraControl firmware core: the user's settings and their two-slot store
 * (see cc_settings.h). */
#include "cc_settings.h"

#include "cc_crc16.h"
#include "cc_pb.h"

#define MAGIC0 0x43u   /* 'C' */
#define MAGIC1 0x53u   /* 'S' */
#define FORMAT 1u
#define PAYLOAD_BYTES 4u
#define CRC_OFFSET (CC_SETTINGS_SLOT_BYTES - 2u)

typedef char cc_settings_slot_fits[CC_SETTINGS_SLOT_BYTES >= 16u ? 1 : -1];

void cc_settings_defaults(cc_settings_t *out)
{
    out->light_press_force = (uint8_t)CC_PB_LIGHT_PRESS_FORCE_DEFAULT;
    out->double_light_press_speed = (uint8_t)CC_PB_DOUBLE_LIGHT_PRESS_SPEED_DEFAULT;
    out->camera_control = (uint8_t)CC_PB_SETTING_SWITCH_ON;
    out->camera_adjustments = (uint8_t)CC_PB_SETTING_SWITCH_ON;
}

static bool in_range(uint8_t v, uint32_t max)
{
    return v != 0u && (uint32_t)v <= max;
}

bool cc_settings_valid(const cc_settings_t *s)
{
    return in_range(s->light_press_force, CC_PB_LIGHT_PRESS_FORCE_MAX)
           && in_range(s->double_light_press_speed, CC_PB_DOUBLE_LIGHT_PRESS_SPEED_MAX)
           && in_range(s->camera_control, CC_PB_SETTING_SWITCH_MAX)
           && in_range(s->camera_adjustments, CC_PB_SETTING_SWITCH_MAX);
}

bool cc_settings_equal(const cc_settings_t *a, const cc_settings_t *b)
{
    return a->light_press_force == b->light_press_force
           && a->double_light_press_speed == b->double_light_press_speed
           && a->camera_control == b->camera_control && a->camera_adjustments == b->camera_adjustments;
}

void cc_settings_encode(const cc_settings_t *s, uint32_t sequence, uint8_t out[CC_SETTINGS_SLOT_BYTES])
{
    size_t i;
    uint16_t crc;
    for (i = 0; i < CC_SETTINGS_SLOT_BYTES; i++) {
        out[i] = 0u;
    }
    out[0] = MAGIC0;
    out[1] = MAGIC1;
    out[2] = FORMAT;
    out[3] = PAYLOAD_BYTES;
    out[4] = (uint8_t)(sequence & 0xFFu);
    out[5] = (uint8_t)((sequence >> 8) & 0xFFu);
    out[6] = (uint8_t)((sequence >> 16) & 0xFFu);
    out[7] = (uint8_t)((sequence >> 24) & 0xFFu);
    out[8] = s->light_press_force;
    out[9] = s->double_light_press_speed;
    out[10] = s->camera_control;
    out[11] = s->camera_adjustments;
    crc = cc_crc16(out, CRC_OFFSET);
    out[CRC_OFFSET] = (uint8_t)(crc & 0xFFu);
    out[CRC_OFFSET + 1u] = (uint8_t)(crc >> 8);
}

bool cc_settings_decode(const uint8_t slot[CC_SETTINGS_SLOT_BYTES], cc_settings_t *out, uint32_t *sequence)
{
    cc_settings_t s;
    size_t i;
    uint16_t crc = (uint16_t)(slot[CRC_OFFSET] | ((uint16_t)slot[CRC_OFFSET + 1u] << 8));
    if (slot[0] != MAGIC0 || slot[1] != MAGIC1 || slot[2] != FORMAT || slot[3] != PAYLOAD_BYTES) {
        return false;
    }
    if (cc_crc16(slot, CRC_OFFSET) != crc) {
        return false;
    }
    for (i = 8u + PAYLOAD_BYTES; i < CRC_OFFSET; i++) {
        if (slot[i] != 0u) {
            return false;
        }
    }
    s.light_press_force = slot[8];
    s.double_light_press_speed = slot[9];
    s.camera_control = slot[10];
    s.camera_adjustments = slot[11];
    if (!cc_settings_valid(&s)) {
        return false;
    }
    *out = s;
    *sequence = (uint32_t)slot[4] | ((uint32_t)slot[5] << 8) | ((uint32_t)slot[6] << 16) | ((uint32_t)slot[7] << 24);
    return true;
}

bool cc_settings_blank(const uint8_t slot[CC_SETTINGS_SLOT_BYTES])
{
    size_t i;
    uint8_t first = slot[0];
    if (first != 0x00u && first != 0xFFu) {
        return false;
    }
    for (i = 1; i < CC_SETTINGS_SLOT_BYTES; i++) {
        if (slot[i] != first) {
            return false;
        }
    }
    return true;
}

/* a is newer than b in serial-number arithmetic. */
static bool newer(uint32_t a, uint32_t b)
{
    return a != b && (uint32_t)(a - b) < 0x80000000u;
}

void cc_settings_load(cc_settings_store_t *st, bool has_store, const uint8_t *slot0, const uint8_t *slot1)
{
    const uint8_t *slots[CC_SETTINGS_SLOTS];
    cc_settings_t found[CC_SETTINGS_SLOTS];
    uint32_t seq[CC_SETTINGS_SLOTS];
    bool valid[CC_SETTINGS_SLOTS];
    bool damaged = false;
    uint32_t i;
    uint32_t pick;

    slots[0] = slot0;
    slots[1] = slot1;
    cc_settings_defaults(&st->current);
    st->sequence = 0u;
    st->writes = 0u;
    st->next_slot = 0u;
    if (!has_store) {
        st->origin = (uint8_t)CC_PB_SETTINGS_ORIGIN_VOLATILE;
        return;
    }
    for (i = 0; i < CC_SETTINGS_SLOTS; i++) {
        valid[i] = slots[i] != NULL && cc_settings_decode(slots[i], &found[i], &seq[i]);
        if (!valid[i] && slots[i] != NULL && !cc_settings_blank(slots[i])) {
            damaged = true;
        }
    }
    if (!valid[0] && !valid[1]) {
        st->origin = (uint8_t)(damaged ? CC_PB_SETTINGS_ORIGIN_CORRUPT : CC_PB_SETTINGS_ORIGIN_EMPTY);
        return;
    }
    if (valid[0] && valid[1]) {
        pick = newer(seq[1], seq[0]) ? 1u : 0u;
    } else {
        pick = valid[0] ? 0u : 1u;
    }
    st->current = found[pick];
    st->sequence = seq[pick];
    st->next_slot = (uint8_t)(1u - pick);
    st->origin = (uint8_t)(damaged ? CC_PB_SETTINGS_ORIGIN_RECOVERED : CC_PB_SETTINGS_ORIGIN_LOADED);
}

uint32_t cc_settings_prepare(const cc_settings_store_t *st, const cc_settings_t *s,
                             uint8_t out[CC_SETTINGS_SLOT_BYTES])
{
    uint32_t next = st->sequence + 1u;
    if (next == 0u) {
        next = 1u;   /* 0 means "none stored" */
    }
    cc_settings_encode(s, next, out);
    return st->next_slot;
}

void cc_settings_commit(cc_settings_store_t *st, const cc_settings_t *s, bool stored)
{
    st->current = *s;
    if (stored) {
        st->sequence++;
        if (st->sequence == 0u) {
            st->sequence = 1u;
        }
        st->next_slot = (uint8_t)(1u - st->next_slot);
        st->writes++;
    }
}

bool cc_settings_light_press_mn(uint8_t force, uint32_t *on_mn, uint32_t *off_mn)
{
    switch (force) {
    case CC_PB_LIGHT_PRESS_FORCE_LIGHTER:
        *on_mn = 600u;
        *off_mn = 400u;
        return true;
    case CC_PB_LIGHT_PRESS_FORCE_DEFAULT:
        *on_mn = 800u;
        *off_mn = 500u;
        return true;
    case CC_PB_LIGHT_PRESS_FORCE_FIRMER:
        *on_mn = 1100u;
        *off_mn = 700u;
        return true;
    default:
        return false;
    }
}
