/*
 * camctl-sim's link faults (--faults SPEC, scenario `fault` lines).
 *
 * The same fault model as the host's LinkFaults (Sources/CameraControlWire/
 * Faults/LinkFaults.swift, docs/RELIABILITY.md) with the same SPEC syntax:
 * comma-separated name=value items, e.g.
 *
 *   corrupt=1%,drop=0.1%,drop-frame=1%,dup=1%,reorder=1%,garbage=0.5%:64,
 *   stall=0.1%:200ms,baud=1.05,reset=30s,unplug=20s:1s,seed=7
 *
 * Two injectors, one per direction (host -> device, device -> host), sit
 * between the pty and the firmware; each splits its bytes into frames at
 * 0x00 and damages them as the spec says. reset= and unplug= are timers
 * the pty loop acts on (a new boot of the firmware core; the pty closed, the
 * --link symlink removed, a new pty after U). Deterministic given the seed:
 * every random choice comes from a seeded SplitMix64 per direction.
 *
 * Sim-only: not part of the firmware core, no heap, fixed-size buffers.
 */
#ifndef CCSIM_FAULTS_H
#define CCSIM_FAULTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ccsim_device.h"

/* The fault model (LinkFaults). Rates are probabilities 0 .. 1. */
typedef struct ccsim_fault_spec {
    double corrupt;           /* corrupt=R: each byte XOR-ed with a random non-zero value */
    double drop;              /* drop=R: each byte lost */
    double drop_frame;        /* drop-frame=R: each frame lost */
    double dup;               /* dup=R: each frame sent twice */
    double reorder;           /* reorder=R: each frame held back behind the next one */
    double garbage;           /* garbage=R[:N]: a burst of 1..N random bytes before a frame */
    uint32_t garbage_max;     /* N (64) */
    double stall;             /* stall=R[:D]: the line stops for D at a frame */
    uint64_t stall_us;        /* D (100 ms) */
    double baud;              /* baud=X: the receiver's UART at X times the sender's rate (1) */
    uint64_t reset_every_us;  /* reset=D: the firmware reboots every D (0: never) */
    uint64_t unplug_every_us; /* unplug=D[:U]: every D the pty vanishes for U (0: never) */
    uint64_t unplug_for_us;   /* U (1 s) */
    uint64_t seed;            /* seed=N (1) */
    bool has_seed;            /* seed= given */
} ccsim_fault_spec_t;

/* The spec with no faults. */
void ccsim_fault_spec_init(ccsim_fault_spec_t *spec);

/* Parses `text` (NUL-terminated) into *spec, on top of what it holds.
 * Returns true, or false with a message ("unknown item 'x'", "'corrupt=2': bad
 * value") in msg. */
bool ccsim_fault_spec_parse(const char *text, ccsim_fault_spec_t *spec, char *msg, size_t msg_cap);

/* The --list-faults text. */
extern const char ccsim_faults_help[];

/* Direction of an injector. */
enum { CCSIM_TO_DEVICE = 0, CCSIM_TO_HOST = 1 };

/* What the pty loop must do now (ccsim_faults_tick). */
enum { CCSIM_FAULT_RESET = 1, CCSIM_FAULT_UNPLUG = 2, CCSIM_FAULT_REPLUG = 4 };

/* Turns the faults on with `spec` (seed: its seed= or the --seed). */
void ccsim_faults_enable(const ccsim_fault_spec_t *spec, uint64_t seed);

/* --verbose: log each injected fault on stderr (also for scenario `fault` lines). */
void ccsim_faults_set_verbose(bool verbose);

/* True when --faults or a scenario fault line is in effect (the bytes go
 * through the injectors). */
bool ccsim_faults_active(void);

/* How many bytes `dir` can take now, all of them surely (its queue has room). */
size_t ccsim_faults_room(int dir);

/* Bytes that entered the link in direction `dir` at now_us (at most room). */
void ccsim_faults_feed(int dir, const uint8_t *bytes, size_t len, uint64_t now_us);

/* Bytes that leave the link in direction `dir` at now_us, up to cap. */
size_t ccsim_faults_take(int dir, uint8_t *out, size_t cap, uint64_t now_us);

/* Microseconds from now_us until an injector may release bytes it holds
 * (a stall's end, a held frame's release) or a timer fires; UINT64_MAX: none. */
uint64_t ccsim_faults_due_us(uint64_t now_us);

/* Timers (reset=, unplug=, scenario cues): CCSIM_FAULT_* bits to act on. */
unsigned ccsim_faults_tick(uint64_t now_us);

/* Forgets the bytes in flight both ways (a cable pulled). */
void ccsim_faults_flush(void);

/* A new boot of the firmware core (the simulated world keeps going): the
 * firmware forgets its session, and bytes in its rings are lost. */
void ccsim_faults_reboot(ccsim_device_t *sim);

/* Scenario `fault` lines: removes them from text (each becomes a comment, so
 * the other lines keep their numbers) and keeps them as cues that fire when
 * the scenario reaches the step after them (seed: --seed, for the faults
 * they turn on). Returns true, or false with
 * *line, *column and msg (the line's error). */
bool ccsim_faults_extract_scenario(char *text, size_t len, uint64_t seed, uint32_t *line, uint32_t *column,
                                   char *msg, size_t msg_cap);

/* Fires the cues the player has reached (step: index of the current step;
 * finished: the scenario has ended). Call each pass while a scenario plays. */
void ccsim_faults_scenario_at(uint32_t step, bool finished, uint64_t now_us);

/* Prints the counts of every injected fault on stderr. */
void ccsim_faults_report(void);

#endif /* CCSIM_FAULTS_H */
