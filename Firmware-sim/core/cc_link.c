/* CameraControl firmware core: sequence numbers, reliability, heartbeats, tx buffer, bulk queue. */
#include "cc_link.h"

#include <string.h>

#include "cc_assert.h"
#include "cc_udiv.h"

#define US_PER_MS 1000u

void cc_link_init(cc_link_t *link, cc_counters_t *counters, uint32_t heartbeat_interval_ms)
{
    memset(link, 0, sizeof *link);
    link->counters = counters;
    link->heartbeat_interval_us = heartbeat_interval_ms * US_PER_MS;
}

void cc_link_set_line_speed(cc_link_t *link, uint32_t bits_per_second)
{
    /* 10 bits a byte: bytes * 10 * 1e6 / bps microseconds (320,000,000 fits 32 bits) */
    uint32_t allowance = bits_per_second == 0u
        ? 0u : CC_UDIV32(CC_LINK_ACK_ALLOWANCE_BYTES * 10u * 1000000u, bits_per_second);
    link->ack_allowance_us = allowance < CC_LINK_MAX_ACK_ALLOWANCE_US ? allowance : CC_LINK_MAX_ACK_ALLOWANCE_US;
}

/* Moves n bytes from src down to dst (dst < src; they may overlap): a byte
 * loop of our own, so newlib's memmove (176 bytes) is not linked. */
static void move_down(uint8_t *dst, const uint8_t *src, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++) {
        dst[i] = src[i];
    }
}

static void clear_slots(cc_link_t *link)
{
    size_t i;
    for (i = 0; i < CC_RELIABLE_SLOTS; i++) {
        link->slots[i].used = false;
    }
    link->store_used = 0;
}

/* Frees a slot and closes up its bytes in the store. */
static void slot_free(cc_link_t *link, cc_reliable_slot_t *slot)
{
    size_t start = slot->offset;
    size_t len = slot->wire_len;
    size_t i;

    CC_ASSERT(slot->used && start + len <= link->store_used);
    slot->used = false;
    move_down(link->store + start, link->store + start + len, link->store_used - start - len);
    link->store_used -= len;
    for (i = 0; i < CC_RELIABLE_SLOTS; i++) {
        if (link->slots[i].used && link->slots[i].offset > start) {
            link->slots[i].offset = (uint16_t)(link->slots[i].offset - len);
        }
    }
}

/* Forgets the bulk packets not yet started (their calls have ended). */
static void bulk_discard(cc_link_t *link)
{
    link->bulk_head = 0;
    link->bulk_tail = 0;
}

void cc_link_start_session(cc_link_t *link, uint16_t handshake_sequence, uint64_t now_us)
{
    clear_slots(link);
    bulk_discard(link);
    link->tx_sequence = 0;
    link->session = true;
    link->answer_unsent = true;
    link->last_rx_us = now_us;
    link->last_tx_us = now_us;
    link->rx_seen = true;
    link->rx_expected = (uint16_t)(handshake_sequence + 1u);
    link->rx_window_top = handshake_sequence;
    /* v1.2: the handshake and every number behind it count as received, so
     * a retransmission of an old session's request that arrives after the
     * handshake is a duplicate, never a call of the new session (PROTOCOL.md
     * §6; the link model, scripts/check-model, found it). */
    link->rx_window[0] = ~0u;
    link->rx_window[1] = ~0u;
}

void cc_link_end_session(cc_link_t *link)
{
    link->session = false;
    clear_slots(link);
    bulk_discard(link);
}

bool cc_link_session(const cc_link_t *link)
{
    return link->session;
}

/* ---- transmit buffer ---- */

void cc_link_note_rx_pending(cc_link_t *link, uint64_t now_us)
{
    link->last_rx_us = now_us;
}

void cc_link_credit_silence(cc_link_t *link, uint64_t now_us, uint64_t credit_us)
{
    uint64_t since = link->last_rx_us < now_us ? link->last_rx_us : now_us;
    link->last_rx_us = since + credit_us;
}

size_t cc_link_tx_free(const cc_link_t *link)
{
    return CC_TX_BUFFER_BYTES - (link->tx_tail - link->tx_head);
}

/* Moves pending bytes to the front when the tail lacks need bytes. */
static void tx_make_room(cc_link_t *link, size_t need)
{
    size_t pending = link->tx_tail - link->tx_head;
    if (CC_TX_BUFFER_BYTES - link->tx_tail >= need || link->tx_head == 0u) {
        return;
    }
    move_down(link->tx_buf, link->tx_buf + link->tx_head, pending);
    link->tx_head = 0;
    link->tx_tail = pending;
}

