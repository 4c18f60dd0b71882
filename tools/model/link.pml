/*
 * CameraControl link layer (docs/PROTOCOL.md §6, §8, §9) as a Promela model, checked with spin by
 * scripts/check-model. Its constants come from Firmware-sim/core/include/cc_config.h and cc_wire.h
 * (scripts/check-model extracts them and passes them with -D):
 *   MAX_TRIES  transmissions of one reliable packet (CC_WIRE_MAX_TRIES, "at most 8 tries")
 *   RTO        first retransmission timeout, in ticks (CC_WIRE_RTO_INITIAL_US; doubles each try)
 *   HB         heartbeat interval, in ticks (CC_HEARTBEAT_INTERVAL_MS)
 *   DEAD       ticks without a valid frame before the link is dead (CC_WIRE_DEAD_AFTER_HEARTBEATS x HB)
 *   WINDOW     numbers a receiver remembers (CC_WIRE_DUPLICATE_WINDOW, the device's; the host keeps more)
 * One tick is the greatest common divisor of the RTO and the heartbeat interval (10 ms by default).
 *
 * Two parts, chosen with -D:
 *   TRANSFER   the device sends K reliable input events to the host over a lossy line (each frame may be
 *              lost while the loss budget LOSS lasts), retransmits, gives up, both sides send heartbeats
 *              and declare the link dead. Checked: no event delivered twice (assert), and at the end
 *              (all events settled) every event delivered or reported (reliable_given_up or link death);
 *              with LOSS below DEAD, every event delivered and the link alive (bounded-loss liveness).
 *   SESSION    the host sends a reliable request (a call), the device may lose its ACK, the host starts
 *              a new session with a handshake while the old request may still be retransmitted; the
 *              device runs new-session ERRORs and the response. Checked: no call of the old session is
 *              executed in the new one, no request executed twice, and a packet of the new session is
 *              never freed by an ACK of the old numbering. ANCHOR_ALL=0 and NEW_SESSION_ERROR_RELIABLE=1
 *              model protocol v1.1, where spin finds both violations (scripts/check-model shows it).
 *   HANDSHAKE_ACKS  a host's handshake attempts (copies, an attempt given up for a second one) while the
 *              old session's last reliable event is still on its way, and the device's rule for a copy of
 *              the handshake that started its session (§9: same call id and number, nothing newer received
 *              since). Checked: no handshake starts two sessions, and no ACK of one attempt's
 *              HandshakeResponse frees another's (both are packet 0). HOST_ACKS_ALL=1 models a host that
 *              acknowledges every reliable packet while its handshake awaits its answer (before v1.2's
 *              rule, §9), where spin finds both (WATCH_SESSIONS=0 or WATCH_FREED=0 watches one only);
 *              HOST_HEARTBEAT=1 a host that sends one HEARTBEAT meanwhile (a re-handshake on a session
 *              whose heartbeats go on), where spin finds a second session.
 * Time: a clock process advances one tick only when nothing else can move (Promela's `timeout`), so every
 * instantaneous action of a tick happens before the next tick.
 */

#ifndef K
#define K 2
#endif
#ifndef LOSS
#define LOSS 2
#endif
#ifndef ANCHOR_ALL
#define ANCHOR_ALL 1
#endif
#ifndef NEW_SESSION_ERROR_RELIABLE
#define NEW_SESSION_ERROR_RELIABLE 0
#endif
/* Breakers (scripts/check-model runs each and expects spin to find the violation):
 *   BREAK_NO_DEDUPE      the host delivers duplicates (TRANSFER: "delivered twice")
 *   BREAK_SILENT_GIVEUP  the device gives a packet up without counting it ("lost without report")
 *   ANCHOR_ALL=0, NEW_SESSION_ERROR_RELIABLE=1   protocol v1.1's session reset (SESSION) */

#ifndef HOST_ACKS_ALL
#define HOST_ACKS_ALL 0
#endif
#ifndef HOST_HEARTBEAT
#define HOST_HEARTBEAT 0
#endif
#ifndef WATCH_SESSIONS
#define WATCH_SESSIONS 1
#endif
#ifndef WATCH_FREED
#define WATCH_FREED 1
#endif

