/*
 * camctl-sim's rule breakers and host checker: a filter on the pty's bytes.
 *
 * --break RULE makes camctl-sim break exactly one rule of docs/PROTOCOL.md,
 * so the conformance suite (docs/CONFORMANCE.md) can show that each of its
 * cases can fail. --strict checks the host's bytes against the spec and
 * reports violations. Both decode the frames going each way, change or check
 * them, and re-encode them; the firmware core is untouched, and with neither
 * option the filter is not in the path at all.
 */
#ifndef CCSIM_BREAKS_H
#define CCSIM_BREAKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One rule breaker: its name, what it breaks and the cases that catch it. */
typedef struct ccsim_break {
    const char *name;
    const char *rule;
    const char *cases;  /* space-separated case names */
} ccsim_break_t;

/* The table of breakers (ends with a NULL name). */
extern const ccsim_break_t ccsim_breaks[];

/* The line speed (baud) breaker `name`'s cases need to see it (camctl-sim --baud); 0 for any line. */
unsigned ccsim_break_baud(const char *name);

/* Selects breaker `name`; false when there is no such breaker. */
bool ccsim_breaks_select(const char *name);

/* Turns the host checker on. */
void ccsim_strict_enable(void);

/* True when the filter must see the bytes (a breaker or the checker is on). */
bool ccsim_filter_active(void);

/* Host -> device: filters `len` bytes read from the pty into out (cap bytes);
 * returns the bytes to give the device. session: the device has a session. */
size_t ccsim_filter_in(const uint8_t *in, size_t len, uint8_t *out, size_t cap, uint64_t now_us,
                       bool session);

/* True while the filter holds back the start of a host frame (its delimiter not yet read, not over the largest
 * frame), which the device would be receiving byte by byte: the caller tells the device
 * (cc_device_note_frame_arriving). False under the breaker whole-frame-liveness. */
bool ccsim_filter_frame_arriving(void);

/* Device -> host: the same for the device's bytes. */
size_t ccsim_filter_out(const uint8_t *in, size_t len, uint8_t *out, size_t cap, uint64_t now_us);

/* --strict: where the device's next bytes go on the line to the host, told before each ccsim_filter_out
 * whose output goes on the line (at once; with --faults the injector may delay, drop or add bytes in
 * between, so the times are approximate there). line_free_us: the device time at which the line will have sent
 * what it already holds (now or earlier when it is idle); byte_ns: one byte's time (0: unpaced). The
 * checker counts a device packet's 200 ms to be acknowledged from when it has reached the host, and a new
 * session's silence from when the host had the HandshakeResponse: on a slow line a frame takes its time
 * to arrive (a 330-byte HandshakeResponse, 344 ms at 9600 baud). */
void ccsim_filter_out_line(uint64_t line_free_us, uint64_t byte_ns);

/* The host closed the port at device time now_us: the checker forgets its requests (the next host's may
 * equal them byte for byte and are no copies of them). A device packet the host had by then and has not
 * acknowledged can no longer be: it is judged at the next tick once the line has delivered every byte the
 * host wrote before it closed (its last ACK among them), without waiting out the 200 ms. One still on its
 * way to the host never reached it and is owed nothing. */
void ccsim_filter_host_closed(uint64_t now_us);

/* A host opened the port again: what the device sends reaches it. Until then, after a close, the device's
 * packets go to nobody and the checker owes them nothing. */
void ccsim_filter_host_opened(void);

/* The simulator unplugged the port (--faults unplug=): both lines are emptied, the host's last ACK with
 * them, and no host could answer; what the device sent is owed nothing, and nothing is until a host opens
 * the port again. */
void ccsim_filter_unplugged(void);

/* --strict: how many bytes the host has written to the host -> device line so far, and how many of them the
 * line has delivered, told before each ccsim_filter_tick. A device packet the host has not acknowledged
 * within 200 ms is judged once the line has delivered every byte the host had written when those 200 ms
 * ran out: the host's ACK may be queued behind its own long frame (at 9600 baud a 900-byte RunScenario
 * request keeps the line 0.94 s), and it is judged by when the host wrote it, not when the line delivered
 * it. Bytes written later do not put the verdict off. */
void ccsim_filter_in_line(uint64_t written, uint64_t delivered);

/* Once per tick: bytes to give the device on the filter's own account (a
 * breaker that fakes host packets), and the checker's timers. */
size_t ccsim_filter_tick(uint64_t now_us, bool session, uint8_t *out, size_t cap);

/* Device time that passed while the simulator caught up after a stall of its own (a loaded machine did
 * not run it): it passes in a moment of real time, so the host could not answer in it, and the checker's
 * clocks (the 200 ms to acknowledge a reliable packet, the host's silence in a session) do not count it.
 * Without this, a handshake response sent at the start of a catch-up was "never acknowledged" once the
 * catch-up had run 200 ms of device time in a few milliseconds. */
void ccsim_filter_stalled(uint64_t device_us);

/* Prints the checker's summary on stderr (violations with counts and the
 * first offending bytes, and how many device packets still awaited the host's ACK, not judged: their
 * host still had time). Returns the number of violations. */
unsigned ccsim_strict_report(void);

#endif /* CCSIM_BREAKS_H */