/* Appends ready wire bytes; false when they do not fit. */
static bool tx_append(cc_link_t *link, const uint8_t *wire, size_t len, uint64_t now_us)
{
    tx_make_room(link, len);
    if (CC_TX_BUFFER_BYTES - link->tx_tail < len) {
        return false;
    }
    memcpy(link->tx_buf + link->tx_tail, wire, len);
    link->tx_tail += len;
    link->tx_queued_total += (uint32_t)len;
    link->last_tx_us = now_us;
    link->heartbeat_waits = false;
    link->counters->frames_sent++;
    return true;
}

size_t cc_link_bulk_free(const cc_link_t *link)
{
    return CC_TX_BULK_BYTES - (link->bulk_tail - link->bulk_head);
}

static bool bulk_frame_started(const cc_link_t *link)
{
    return link->bulk_wire_pos < link->bulk_wire_len;
}

/* Numbers and frames the oldest bulk body into bulk_wire; false when none. */
static bool bulk_start_next(cc_link_t *link)
{
    while (link->bulk_head != link->bulk_tail) {
        uint8_t *entry = link->bulk_buf + link->bulk_head;
        size_t body_len = (size_t)entry[0] | ((size_t)entry[1] << 8);
        uint8_t *body = entry + CC_LINK_BULK_LENGTH_BYTES;
        size_t n;

        CC_ASSERT(CC_LINK_BULK_LENGTH_BYTES + body_len <= link->bulk_tail - link->bulk_head);
        body[CC_WIRE_SEQUENCE_OFFSET] = (uint8_t)(link->tx_sequence & 0xFFu);
        body[CC_WIRE_SEQUENCE_OFFSET + 1u] = (uint8_t)(link->tx_sequence >> 8);
        n = cc_frame_encode(body, body_len, link->bulk_wire, sizeof link->bulk_wire);
        link->bulk_head += CC_LINK_BULK_LENGTH_BYTES + body_len;
        if (link->bulk_head == link->bulk_tail) {
            link->bulk_head = 0;
            link->bulk_tail = 0;
        }
        /* never 0: bulk_wire holds the frame of the largest body the queue can (CC_LINK_BULK_WIRE_BYTES) */
        CC_ASSERT(n != 0u);
        link->tx_sequence++;
        link->counters->frames_sent++;
        link->bulk_wire_pos = 0;
        link->bulk_wire_len = n;
        return true;
    }
    return false;
}

const uint8_t *cc_link_tx_pending(cc_link_t *link, size_t *len)
{
    if (link->tx_tail == link->tx_head && link->bulk_head == link->bulk_tail && !bulk_frame_started(link)) {
        *len = 0u;   /* nothing waits: the common case of every poll */
        return NULL;
    }
    if (!bulk_frame_started(link) && link->tx_tail == link->tx_head) {
        (void)bulk_start_next(link);
    }
    if (bulk_frame_started(link)) {   /* a started frame is finished first: never cut */
        *len = link->bulk_wire_len - link->bulk_wire_pos;
        return link->bulk_wire + link->bulk_wire_pos;
    }
    *len = link->tx_tail - link->tx_head;
    return *len == 0u ? NULL : link->tx_buf + link->tx_head;
}

void cc_link_tx_consume(cc_link_t *link, size_t n)
{
    if (bulk_frame_started(link)) {
        CC_ASSERT(n <= link->bulk_wire_len - link->bulk_wire_pos);
        link->bulk_wire_pos += n;
        if (link->bulk_wire_pos == link->bulk_wire_len) {
            link->bulk_wire_pos = 0;
            link->bulk_wire_len = 0;
        }
        return;
    }
    CC_ASSERT(n <= link->tx_tail - link->tx_head);
    link->tx_taken_total += (uint32_t)n;
    link->tx_head += n;
    if (link->tx_head == link->tx_tail) {
        link->tx_head = 0;
        link->tx_tail = 0;
    }
}

/* ---- sending ---- */

uint8_t *cc_link_payload(cc_link_t *link)
{
    return link->body + CC_WIRE_MAX_ENVELOPE_BYTES;
}

size_t cc_link_payload_cap(uint8_t type, uint32_t call_id)
{
    return CC_MAX_FRAME_BYTES - CC_WIRE_CHECK_BYTES - cc_envelope_size_of(type, call_id);
}