mtype = { DATA, ACK, HBEAT, REQ, HANDSHAKE, RESP, ERR, CANCEL };

#ifdef TRANSFER
/* ---------------- TRANSFER: reliability, dedupe, give-up, heartbeats, link death ---------------- */

chan d2h = [4] of { mtype, byte, byte };   /* type, sequence, event index (K = none) */
chan h2d = [4] of { mtype, byte, byte };   /* type, sequence (ACK: the acknowledged one), unused */

byte losses;                 /* frames lost so far (at most LOSS) */
bool delivered[3];           /* the host delivered event i */
byte deliveries;             /* deliveries in all, duplicates included (never more than K) */
bool given_up[3];            /* the device gave event i up (reliable_given_up) */
bool dev_dead;               /* the device declared the link dead (heartbeat_timeouts) */
bool host_dead;              /* the host declared the link dead (fails its calls: reported) */
bool ticked;                 /* a tick passed since the processes last ran their timers */

/* device: one slot per event */
byte dev_seq;                /* next sequence number */
byte slot_seq[3];
byte slot_tries[3];          /* transmissions so far */
short slot_due[3];           /* ticks until the next transmission or give-up */
short slot_rto[3];
bool slot_used[3];
byte sent;                   /* events queued so far */
short dev_idle;              /* ticks since the device last sent */
short dev_quiet;             /* ticks since it last received a valid frame */

/* host */
short host_idle;
short host_quiet;
bool host_seen;              /* host has a window */
byte host_top;               /* newest number received */
int host_win;                /* bit a: host_top - a received, a < 32 */
int host_win2;               /* bit a - 32: host_top - a received, 32 <= a < 64 */

#define LOSE_OR(ch, a, b, c) \
    if \
    :: losses < LOSS -> losses++ \
    :: ch!a, b, c \
    fi

inline device_send(t, s, e) {
    LOSE_OR(d2h, t, s, e);
    dev_idle = 0
}

inline host_send(t, s) {
    LOSE_OR(h2d, t, s, 0);
    host_idle = 0
}

/* The host's duplicate window (§6): marks s, sets dup when it was already received or is too old. */
inline host_window(s, dup) {
    byte ahead; byte age;
    dup = false;
    if
    :: !host_seen -> host_seen = true; host_top = s; host_win = 1; host_win2 = 0
    :: else ->
        ahead = (s - host_top) % 256;
        if
        :: ahead != 0 && ahead < 128 ->
            if
            :: ahead >= WINDOW -> host_win = 0; host_win2 = 0
            :: ahead >= 32 -> host_win2 = host_win << (ahead - 32); host_win = 0
            :: else -> host_win2 = (host_win2 << ahead) | ((host_win >> (32 - ahead)) & ((1 << ahead) - 1));
                       host_win = host_win << ahead
            fi;
            host_win = host_win | 1;
            host_top = s
        :: else ->
            age = (host_top - s) % 256;
            if
            :: age >= WINDOW -> dup = true
            :: age < 32 && (host_win & (1 << age)) != 0 -> dup = true
            :: age < 32 && (host_win & (1 << age)) == 0 -> host_win = host_win | (1 << age)
            :: age >= 32 && (host_win2 & (1 << (age - 32))) != 0 -> dup = true
            :: age >= 32 && (host_win2 & (1 << (age - 32))) == 0 -> host_win2 = host_win2 | (1 << (age - 32))
            fi
        fi
    fi
}

proctype Device() {
    byte t, s, x, i;
end:
    do
    /* a new input event: the device sends it RELIABLE at once (one event per tick at most) */
    :: atomic { !dev_dead && sent < K && ticked ->
        ticked = false;
        slot_used[sent] = true; slot_seq[sent] = dev_seq; dev_seq = (dev_seq + 1) % 256;
        slot_tries[sent] = 1; slot_rto[sent] = RTO; slot_due[sent] = RTO;
        device_send(DATA, slot_seq[sent], sent);
        sent++ }
    :: atomic { h2d?t, s, x ->
        dev_quiet = 0;
        if
        :: !dev_dead && t == ACK ->
            i = 0;
            do
            :: i < K -> if :: slot_used[i] && slot_seq[i] == s -> slot_used[i] = false :: else fi; i++
            :: else -> break
            od
        :: else
        fi }
    od
}