/* Transmits (or retransmits) a reliable slot if the tx buffer has room. */
static void slot_transmit(cc_link_t *link, cc_reliable_slot_t *slot, uint64_t now_us)
{
    if (!tx_append(link, link->store + slot->offset, slot->wire_len, now_us)) {
        return;   /* still due: tried again at the next poll */
    }
    if (slot->tries > 0u) {
        link->counters->retransmissions++;
    }
    slot->queued_end = link->tx_queued_total;
    slot->tries++;
    slot->due_us = now_us + slot->rto_us + link->ack_allowance_us;
    slot->rto_us *= 2u;
}

/* True while the slot's last copy still waits in the tx buffer (not yet
 * taken by the UART): another copy then would only queue behind it. */
static bool slot_copy_queued(const cc_link_t *link, const cc_reliable_slot_t *slot)
{
    uint32_t waiting = slot->queued_end - link->tx_taken_total;
    return slot->tries > 0u && waiting != 0u && waiting <= CC_TX_BUFFER_BYTES;
}

static cc_reliable_slot_t *free_slot(cc_link_t *link)
{
    size_t i;
    for (i = 0; i < CC_RELIABLE_SLOTS; i++) {
        if (!link->slots[i].used) {
            return &link->slots[i];
        }
    }
    return NULL;
}

/* Writes the envelope just before the payload in link->body; returns the
 * body's start and sets *body_len. */
static uint8_t *write_body(cc_link_t *link, uint8_t type, bool reliable, uint32_t call_id, uint8_t status,
                           size_t payload_len, size_t *body_len)
{
    cc_envelope_t env;
    size_t header_len;
    uint8_t *frame;

    memset(&env, 0, sizeof env);
    env.type = type;
    env.flags = reliable ? (uint8_t)CC_WIRE_FLAG_RELIABLE : 0u;
    env.sequence = link->tx_sequence;
    env.call_id = call_id;
    env.status = status;
    header_len = cc_envelope_size(&env);
    CC_ASSERT(header_len <= CC_WIRE_MAX_ENVELOPE_BYTES);
    frame = link->body + (CC_WIRE_MAX_ENVELOPE_BYTES - header_len);   /* header ends where the payload starts */
    (void)cc_envelope_write(&env, frame, header_len);
    *body_len = header_len + payload_len;
    return frame;
}

cc_send_result_t cc_link_send_bulk(cc_link_t *link, uint8_t type, uint32_t call_id, size_t payload_len,
                                   uint64_t now_us)
{
    size_t body_len;
    size_t need;
    uint8_t *body;
    uint8_t *entry;

    CC_ASSERT(payload_len <= cc_link_payload_cap(type, call_id));   /* the callers' bound (cc_link.h) */
    body = write_body(link, type, false, call_id, 0, payload_len, &body_len);   /* sequence set when started */
    need = CC_LINK_BULK_LENGTH_BYTES + body_len;
    if (need > CC_TX_BULK_BYTES - link->bulk_tail && link->bulk_head != 0u) {
        move_down(link->bulk_buf, link->bulk_buf + link->bulk_head, link->bulk_tail - link->bulk_head);
        link->bulk_tail -= link->bulk_head;
        link->bulk_head = 0;
    }
    if (need > CC_TX_BULK_BYTES - link->bulk_tail) {
        link->counters->tx_dropped++;
        return CC_SEND_TX_FULL;
    }
    entry = link->bulk_buf + link->bulk_tail;
    entry[0] = (uint8_t)(body_len & 0xFFu);
    entry[1] = (uint8_t)(body_len >> 8);
    memcpy(entry + CC_LINK_BULK_LENGTH_BYTES, body, body_len);
    link->bulk_tail += need;
    /* Not last_tx_us: best-effort stream messages do not stand in for a
     * heartbeat (PROTOCOL.md §8, v1.1). Large raw batches rarely survive a
     * noisy line; the small heartbeats keep the host's liveness going. */
    (void)now_us;
    return CC_SEND_OK;
}

cc_send_result_t cc_link_send(cc_link_t *link, uint8_t type, bool reliable, uint32_t call_id,
                              uint8_t status, size_t payload_len, uint64_t now_us)
{
    size_t body_len;
    size_t wire_len;
    uint8_t *frame;
    size_t n;

    CC_ASSERT(payload_len <= cc_link_payload_cap(type, call_id));   /* the callers' bound (cc_link.h) */
    frame = write_body(link, type, reliable, call_id, status, payload_len, &body_len);
    wire_len = cc_frame_wire_bytes(body_len + CC_WIRE_CHECK_BYTES);

    if (reliable) {
        cc_reliable_slot_t *slot = free_slot(link);
        if (slot != NULL
            && wire_len <= CC_RELIABLE_STORE_BYTES - link->store_used) {
            n = cc_frame_encode(frame, body_len, link->store + link->store_used,
                                CC_RELIABLE_STORE_BYTES - link->store_used);
            CC_ASSERT(n != 0u);
            slot->used = true;
            slot->offset = (uint16_t)link->store_used;
            link->store_used += n;
            slot->wire_len = (uint16_t)n;
            slot->sequence = link->tx_sequence;
            slot->call_id = call_id;
            slot->tries = 0;
            slot->rto_us = CC_WIRE_RTO_INITIAL_US;
            slot->due_us = now_us;
            link->tx_sequence++;
            slot_transmit(link, slot, now_us);
            return CC_SEND_OK;
        }
        /* No slot (or no room in the store): sent once, without the flag,
         * so no one waits for an ACK that protects nothing (§6). */
        frame[0] = (uint8_t)(frame[0] & ~CC_WIRE_FLAG_RELIABLE);
        link->counters->reliable_unprotected++;
    }

    tx_make_room(link, wire_len);
    n = cc_frame_encode(frame, body_len, link->tx_buf + link->tx_tail, CC_TX_BUFFER_BYTES - link->tx_tail);
    if (n == 0u) {
        link->counters->tx_dropped++;
        return CC_SEND_TX_FULL;
    }
    link->tx_tail += n;
    link->tx_queued_total += (uint32_t)n;
    link->tx_sequence++;
    link->last_tx_us = now_us;
    link->counters->frames_sent++;
    return CC_SEND_OK;
}

/* True when the bulk queue entry's body is a packet of call_id: its call id, a minimal varint
 * (cc_link_send_bulk wrote it), compared 7 bits at a time. */
static bool bulk_of_call(const uint8_t *entry, uint32_t call_id)
{
    const uint8_t *p = entry + CC_LINK_BULK_LENGTH_BYTES + CC_WIRE_CALL_ID_OFFSET;
    for (;;) {
        uint8_t b = *p++;
        if (((b ^ call_id) & CC_WIRE_VARINT_PAYLOAD) != 0u) {
            return false;
        }
        call_id >>= CC_WIRE_VARINT_BITS;
        if ((b & CC_WIRE_VARINT_CONTINUE) == 0u) {
            return call_id == 0u;
        }
    }
}

void cc_link_forget_call(cc_link_t *link, uint32_t call_id)
{
    size_t i;
    uint8_t *to = link->bulk_buf + link->bulk_head;
    uint8_t *from = to;
    uint8_t *end = link->bulk_buf + link->bulk_tail;
    for (i = 0; i < CC_RELIABLE_SLOTS; i++) {
        if (link->slots[i].used && link->slots[i].call_id == call_id) {
            slot_free(link, &link->slots[i]);
        }
    }
    /* its bulk packets not yet started (numbered only when started: no gap in the sequence) go,
     * the others close up (PROTOCOL.md §7: nothing more for a call that ended) */
    while (from != end) {
        size_t n = CC_LINK_BULK_LENGTH_BYTES + ((size_t)from[0] | ((size_t)from[1] << 8));
        if (!bulk_of_call(from, call_id)) {
            move_down(to, from, n);
            to += n;
        }
        from += n;
    }
    link->bulk_tail = (size_t)(to - link->bulk_buf);
}

size_t cc_link_unacked(const cc_link_t *link)
{
    size_t i;
    size_t n = 0;
    for (i = 0; i < CC_RELIABLE_SLOTS; i++) {
        if (link->slots[i].used) {
            n++;
        }
    }
    return n;
}

/* ---- receiving ---- */

void cc_link_reset_receive(cc_link_t *link)
{
    link->rx_seen = false;
    link->rx_expected = 0;
    link->rx_window_top = 0;
    link->rx_window[0] = 0u;
    link->rx_window[1] = 0u;
}

/* Counts the packets missing before seq (PROTOCOL.md §6). */
static void track_sequence(cc_link_t *link, uint16_t seq)
{
    uint16_t ahead;
    if (!link->rx_seen) {
        link->rx_seen = true;
        link->rx_expected = (uint16_t)(seq + 1u);
        return;
    }
    /* d = seq - last = ahead + 1: d in [1, 2^15) is ahead by d, d - 1 lost;
     * d = 0 or d >= 2^15 (behind) is a duplicate or a late packet (§6) */
    ahead = (uint16_t)(seq - link->rx_expected);
    if (ahead < CC_WIRE_SEQUENCE_HALF_RANGE - 1u) {
        link->counters->sequence_gaps += ahead;
        link->rx_expected = (uint16_t)(seq + 1u);
    }
    /* otherwise an older packet (a retransmission): no change */
}