proctype Host() {
    byte t, s, e;
    bool dup;
end:
    do
    :: atomic { d2h?t, s, e -> if :: host_dead -> goto done :: else fi;
        host_quiet = 0;
        host_window(s, dup);
        if
        :: t == DATA -> host_send(ACK, s)   /* every time, duplicates too */
        :: else
        fi;
        if
#ifdef BREAK_NO_DEDUPE
        :: t == DATA ->
#else
        :: t == DATA && !dup ->
#endif
            assert(!delivered[e]);           /* no packet delivered twice */
            delivered[e] = true; deliveries++
        :: else
        fi;
done:   skip }
    od
}

/* Every event settled: delivered, given up (counted) or its link dead (both sides report it). */
#define SETTLED(i) (i >= K || delivered[i] || given_up[i] || dev_dead || host_dead)
#define ALL_SETTLED (sent == K && SETTLED(0) && SETTLED(1) && SETTLED(2))
/* The device holds nothing more and nothing is on the line: the run is over. */
#define QUIESCENT (sent == K && !slot_used[0] && !slot_used[1] && !slot_used[2] && empty(d2h) && empty(h2d))
#define ALL_DELIVERED (delivered[0] && (K < 2 || delivered[1]) && (K < 3 || delivered[2]))

/* One tick: every timer of both sides moves, then the due actions of that instant. */
proctype Clock() {
    byte i;
end:
    do
    :: timeout ->
        atomic {
            if
            :: (dev_dead && host_dead) || QUIESCENT -> break   /* nothing left to happen */
            :: else
            fi;
            ticked = true;
            /* device timers (cc_link_poll: death first, then retransmissions, then the heartbeat) */
            if
            :: !dev_dead ->
                dev_quiet++; dev_idle++;
                if
                :: dev_quiet >= DEAD -> dev_dead = true;   /* ends every call: slots forgotten */
                    i = 0;
                    do :: i < K -> slot_used[i] = false; i++ :: else -> break od
                :: else ->
                    i = 0;
                    do
                    :: i < K ->
                        if
                        :: slot_used[i] ->
                            slot_due[i]--;
                            if
                            :: slot_due[i] <= 0 && slot_tries[i] >= MAX_TRIES ->
                                slot_used[i] = false;
#ifndef BREAK_SILENT_GIVEUP
                                given_up[i] = true
#endif
                            :: slot_due[i] <= 0 && slot_tries[i] < MAX_TRIES ->
                                slot_rto[i] = slot_rto[i] * 2; slot_due[i] = slot_rto[i]; slot_tries[i]++;
                                device_send(DATA, slot_seq[i], i)
                            :: else
                            fi
                        :: else
                        fi;
                        i++
                    :: else -> break
                    od;
                    if
                    :: dev_idle >= HB -> device_send(HBEAT, dev_seq, K); dev_seq = (dev_seq + 1) % 256
                    :: else
                    fi
                fi
            :: else
            fi;
            /* host timers */
            if
            :: !host_dead ->
                host_quiet++; host_idle++;
                if
                :: host_quiet >= DEAD -> host_dead = true
                :: host_idle >= HB -> host_send(HBEAT, 0)
                :: else
                fi
            :: else
            fi
        }
    od
}


init {
    assert(K >= 1 && K <= 3);
    atomic { run Device(); run Host(); run Clock(); run Monitor() }
}

/* no reliable event lost without being reported: whenever the device holds no slot for an event it
 * sent, that event was delivered, given up (counted) or its link is dead */
#define FORGOTTEN(i) (i < sent && !slot_used[i] && !delivered[i] && !given_up[i] && !dev_dead)
proctype Monitor() {
end: atomic { (FORGOTTEN(0) || FORGOTTEN(1) || FORGOTTEN(2) || deliveries > K) -> assert(false) }
}
/* liveness: every run settles every event (with LOSS < DEAD / HB, check-model also asserts delivery) */
ltl settles { <> ALL_SETTLED }
ltl delivers { <> (ALL_DELIVERED && !dev_dead && !host_dead) }
#endif

#ifdef SESSION
/* ---------------- SESSION: handshake, session reset, the old call ---------------- */

chan h2d = [8] of { mtype, byte, byte };   /* type, sequence, call id (ACK: the acknowledged one) */
chan d2h = [8] of { mtype, byte, byte };   /* type, sequence, call id */

byte session;                /* the device's session: 1, then 2 after the new handshake */
byte executed[3];            /* times call c (1: the old session's request) ran */
byte exec_session[3];        /* the session call c ran in */
bool old_acked;              /* the host got the ACK of its request */
bool host_new;               /* the host got the new HandshakeResponse */
bool resp_freed_early;       /* the device freed the new session's response slot on an old ACK */

/* device */
byte rx_top;                 /* newest host number received */
int rx_win;                  /* bit a: rx_top - a received (a < 32; WINDOW ages beyond stay "new") */
byte dev_seq;
bool slot_used; byte slot_seq; byte slot_session;   /* one reliable packet awaiting an ACK */

inline window(s, dup) {
    byte ahead, age;
    dup = false;
    ahead = (s - rx_top) % 256;
    if
    :: ahead != 0 && ahead < 128 -> rx_win = (ahead >= 32 -> 0 : rx_win << ahead) | 1; rx_top = s
    :: else ->
        age = (rx_top - s) % 256;
        if
        :: age >= 32 -> dup = (ANCHOR_ALL != 0)   /* beyond the model's 32 bits: as the anchor says */
        :: else -> dup = ((rx_win & (1 << age)) != 0); rx_win = rx_win | (1 << age)
        fi
    fi
}

proctype Device() {
    byte t, s, c;
    bool dup;
end:
    do
    :: h2d?t, s, c ->
        atomic {
        if
        :: t == HANDSHAKE ->
            d2h!ACK, s, 0;   /* in the old numbering */
            dev_seq = (dev_seq + 1) % 256;
            /* new session: the live old call ends with ERROR CANCELLED, then the response */
            if
            :: NEW_SESSION_ERROR_RELIABLE -> slot_used = true; slot_seq = dev_seq; slot_session = session
            :: else
            fi;
            d2h!ERR, dev_seq, 1; dev_seq = (dev_seq + 1) % 256;
            session = 2;
            dev_seq = 0;
            slot_used = true; slot_seq = 0; slot_session = 2;   /* the response, reliable */
            d2h!RESP, 0, 2; dev_seq = 1;
            rx_top = s;
            rx_win = (ANCHOR_ALL -> -1 : 1)
        :: t == REQ ->
            window(s, dup);
            d2h!ACK, s, 0;   /* reliable: ACKed every time */
            if
            :: !dup -> executed[c]++; exec_session[c] = session
            :: else
            fi
        :: t == ACK ->
            if
            :: slot_used && slot_seq == s ->
                if
                :: slot_session == 2 && !host_new -> resp_freed_early = true
                :: else
                fi;
                slot_used = false
            :: else
            fi
        :: else
        fi }
    od
}

proctype Host() {
    byte t, s, c;
    byte seq = 0;
    byte req_seq;
    byte copies = 0;
    /* the old session's call 1: a reliable request, retransmitted until ACKed or the session ends */
    h2d!REQ, seq, 1; req_seq = seq; seq++;
    do
    :: !old_acked && !host_new && copies < 3 -> h2d!REQ, req_seq, 1; copies++   /* a retransmission */
    :: d2h?t, s, c ->
        if
        :: t == ACK && s == req_seq && !host_new -> old_acked = true
        :: t == ACK -> skip
        :: t == ERR && NEW_SESSION_ERROR_RELIABLE -> h2d!ACK, s, 0   /* v1.1: ACKed in the old numbering */
        :: t == ERR && !NEW_SESSION_ERROR_RELIABLE -> skip
        :: t == RESP -> host_new = true; h2d!ACK, s, 0
        fi
    :: seq == 1 -> h2d!HANDSHAKE, seq, 2; seq++               /* a new session (call 2) */
    :: host_new -> break
    od;
    do
    :: d2h?t, s, c -> skip
    :: empty(d2h) -> break
    od
}