typedef char cc_window_is_two_words[CC_WIRE_DUPLICATE_WINDOW == 2u * 32u ? 1 : -1];

/* Marks seq delivered in the 64-entry window; true when it already was (or
 * is older than the window). */
static bool window_mark(cc_link_t *link, uint16_t seq)
{
    uint32_t *w = link->rx_window;
    uint32_t ahead;
    uint32_t age;
    uint32_t bit;

    if (w[0] == 0u && w[1] == 0u) {
        link->rx_window_top = seq;
        w[0] = 1u;
        return false;
    }
    ahead = (uint16_t)(seq - link->rx_window_top);
    if (ahead != 0u && ahead < CC_WIRE_SEQUENCE_HALF_RANGE) {
        /* the window moves ahead by 1 .. 63 entries, or is new */
        if (ahead >= CC_WIRE_DUPLICATE_WINDOW) {
            w[1] = 0u;
            w[0] = 0u;
        } else if (ahead >= 32u) {
            w[1] = w[0] << (ahead - 32u);
            w[0] = 0u;
        } else {
            w[1] = (w[1] << ahead) | (w[0] >> (32u - ahead));
            w[0] <<= ahead;
        }
        w[0] |= 1u;
        link->rx_window_top = seq;
        return false;
    }
    age = (uint16_t)(link->rx_window_top - seq);
    if (age >= CC_WIRE_DUPLICATE_WINDOW) {
        return true;
    }
    bit = 1u << (age % 32u);
    if ((w[age / 32u] & bit) != 0u) {
        return true;
    }
    w[age / 32u] |= bit;
    return false;
}

static void send_ack(cc_link_t *link, uint16_t seq, uint64_t now_us)
{
    uint8_t *p = cc_link_payload(link);
    p[0] = (uint8_t)(seq & 0xFFu);
    p[1] = (uint8_t)(seq >> 8);
    (void)cc_link_send(link, CC_PKT_ACK, false, CC_WIRE_LINK_CALL_ID, 0, CC_WIRE_ACK_PAYLOAD_BYTES, now_us);
}

static void receive_ack(cc_link_t *link, uint16_t acked)
{
    size_t i;
    for (i = 0; i < CC_RELIABLE_SLOTS; i++) {
        cc_reliable_slot_t *slot = &link->slots[i];
        if (slot->used && slot->sequence == acked && slot->tries > 0u) {
            slot_free(link, slot);
        }
    }
}

bool cc_link_is_newest(const cc_link_t *link, uint16_t sequence)
{
    return link->rx_seen && (link->rx_window[0] | link->rx_window[1]) != 0u && link->rx_window_top == sequence;
}

void cc_link_accept_handshake(cc_link_t *link, const cc_envelope_t *env, uint64_t now_us)
{
    link->last_rx_us = now_us;
    if ((env->flags & CC_WIRE_FLAG_RELIABLE) != 0u) {
        send_ack(link, env->sequence, now_us);
    }
}

void cc_link_drop_duplicate(cc_link_t *link, const cc_envelope_t *env, uint64_t now_us)
{
    link->last_rx_us = now_us;
    if ((env->flags & CC_WIRE_FLAG_RELIABLE) != 0u) {
        send_ack(link, env->sequence, now_us);   /* the first ACK may have been lost */
    }
    link->counters->duplicates_dropped++;
}

cc_rx_verdict_t cc_link_receive(cc_link_t *link, const cc_envelope_t *env, uint64_t now_us)
{
    bool reliable = (env->flags & CC_WIRE_FLAG_RELIABLE) != 0u;
    bool duplicate;

    link->last_rx_us = now_us;
    track_sequence(link, env->sequence);
    duplicate = window_mark(link, env->sequence);
    if (reliable) {
        send_ack(link, env->sequence, now_us);   /* every time: the first ACK may be lost */
    }
    if (duplicate) {   /* whatever its flags (§6, v1.1): nothing is delivered twice */
        link->counters->duplicates_dropped++;
        return CC_RX_DUPLICATE;
    }
    switch (env->type) {
    case CC_PKT_ACK:
        /* the envelope parser refused an ACK without its payload */
        CC_ASSERT(env->payload_len >= CC_WIRE_ACK_PAYLOAD_BYTES);
        receive_ack(link, (uint16_t)(env->payload[0] | ((uint16_t)env->payload[1] << 8)));
        return CC_RX_CONSUMED;
    case CC_PKT_HEARTBEAT:
        return CC_RX_CONSUMED;
    default:
        return CC_RX_DELIVER;
    }
}