init {
    atomic {
        session = 1;
        /* the old numbering may stand anywhere, also just before its wrap to 0 */
        if
        :: dev_seq = 3
        :: dev_seq = 254
        :: dev_seq = 255
        fi;
        rx_top = 255; rx_win = -1;   /* the first handshake anchored the device before call 1 */
        run Device(); run Host(); run Monitor(); run Monitor2()
    }
}

/* no old call executed twice or in the new session; no packet of the new session freed by an old ACK */
proctype Monitor() {
end: atomic { (executed[1] > 1 || (executed[1] > 0 && exec_session[1] == 2)) -> assert(false) }
}
proctype Monitor2() {
end: atomic { resp_freed_early -> assert(false) }
}
#endif

#ifdef HANDSHAKE_ACKS
/* ---------------- HANDSHAKE_ACKS: what a host may send while its handshake awaits its answer ---------------- */

chan h2d = [16] of { mtype, byte, byte, byte };   /* type, sequence, call id (ACK: the acknowledged number), ACK: whose answer */
chan d2h = [16] of { mtype, byte, byte };         /* type, sequence, call id */

byte started[3];             /* sessions started by handshake call c (attempt c) */
bool freed_wrongly;          /* an ACK of one attempt's response freed another's */
bool slot_used; byte slot_call;   /* the HandshakeResponse (packet 0) awaiting its ACK, and whose it is */
bool host_done;              /* the host has its session */

ltl handshake_settles { <> host_done }

proctype Device() {
    byte t, s, a, g;
    byte hs_call, hs_seq;
    bool live, newer, old_sent;
end:
    do
    :: !live && !old_sent -> d2h!DATA, 50, 7; old_sent = true   /* the old session's last reliable event */
    :: h2d?t, s, a, g ->
        atomic {
        if
        :: t == HANDSHAKE && live && a == hs_call && s == hs_seq && !newer ->
            d2h!ACK, 0, 0                       /* §9's retransmission: re-ACKed, dropped */
        :: t == HANDSHAKE && !(live && a == hs_call && s == hs_seq && !newer) ->
            started[a]++; live = true; hs_call = a; hs_seq = s; newer = false;
            d2h!ACK, 0, 0;                      /* in the old numbering */
            slot_used = true; slot_call = a;    /* the response: packet 0 of the new numbering, reliable */
            d2h!RESP, 0, a
        :: else ->
            if
            :: live && s > hs_seq -> newer = true
            :: else
            fi;
            if
            :: t == ACK && slot_used && a == 0 ->
                if
                :: g != slot_call -> freed_wrongly = true
                :: else
                fi;
                slot_used = false
            :: else
            fi
        fi }
    od
}

proctype Host() {
    byte t, s, c;
    byte seq = 0;
    byte attempt = 1;
    byte hs_seq;
    byte copies = 0;
    bool beat;
    h2d!HANDSHAKE, seq, 1, 0; hs_seq = seq; seq++;
    do
    :: copies < 2 -> h2d!HANDSHAKE, hs_seq, attempt, 0; copies++      /* its retransmission timeout */
    :: HOST_HEARTBEAT && !beat -> h2d!HBEAT, seq, 0, 0; seq++; beat = true   /* an old session's heartbeat */
    :: attempt == 1 ->                                                  /* the attempt's deadline */
        h2d!CANCEL, seq, 1, 0; seq++;
        attempt = 2; copies = 0;
        h2d!HANDSHAKE, seq, 2, 0; hs_seq = seq; seq++
    :: d2h?t, s, c ->
        if
        :: t == RESP && c == attempt -> h2d!ACK, seq, s, c; seq++; host_done = true; break   /* its answer */
        :: (t == RESP && c != attempt) || t == DATA ->                      /* another reliable packet */
            if
            :: HOST_ACKS_ALL -> h2d!ACK, seq, s, c; seq++
            :: else                                                         /* v1.2: not acknowledged */
            fi
        :: else                                                             /* the device's ACKs */
        fi
    od
}

init {
    atomic { run Device(); run Host(); run Monitor() }
}

/* no handshake starts two sessions; no ACK of one attempt's response frees another's */
proctype Monitor() {
end: atomic { ((WATCH_SESSIONS && (started[1] > 1 || started[2] > 1)) || (WATCH_FREED && freed_wrongly)) -> assert(false) }
}
#endif