/* ---- timers ---- */

static bool elapsed(uint64_t now_us, uint64_t since_us, uint64_t interval_us)
{
    return now_us >= since_us && now_us - since_us >= interval_us;
}

/* True while packet 0 of the session (its HandshakeResponse) waits to
 * leave: not yet queued for want of room, or a copy still in tx_buf. */
static bool answer_waiting(const cc_link_t *link)
{
    size_t i;
    for (i = 0; i < CC_RELIABLE_SLOTS; i++) {
        const cc_reliable_slot_t *slot = &link->slots[i];
        if (slot->used && slot->sequence == 0u) {
            return slot->tries == 0u || slot_copy_queued(link, slot);
        }
    }
    return false;
}

bool cc_link_poll(cc_link_t *link, uint64_t now_us)
{
    size_t i;

    /* The host cannot answer a HandshakeResponse it has not received: on a
     * slow line the response may take longer than the dead timeout to leave,
     * so the silence counts from when it has (PROTOCOL.md §8, v1.2). */
    if (link->answer_unsent) {
        if (answer_waiting(link)) {
            link->last_rx_us = now_us;
        } else {
            link->answer_unsent = false;
        }
    }
    /* A frame still arriving keeps the link alive (§8, v1.2): on a slow line one frame of the host's can
     * take longer than the dead timeout (1,024 bytes are 1.07 s at 9600 baud). */
    if (link->session
        && elapsed(now_us, link->last_rx_us, (uint64_t)link->heartbeat_interval_us * CC_WIRE_DEAD_AFTER_HEARTBEATS)
        && (link->frame_byte_us == 0u
            || (uint32_t)now_us - link->frame_byte_us >= link->heartbeat_interval_us * CC_WIRE_DEAD_AFTER_HEARTBEATS)) {
        cc_link_end_session(link);
        link->counters->heartbeat_timeouts++;
        return true;
    }
    /* store_used is the sum of the used slots' wire bytes: 0 when none is used */
    for (i = 0; i < CC_RELIABLE_SLOTS && link->store_used != 0u; i++) {
        cc_reliable_slot_t *slot = &link->slots[i];
        if (!slot->used) {
            continue;
        }
        if (slot_copy_queued(link, slot)) {
            /* Not sent again while its copy waits; its timeout (half the
             * doubled one) counts at the earliest from the last poll that
             * saw it waiting, so from about when it has left. */
            uint64_t due_us = now_us + slot->rto_us / 2u + link->ack_allowance_us;
            if (due_us > slot->due_us) {
                slot->due_us = due_us;
            }
            continue;
        }
        if (now_us < slot->due_us) {
            continue;
        }
        if (slot->tries >= CC_WIRE_MAX_TRIES) {
            slot_free(link, slot);   /* given up: never acknowledged */
            link->counters->reliable_given_up++;
            continue;
        }
        slot_transmit(link, slot, now_us);
    }
    if (link->tx_tail != link->tx_head && link->heartbeat_waits) {
        /* A heartbeat already waits behind a frame still leaving: no second one, and the interval counts from
         * when the buffer has drained (PROTOCOL.md §8, v1.2). The one right behind a long frame keeps the link
         * if that frame is corrupted on the line; one per interval held the line (3 behind a 170 ms frame at
         * 9600 baud). */
        link->last_tx_us = now_us;
    } else if (link->session && elapsed(now_us, link->last_tx_us, link->heartbeat_interval_us)) {
        /* A heartbeat follows an idle line: it starts with a delimiter (an
         * extra 0x00, PROTOCOL.md §2), so a frame before it whose delimiter
         * was corrupted costs only that frame, not the heartbeat too (§8). */
        tx_make_room(link, 1u);
        if (link->tx_tail < CC_TX_BUFFER_BYTES) {
            link->tx_buf[link->tx_tail++] = 0x00u;
            link->tx_queued_total++;
        }
        (void)cc_link_send(link, CC_PKT_HEARTBEAT, false, CC_WIRE_LINK_CALL_ID, 0, 0, now_us);
        link->heartbeat_waits = true;
    }
    return false;
}
