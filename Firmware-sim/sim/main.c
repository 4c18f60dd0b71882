/*
 * camctl-sim: the CameraControl firmware and simulator behind a pseudo-terminal.
 *
 * Prints the slave path of a new pty on the first line of stdout, then runs
 * the real firmware core (ccsim_device_t) in real time on CLOCK_MONOTONIC.
 * ppoll() on the pty master wakes the loop when host bytes arrive, at the
 * firmware's next step (a sample boundary; with --baud, its UART's FIFO
 * draining while it has more to send) or when a frame delimiter completes on
 * the modelled serial line (--baud); bytes move both ways without blocking.
 * Device time is then moved to the clock in steps at exactly the moments the
 * firmware acts, however late the wake-up came, and the line runs on device
 * time: a chunk the firmware writes starts on the line at the device time it
 * was written (or when the line is free), so bytes go out back to back.
 * --spin-us N ends each sleep N us early and spins to the deadline. A host
 * opens the slave like a serial port. The host may close and reopen the
 * slave at any time (the firmware then sees a silent link).
 * See docs/SIMULATOR.md, "camctl-sim".
 *
 * The only file of the simulator that calls the OS, with replay.c (which runs
 * camctl to read a --replay FILE).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "breaks.h"
#include "faults.h"
#include "replay.h"
#include "ccsim_device.h"

#define MAX_SCENARIO_BYTES 65536u
/* After a scenario ends, keep running this long before --exit-after-scenario
 * exits, so the last events are delivered and acknowledged. */
#define EXIT_GRACE_US 300000u
/* The largest step of device time per pass of the main loop (see "Device time follows"). */
#define MAX_STEP_US 5000u
/* --baud: the fastest UART the speed model takes (bits per second). */
#define MAX_BAUD 100000000u
/* --spin-us: at most a whole sample period (1 kHz), which spins all the time. */
#define MAX_SPIN_US 1000u

static const char usage[] =
    "usage: camctl-sim [options]\n"
    "\n"
    "Runs the CameraControl firmware with a simulated finger behind a pseudo-terminal.\n"
    "The first line of stdout is the pty's slave path; open it like a serial port.\n"
    "\n"
    "options:\n"
    "  --link PATH            also place a symlink to the slave at PATH (a stale symlink\n"
    "                         is replaced; removed on exit)\n"
    "  --scenario FILE        play a scenario (docs/SIMULATOR.md); it starts when the\n"
    "                         host first completes a handshake\n"
    "  --replay FILE          replay a recording (camctl record, .pcapng) or a CSV trace\n"
    "                         (as camctl test --replay reads it) into the firmware in place of\n"
    "                         the finger model, sample for sample; it starts when the host\n"
    "                         first completes a handshake. The file is read by camctl\n"
    "                         (camctl export FILE --samples): the one next to camctl-sim,\n"
    "                         or --camctl PATH, or camctl on PATH\n"
    "  --camctl PATH          the camctl that reads a --replay FILE\n"
    "  --start-now            start the scenario (or the replay) immediately instead\n"
    "  --control PATH         make a FIFO at PATH (removed on exit): each scenario written\n"
    "                         to it, ended by an empty line, plays at once, whoever holds\n"
    "                         the pty (a test bench pressing the control of a device that\n"
    "                         camctl serve owns); errors on stderr\n"
    "  --seed N               seed of the finger and sensor model (default 1)\n"
    "  --settings FILE        keep the device's settings store (ConfigService/SetSettings) in\n"
    "                         FILE, read at start and rewritten at every change, so settings\n"
    "                         survive a restart; a missing FILE is an empty store. Default:\n"
    "                         the store lives in this process only (every run starts empty)\n"
    "  --baud N               pace both directions like a UART of N bits per second, 8N1\n"
    "                         (10 bits a byte, a 16-byte FIFO); default: unpaced\n"
    "  --spin-us N            wake N us (0..1000) before each deadline and spin on the clock\n"
    "                         until it, so wake-ups come on time (costs about N/1000 of a\n"
    "                         CPU core, more with --baud); default 0: sleep to the deadline\n"
    "  --exit-after-scenario  exit 0 shortly after the scenario (or the replay) has finished\n"
    "  --exit-with-parent     exit when the process that started us goes away (for hosts\n"
    "                         that spawn the simulator: no orphan outlives them)\n"
    "  --quiet                no progress messages on stderr\n"
    "  --print-clock-origin   a second line on stdout: \"clock-origin-us N\", the CLOCK_MONOTONIC\n"
    "                         time (us) of device time 0, so a host on this machine can\n"
    "                         place device timestamps exactly (benchmarks)\n"
    "  --break RULE           break exactly one rule of docs/PROTOCOL.md, to show that the\n"
    "                         conformance suite catches it (docs/CONFORMANCE.md)\n"
    "  --list-breaks          list the rules --break can break, with the cases that catch them\n"
    "  --strict               check the host against the spec; report violations (counts and\n"
    "                         first offending bytes) on stderr as they happen and at exit\n"
    "  --faults SPEC          inject link faults both ways, the same SPEC as camctl relay --faults:\n"
    "                         corrupt=, drop=, drop-frame=, dup=, reorder=, garbage=, stall=,\n"
    "                         baud=, and reset=D (the firmware reboots), unplug=D:U (the pty\n"
    "                         vanishes and comes back); counts on stderr at exit and on SIGUSR1\n"
    "  --list-faults          the faults, and the scenario's `fault` lines, explained\n"
    "  --verbose              with faults: log each injected fault on stderr\n"
    "  --help                 this text\n"
    "\n"
    "exit status: 0 on SIGINT/SIGTERM or after the scenario, 1 on a system error,\n"
    "2 on bad arguments, a scenario that does not parse or a --replay FILE that cannot be read\n";

static ccsim_device_t g_sim;
static volatile sig_atomic_t g_stop;
static volatile sig_atomic_t g_report; /* SIGUSR1: print the fault counts */
static bool g_quiet;

static void on_signal(int sig)
{
    (void)sig;
    g_stop = 1;
}

static void on_report_signal(int sig)
{
    (void)sig;
    g_report = 1;
}

static void note(const char *msg)
{
    if (!g_quiet) {
        fprintf(stderr, "camctl-sim: %s\n", msg);
    }
}

static uint64_t monotonic_us(void)
{
    struct timespec ts;
    (void)clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static int read_file(const char *path, char *buf, size_t cap, size_t *len)
{
    FILE *f = fopen(path, "rb");
    size_t n;
    if (f == 0) {
        fprintf(stderr, "camctl-sim: cannot open %s: %s\n", path, strerror(errno));
        return 1;
    }
    n = fread(buf, 1, cap, f);
    if (ferror(f)) {
        fprintf(stderr, "camctl-sim: cannot read %s\n", path);
        fclose(f);
        return 1;
    }
    if (n == cap && fgetc(f) != EOF) {
        fprintf(stderr, "camctl-sim: %s is larger than %u bytes\n", path,
                (unsigned)(cap - 1u));
        fclose(f);
        return 1;
    }
    fclose(f);
    *len = n;
    return 0;
}

/* --settings FILE: the settings store's image on disk. */
static const char *g_settings_path;

/* Reads the store's image; a missing file is an empty store (*len 0). */
static int read_settings(const char *path, uint8_t *image, size_t cap, size_t *len)
{
    FILE *f = fopen(path, "rb");
    size_t n;
    *len = 0;
    if (f == 0) {
        if (errno == ENOENT) {
            return 0;
        }
        fprintf(stderr, "camctl-sim: cannot open %s: %s\n", path, strerror(errno));
        return 1;
    }
    n = fread(image, 1, cap, f);
    if (ferror(f) || (n == cap && fgetc(f) != EOF)) {
        fprintf(stderr, "camctl-sim: %s is not a settings store (at most %u bytes)\n", path, (unsigned)cap);
        fclose(f);
        return 1;
    }
    fclose(f);
    *len = n;
    return 0;
}

/* The store hook: the whole image to FILE.tmp, then renamed over FILE (a
 * crash of the simulator leaves the old file or the new one; the firmware's
 * two slots guard against a torn copy anyway). No fsync: the file has to
 * outlive this process, not the machine, and on a busy disk a sync held the
 * simulator's loop for longer than the link's dead timeout (4 heartbeat
 * intervals, 200 ms), so a host saw its SetSettings fail as "link dead". */
static bool write_settings(void *ctx, const uint8_t *image, size_t len)
{
    char tmp[4096];
    FILE *f;
    bool ok;
    (void)ctx;
    if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp", g_settings_path) >= sizeof tmp) {
        return false;
    }
    f = fopen(tmp, "wb");
    if (f == 0) {
        fprintf(stderr, "camctl-sim: cannot write %s: %s\n", tmp, strerror(errno));
        return false;
    }
    ok = fwrite(image, 1, len, f) == len;
    ok = fclose(f) == 0 && ok;
    if (!ok || rename(tmp, g_settings_path) != 0) {
        fprintf(stderr, "camctl-sim: cannot write %s: %s\n", g_settings_path, strerror(errno));
        (void)unlink(tmp);
        return false;
    }
    return true;
}

/* Opens the pty master and configures the slave raw. */
static int open_pty(char *slave, size_t cap)
{
    struct termios t;
    int s;
    int m = posix_openpt(O_RDWR | O_NOCTTY);
    if (m < 0 || grantpt(m) != 0 || unlockpt(m) != 0 || ptsname_r(m, slave, cap) != 0) {
        fprintf(stderr, "camctl-sim: cannot create a pseudo-terminal: %s\n", strerror(errno));
        if (m >= 0) {
            close(m);
        }
        return -1;
    }
    /* Raw mode is a property of the terminal and outlives this open/close. */
    s = open(slave, O_RDWR | O_NOCTTY);
    if (s < 0 || tcgetattr(s, &t) != 0) {
        fprintf(stderr, "camctl-sim: cannot configure %s: %s\n", slave, strerror(errno));
        if (s >= 0) {
            close(s);
        }
        close(m);
        return -1;
    }
    cfmakeraw(&t);
    t.c_cc[VMIN] = 1;
    t.c_cc[VTIME] = 0;
    (void)tcsetattr(s, TCSANOW, &t);
    close(s);
    if (fcntl(m, F_SETFL, fcntl(m, F_GETFL) | O_NONBLOCK) != 0) {
        fprintf(stderr, "camctl-sim: cannot make the pty non-blocking: %s\n", strerror(errno));
        close(m);
        return -1;
    }
    return m;
}

static int place_link(const char *link_path, const char *target)
{
    struct stat st;
    if (lstat(link_path, &st) == 0) {
        if (!S_ISLNK(st.st_mode)) {
            fprintf(stderr, "camctl-sim: %s exists and is not a symlink; not replacing it\n",
                    link_path);
            return 1;
        }
        (void)unlink(link_path);
    }
    if (symlink(target, link_path) != 0) {
        fprintf(stderr, "camctl-sim: cannot create %s: %s\n", link_path, strerror(errno));
        return 1;
    }
    return 0;
}

static void remove_link(const char *link_path, const char *target)
{
    char buf[256];
    ssize_t n = readlink(link_path, buf, sizeof(buf) - 1u);
    if (n > 0) {
        buf[n] = '\0';
        if (strcmp(buf, target) == 0) {
            (void)unlink(link_path);
        }
    }
}

static bool parse_seed(const char *s, uint64_t *out)
{
    char *end = 0;
    unsigned long long v;
    if (s == 0 || *s == '\0' || *s == '-') {
        return false;
    }
    errno = 0;
    v = strtoull(s, &end, 0);
    if (errno != 0 || end == 0 || *end != '\0') {
        return false;
    }
    *out = (uint64_t)v;
    return true;
}

/* ------------------------------------------------------------------ the UART and the line (--baud)
 *
 * Device time d (us) is CLOCK_MONOTONIC (t0 + d) us: dev_ns(d) below. */

static uint64_t g_t0_us; /* CLOCK_MONOTONIC (us) of device time 0 */

static uint64_t monotonic_ns(void)
{
    struct timespec ts;
    (void)clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* CLOCK_MONOTONIC (ns) of device time d (us). */
static uint64_t dev_ns(uint64_t d)
{
    return (g_t0_us + d) * 1000u;
}

/* The first device time (us) at or after CLOCK_MONOTONIC ns (0 before device time 0). */
static uint64_t dev_us_at_or_after(uint64_t ns)
{
    uint64_t us = (ns + 999u) / 1000u;
    return us > g_t0_us ? us - g_t0_us : 0u;
}

/* UART speed model (ccsim_device_set_baud): microseconds from device time now
 * until the credit of one direction is back to the FIFO's depth (the
 * modelled UART's FIFO is empty again), or 0 when it is already. The
 * simulator's credit is updated lazily, so project it to the device time now. */
static uint64_t uart_busy_us(const ccsim_device_t *sim, uint64_t credit_milli)
{
    const uint64_t cap = 16000u; /* ccsim_device.c's 16-byte FIFO, in milli-bytes */
    uint64_t gained = (sim->now_us - sim->credit_us) * (uint64_t)sim->baud / 10000u;
    uint64_t credit = credit_milli + gained;
    if (sim->baud == 0u || credit >= cap) {
        return 0;
    }
    return ((cap - credit) * 10000u + sim->baud - 1u) / sim->baud;
}

/* The firmware's last flush left less than a byte of transmit credit: its
 * UART's FIFO is full and it may have more to send once the FIFO has drained
 * (or it wrote exactly what it had: then one step finds nothing to send). */
static bool tx_starved(const ccsim_device_t *sim)
{
    uint64_t credit;
    if (sim->baud == 0u) {
        return false;
    }
    credit = sim->tx_credit_milli + (sim->now_us - sim->credit_us) * (uint64_t)sim->baud / 10000u;
    return credit < 1000u;
}

/* One direction of the serial line between the simulated UART and the pty.
 * Bytes are handed to the line in chunks, each at a time `at` on
 * CLOCK_MONOTONIC: for the device's bytes, the device time of the step in
 * which the firmware wrote them to its UART; for the host's, when camctl-sim
 * read them from the pty (to the microsecond). A chunk starts at the later of
 * `at` and the moment the line is free (its last byte has completed), and its
 * bytes go out back to back: byte k (from 0) of a chunk completes at
 * start + (k + 1) * byte_ns. A byte stays here until it has completed; then
 * it is passed on (to the pty, or to the firmware). byte_ns 0: unpaced, every
 * byte completes when it is handed over. */
#define LINE_BYTES 8192u
typedef struct line {
    uint64_t byte_ns;              /* a byte's time on the wire: 10 bits (8N1) */
    uint64_t free_ns;              /* the last byte handed over completes then */
    size_t head;                   /* the oldest byte not passed on */
    size_t len;                    /* bytes not passed on */
    uint8_t buf[LINE_BYTES];
    uint64_t done_ns[LINE_BYTES];  /* when each completes */
    uint64_t pushed_total;         /* bytes ever handed to the line */
    uint64_t popped_total;         /* bytes ever passed on (or dropped with the line) */
} line_t;

static line_t g_tx_line; /* device -> host */
static line_t g_rx_line; /* host -> device */

static size_t line_index(const line_t *l, size_t k)
{
    return (l->head + k) % LINE_BYTES;
}

static size_t line_room(const line_t *l)
{
    return LINE_BYTES - l->len;
}

/* Forgets what is on the line (the pty went away). */
static void line_clear(line_t *l)
{
    l->popped_total = l->pushed_total; /* what was on it never arrives */
    l->head = 0;
    l->len = 0;
    l->free_ns = 0;
}

/* n bytes (at most line_room) handed to the line at at_ns. */
static void line_push(line_t *l, const uint8_t *bytes, size_t n, uint64_t at_ns)
{
    uint64_t t = l->free_ns > at_ns ? l->free_ns : at_ns;
    size_t k;
    for (k = 0; k < n; k++) {
        size_t i = line_index(l, l->len);
        t += l->byte_ns;
        l->buf[i] = bytes[k];
        l->done_ns[i] = t;
        l->len++;
    }
    l->pushed_total += n;
    l->free_ns = t;
}

/* How many of the bytes not passed on have completed by now_ns (they
 * complete in order: a binary search). */
static size_t line_completed(const line_t *l, uint64_t now_ns)
{
    size_t lo = 0, hi = l->len;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2u;
        if (l->done_ns[line_index(l, mid)] <= now_ns) {
            lo = mid + 1u;
        } else {
            hi = mid;
        }
    }
    return lo;
}

/* The most completed bytes the host waits for before it gets them without a
 * frame's delimiter, counted from what it has had: a USB-serial bridge passes
 * on 64-byte packets, so a long frame (a HandshakeResponse: 344 ms at 9600
 * baud) reaches a host in pieces, as from real hardware; a short one whole,
 * unless this process woke late with more than 64 bytes completed. */
#define HOST_CHUNK_BYTES 64u

/* The device's bytes camctl-sim passes to the pty at now_ns: the completed
 * ones up to the last completed frame delimiter, so a short frame reaches the
 * host whole, when its delimiter completes; all completed ones when every
 * byte on the line has completed (a tail without a delimiter: garbage, a cut
 * frame) or when chunk (0: never) of them have completed since the last
 * bytes passed on. */
static size_t line_ready(const line_t *l, uint64_t now_ns, size_t chunk)
{
    size_t k = line_completed(l, now_ns);
    if (k == l->len || (chunk != 0u && k >= chunk)) {
        return k;
    }
    while (k > 0u && l->buf[line_index(l, k - 1u)] != 0u) {
        k--;
    }
    return k;
}

/* When the next bytes become ready to be passed on after now_ns: the
 * completion of the next frame delimiter not completed yet (or of the
 * chunk-th byte waiting, with a chunk), else of the last byte; UINT64_MAX when
 * every byte has completed (or none waits). */
static uint64_t line_due_ns(const line_t *l, uint64_t now_ns, size_t chunk)
{
    size_t k;
    for (k = line_completed(l, now_ns); k < l->len; k++) {
        if (l->buf[line_index(l, k)] == 0u || (chunk != 0u && k + 1u == chunk)) {
            return l->done_ns[line_index(l, k)];
        }
    }
    return l->len > 0u && l->done_ns[line_index(l, l->len - 1u)] > now_ns
               ? l->done_ns[line_index(l, l->len - 1u)] : UINT64_MAX;
}

/* The first bytes not passed on, contiguous in the buffer (at most max). */
static size_t line_front(const line_t *l, size_t max, const uint8_t **bytes)
{
    size_t n = LINE_BYTES - l->head;
    n = n < l->len ? n : l->len;
    *bytes = l->buf + l->head;
    return n < max ? n : max;
}

/* The first n bytes have been passed on. */
static void line_pop(line_t *l, size_t n)
{
    l->head = (l->head + n) % LINE_BYTES;
    l->popped_total += n;
    l->len -= n;
    if (l->len == 0u) {
        l->head = 0;
    }
}

/* The host's bytes reach the firmware as they complete; camctl-sim steps the
 * device to the completion of each frame delimiter and at least of every 8th
 * byte (the UART's FIFO holds 16): the CLOCK_MONOTONIC ns of the next such
 * step; UINT64_MAX when no host byte is on the line. */
#define RX_STEP_BYTES 8u
static uint64_t rx_step_ns(const line_t *l)
{
    size_t k, last = l->len < RX_STEP_BYTES ? l->len : RX_STEP_BYTES;
    if (last == 0u) {
        return UINT64_MAX;
    }
    for (k = 0; k + 1u < last && l->buf[line_index(l, k)] != 0u; k++) {
    }
    return l->done_ns[line_index(l, k)];
}

/* --break / --strict: what the frame filter gave out and the firmware's receive ring had no room for yet.
 * Under a breaker the filter holds a frame until its delimiter and then gives it out whole (--strict alone
 * passes bytes on as they come: never more than it was handed), so it may give out more than
 * the bytes it was just handed (which were all the ring had room for): the rest waits here, and no host
 * byte is read while anything does. Dropping it would show up as the device's rx_overruns, an overrun the
 * simulated device never had (only on a starved machine, where the ring is nearly full). */
static uint8_t g_filtered[2u * 4096u + 64u];
static size_t g_filtered_len;

/* Hands what waits in g_filtered to the firmware, as far as its ring has room. */
static void flush_filtered(void)
{
    size_t taken;
    if (g_filtered_len == 0u) {
        return;
    }
    taken = ccsim_device_host_write(&g_sim, g_filtered, g_filtered_len);
    memmove(g_filtered, g_filtered + taken, g_filtered_len - taken);
    g_filtered_len -= taken;
}

/* Room in the firmware's receive ring for more host bytes: none while filtered bytes still wait. */
static size_t device_room(void)
{
    flush_filtered();
    return g_filtered_len > 0u ? 0u : ccsim_device_host_room(&g_sim);
}

/* Bytes for the firmware, through the --break/--strict filter when it is on; the caller hands at most
 * device_room() bytes. */
static void to_device(const uint8_t *in, size_t n, uint64_t now_us)
{
    if (ccsim_filter_active()) {
        /* --break / --strict: the frame filter may rewrite what the host sent (tests only). Called only
         * when nothing waits (device_room() > 0), so the whole buffer is the filter's to fill. */
        g_filtered_len = ccsim_filter_in(in, n, g_filtered, sizeof(g_filtered), now_us,
                                         cc_device_session_active(ccsim_device_core(&g_sim)));
        flush_filtered();
        if (ccsim_filter_frame_arriving()) {
            /* the start of a frame a breaker's filter holds until its delimiter: on a UART the device would
             * be receiving it byte by byte, and a frame still arriving keeps the link alive (§8) */
            cc_device_note_frame_arriving(ccsim_device_core(&g_sim), now_us);
        }
        return;
    }
    {
        size_t taken = ccsim_device_host_write(&g_sim, in, n);
        (void)taken;
        assert(taken == n);
    }
}

/* The firmware's bytes for the host (through the filter when it is on), up to cap. */
static size_t from_device(uint8_t *out, size_t cap)
{
    if (ccsim_filter_active()) {
        uint8_t raw[1024];
        size_t k, len = 0;
        while (len == 0u && (k = ccsim_device_host_read(&g_sim, raw, sizeof(raw))) > 0u) {
            len = ccsim_filter_out(raw, k, out, cap, ccsim_device_now_us(&g_sim));
        }
        return len;
    }
    return ccsim_device_host_read(&g_sim, out, cap);
}

/* --faults: the firmware's bytes through the device -> host injector. */
static size_t from_device_faulty(uint8_t *out, size_t cap)
{
    static uint8_t raw[4096];
    uint64_t now = ccsim_device_now_us(&g_sim);
    size_t k;
    size_t room;
    /* the --break/--strict filter may make more bytes than it reads: then only a whole buffer's room */
    while ((room = ccsim_faults_room(CCSIM_TO_HOST)) >= (ccsim_filter_active() ? sizeof(raw) : 1u) &&
           (k = from_device(raw, room < sizeof(raw) ? room : sizeof(raw))) > 0u) {
        ccsim_faults_feed(CCSIM_TO_HOST, raw, k, now);
    }
    return ccsim_faults_take(CCSIM_TO_HOST, out, cap, now);
}

static bool g_hung_up = true; /* no slave open (yet): what the firmware sends is dropped */

/* The host closed the port: what the device sends from now on has nobody to
 * read it (the device -> host line is emptied), but the host's bytes already
 * read from the pty were sent before the close and are on the line: they
 * finish their time there and reach the firmware, as on a UART (a host's last
 * ACK, written just before it closed, is not lost; the --strict checker would
 * otherwise count its packet unacknowledged). */
static void host_closed(void)
{
    g_hung_up = true;
    line_clear(&g_tx_line);
    if (ccsim_filter_active()) {
        ccsim_filter_host_closed(ccsim_device_now_us(&g_sim));
    }
    note("host closed the port");
}

/* The host's bytes that have completed on the line by device time at_us go
 * to the firmware (through the --faults injector when it is on), as far as
 * it has room; the rest waits on the line (nothing is dropped). */
static void deliver_rx(uint64_t at_us)
{
    size_t k = line_completed(&g_rx_line, dev_ns(at_us));
    while (k > 0u) {
        const uint8_t *in;
        size_t room = ccsim_faults_active() ? ccsim_faults_room(CCSIM_TO_DEVICE) : device_room();
        size_t n = line_front(&g_rx_line, k < room ? k : room, &in);
        if (n == 0u) {
            break;
        }
        if (ccsim_faults_active()) {
            ccsim_faults_feed(CCSIM_TO_DEVICE, in, n, at_us);
        } else {
            to_device(in, n, at_us);
        }
        line_pop(&g_rx_line, n);
        k -= n;
    }
    if (ccsim_faults_active()) {
        /* what the host -> device injector lets through, as the firmware has room */
        uint8_t buf[1024];
        size_t room, n;
        while ((room = device_room()) > 0u &&
               (n = ccsim_faults_take(CCSIM_TO_DEVICE, buf, room < sizeof(buf) ? room : sizeof(buf), at_us)) > 0u) {
            to_device(buf, n, at_us);
        }
    }
}

/* What the firmware has written to its UART goes on the line, handed over at
 * device time at_us (the step in which it wrote them); dropped while no
 * slave is open. Only as much as the line has room for: the rest stays in
 * the device's ring, and when that is full the firmware's UART takes no more
 * (backpressure). */
static void pull_tx(uint64_t at_us)
{
    static uint8_t buf[4096];
    for (;;) {
        size_t room = line_room(&g_tx_line);
        size_t n;
        if (ccsim_filter_active()) {
            /* the --break/--strict filter may make more bytes than it reads: a whole buffer's room */
            room = room >= sizeof(buf) ? sizeof(buf) : 0u;
        }
        room = room < sizeof(buf) ? room : sizeof(buf);
        if (room == 0u) {
            return;
        }
        if (ccsim_filter_active()) {
            uint64_t free_us = dev_us_at_or_after(g_tx_line.free_ns);
            ccsim_filter_out_line(free_us > at_us ? free_us : at_us, g_tx_line.byte_ns);
        }
        n = ccsim_faults_active() ? from_device_faulty(buf, room) : from_device(buf, room);
        if (n == 0u) {
            return;
        }
        if (!g_hung_up) {
            line_push(&g_tx_line, buf, n, dev_ns(at_us));
        }
    }
}

/* The sample period, us. */
static uint64_t sample_period_us(void)
{
    const cc_input_config_t *c = cc_device_config(&g_sim.dev);
    uint64_t rate = (c != 0 && c->sample_rate_hz != 0u) ? c->sample_rate_hz : 1000u;
    return 1000000u / rate;
}

/* The next moment after device time d (us) at which the firmware acts on
 * its own: the next sample boundary; with --baud, the moment its UART's FIFO
 * has drained while it has more to send (a TX-empty interrupt) or, while host
 * bytes wait in its receive ring, the receiving FIFO's credit is full again;
 * with --faults, an injector's or a timer's due time. */
static uint64_t device_due_us(uint64_t d)
{
    uint64_t period = sample_period_us();
    uint64_t due = (d / period + 1u) * period;
    uint64_t c;
    if (tx_starved(&g_sim)) {
        c = d + uart_busy_us(&g_sim, g_sim.tx_credit_milli);
        due = c > d && c < due ? c : due;
    }
    if (g_sim.rx.len > 0u) {
        c = d + uart_busy_us(&g_sim, g_sim.rx_credit_milli);
        due = c > d && c < due ? c : due;
    }
    if (ccsim_faults_active()) {
        c = ccsim_faults_due_us(d);
        if (c != UINT64_MAX) {
            c += d;
            due = c > d && c < due ? c : due;
        }
    }
    return due;
}

/* Moves device time to to_us (not before it is) in steps at the moments the
 * firmware would act (device_due_us) and at the completion of the host's
 * bytes (rx_step_ns), so that the firmware reads each byte and writes each
 * chunk at the device time a real UART would see it, however late this
 * process woke up: at every step the host bytes completed by then go to the
 * firmware, the firmware runs, and what it wrote goes on the line stamped
 * with the step's device time. At least one step (a poll when no time passes). */
static void run_device_to(uint64_t to_us)
{
    for (;;) {
        uint64_t d = ccsim_device_now_us(&g_sim);
        uint64_t at = device_due_us(d);
        uint64_t rx = rx_step_ns(&g_rx_line);
        if (rx != UINT64_MAX) {
            rx = dev_us_at_or_after(rx);
            at = rx > d && rx < at ? rx : at;
        }
        at = at < to_us ? at : to_us;
        deliver_rx(at);
        if (at > d) {
            ccsim_device_advance(&g_sim, at - d);
        } else {
            ccsim_device_poll(&g_sim);
        }
        pull_tx(at);
        if (at >= to_us) {
            return;
        }
    }
}

/* The next wake-up (CLOCK_MONOTONIC ns, whole microseconds): the firmware's
 * next step (device_due_us), the completion of the next frame delimiter on
 * either line (or of the last byte), whichever comes first. */
static uint64_t next_wake_ns(uint64_t now_ns)
{
    uint64_t wake = dev_ns(device_due_us(ccsim_device_now_us(&g_sim)));
    uint64_t due = line_due_ns(&g_tx_line, now_ns, HOST_CHUNK_BYTES);
    uint64_t due_rx = line_due_ns(&g_rx_line, now_ns, 0u);
    due = due_rx < due ? due_rx : due;
    if (due != UINT64_MAX) {
        due = (due + 999u) / 1000u * 1000u; /* device time has whole microseconds */
        wake = due < wake ? due : wake;
    }
    return wake;
}

/* ppoll on the pty until an event or deadline_ns. With --spin-us, the
 * sleep ends spin_ns early and the rest is spent polling the pty and reading
 * the clock in a loop, so the wake-up comes at the deadline, not the tens of
 * microseconds after it that a timer wake-up takes. Returns ppoll's result. */
static int wait_for(struct pollfd *pfd, nfds_t nfds, uint64_t deadline_ns, uint64_t spin_ns)
{
    struct timespec timeout;
    uint64_t now = monotonic_ns();
    uint64_t sleep_ns = deadline_ns > now ? deadline_ns - now : 0u;
    int r;
    if (spin_ns != 0u && sleep_ns > 0u) {
        if (sleep_ns > spin_ns) {
            sleep_ns -= spin_ns;
            timeout.tv_sec = (time_t)(sleep_ns / 1000000000u);
            timeout.tv_nsec = (long)(sleep_ns % 1000000000u);
            r = ppoll(pfd, nfds, &timeout, 0);
            if (r != 0) {
                return r;
            }
        }
        do {
            r = poll(pfd, nfds, 0);
            if (r != 0) {
                return r;
            }
        } while (monotonic_ns() < deadline_ns);
        return 0;
    }
    timeout.tv_sec = (time_t)(sleep_ns / 1000000000u);
    timeout.tv_nsec = (long)(sleep_ns % 1000000000u);
    return ppoll(pfd, nfds, &timeout, 0);
}

/* --control: the FIFO, and what was read from it of a scenario not ended yet. */
static int g_control_fd = -1;
static char g_control[MAX_SCENARIO_BYTES + 1u];
static size_t g_control_len;
static bool g_control_overflow;

/* Reads what the --control FIFO holds and plays each scenario ended by an empty line. */
static void read_control(ccsim_device_t *sim)
{
    for (;;) {
        size_t room = sizeof(g_control) - 1u - g_control_len;
        ssize_t n;
        size_t k;
        if (room == 0u) {   /* no empty line in a whole scenario's worth: drop it */
            g_control_len = 0;
            g_control_overflow = true;
            room = sizeof(g_control) - 1u;
        }
        n = read(g_control_fd, g_control + g_control_len, room);
        if (n <= 0) {
            return;
        }
        g_control_len += (size_t)n;
        for (k = 0; k + 1u < g_control_len; k++) {
            if (g_control[k] == '\n' && g_control[k + 1u] == '\n') {
                ccsim_parse_error_t err;
                size_t used = k + 2u;
                if (g_control_overflow) {
                    fprintf(stderr, "camctl-sim: --control: a scenario over %u bytes was dropped\n",
                            (unsigned)MAX_SCENARIO_BYTES);
                    g_control_overflow = false;
                } else if (ccsim_device_play_scenario(sim, g_control, k + 1u, &err) != 0) {
                    if (err.line != 0u) {
                        fprintf(stderr, "camctl-sim: --control:%u:%u: %s\n", (unsigned)err.line, (unsigned)err.column,
                                err.message);
                    } else {
                        fprintf(stderr, "camctl-sim: --control: %s\n", err.message);
                    }
                } else if (!g_quiet) {
                    fprintf(stderr, "camctl-sim: --control: scenario started\n");
                }
                memmove(g_control, g_control + used, g_control_len - used);
                g_control_len -= used;
                k = (size_t)-1;   /* look again from the start */
            }
        }
    }
}

/* The device's bytes that are ready (line_ready) go to the pty, as far as it
 * takes them; false when the host has closed it. */
static bool write_ready(int master)
{
    size_t ready = line_ready(&g_tx_line, monotonic_ns(), HOST_CHUNK_BYTES);
    while (ready > 0u) {
        const uint8_t *bytes;
        size_t n = line_front(&g_tx_line, ready, &bytes);
        ssize_t w = write(master, bytes, n);
        if (w > 0) {
            line_pop(&g_tx_line, (size_t)w);
            ready -= (size_t)w;
            continue;
        }
        if (w < 0 && errno == EIO) {
            return false;
        }
        break; /* EAGAIN: the pty is full; POLLOUT wakes us */
    }
    return true;
}

int main(int argc, char **argv)
{
    const char *link_path = 0, *scenario_path = 0, *replay_path = 0, *camctl_path = 0, *control_path = 0;
    ccsim_replay_sample_t *replay = 0;   /* --replay: the samples, kept for the process's life */
    size_t replay_count = 0;
    bool replay_pending = false;         /* --replay: waiting for the host to listen */
    bool start_now = false, exit_after = false, strict = false, print_origin = false;
    uint64_t seed = 1, baud = 0;
    static char scenario[MAX_SCENARIO_BYTES + 1u];
    size_t scenario_len = 0;
    pid_t parent = 0; /* --exit-with-parent: the parent to outlive not */
    char slave[128];
    int master, i, status = 0;
    struct sigaction sa;
    uint64_t t0, scenario_done_us = 0;
    uint64_t spin_ns = 0; /* --spin-us */
    bool was_active = false, scenario_seen = false;
    bool answer_acked = false; /* the session's HandshakeResponse was acknowledged (noted once a session) */
    ccsim_fault_spec_t fault_spec;
    bool faults = false, verbose = false;

    ccsim_fault_spec_init(&fault_spec);

    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            fputs(usage, stdout);
            return 0;
        } else if (strcmp(a, "--link") == 0 && i + 1 < argc) {
            link_path = argv[++i];
        } else if (strcmp(a, "--control") == 0 && i + 1 < argc) {
            control_path = argv[++i];
        } else if (strcmp(a, "--scenario") == 0 && i + 1 < argc) {
            scenario_path = argv[++i];
        } else if (strcmp(a, "--replay") == 0 && i + 1 < argc) {
            replay_path = argv[++i];
        } else if (strcmp(a, "--camctl") == 0 && i + 1 < argc) {
            camctl_path = argv[++i];
        } else if (strcmp(a, "--settings") == 0 && i + 1 < argc) {
            g_settings_path = argv[++i];
        } else if (strcmp(a, "--seed") == 0 && i + 1 < argc) {
            if (!parse_seed(argv[++i], &seed)) {
                fprintf(stderr, "camctl-sim: --seed needs a non-negative number\n");
                return 2;
            }
        } else if (strcmp(a, "--baud") == 0 && i + 1 < argc) {
            if (!parse_seed(argv[++i], &baud) || baud == 0u || baud > MAX_BAUD) {
                fprintf(stderr, "camctl-sim: --baud needs a number of bits per second, 1..%u\n",
                        (unsigned)MAX_BAUD);
                return 2;
            }
        } else if (strcmp(a, "--spin-us") == 0 && i + 1 < argc) {
            uint64_t us;
            if (!parse_seed(argv[++i], &us) || us > MAX_SPIN_US) {
                fprintf(stderr, "camctl-sim: --spin-us needs a number of microseconds, 0..%u\n",
                        (unsigned)MAX_SPIN_US);
                return 2;
            }
            spin_ns = us * 1000u;
        } else if (strcmp(a, "--start-now") == 0) {
            start_now = true;
        } else if (strcmp(a, "--exit-after-scenario") == 0) {
            exit_after = true;
        } else if (strcmp(a, "--print-clock-origin") == 0) {
            print_origin = true;
        } else if (strcmp(a, "--quiet") == 0) {
            g_quiet = true;
        } else if (strcmp(a, "--break") == 0 && i + 1 < argc) {
            if (!ccsim_breaks_select(argv[++i])) {
                fprintf(stderr, "camctl-sim: no rule breaker named %s (see --list-breaks)\n", argv[i]);
                return 2;
            }
        } else if (strncmp(a, "--break=", 8) == 0) {
            if (!ccsim_breaks_select(a + 8)) {
                fprintf(stderr, "camctl-sim: no rule breaker named %s (see --list-breaks)\n", a + 8);
                return 2;
            }
        } else if (strcmp(a, "--list-breaks") == 0) {
            int b;
            for (b = 0; ccsim_breaks[b].name != 0; b++) {
                unsigned baud = ccsim_break_baud(ccsim_breaks[b].name);
                printf("%-30s %s\n%-30s caught by: %s", ccsim_breaks[b].name, ccsim_breaks[b].rule, "",
                       ccsim_breaks[b].cases);
                if (baud != 0u) {
                    printf(" (at --baud %u)", baud);
                }
                printf("\n");
            }
            return 0;
        } else if (strcmp(a, "--faults") == 0 && i + 1 < argc) {
            char msg[160];
            if (!ccsim_fault_spec_parse(argv[++i], &fault_spec, msg, sizeof(msg))) {
                fprintf(stderr, "camctl-sim: --faults: %s (see --list-faults)\n", msg);
                return 2;
            }
            faults = true;
        } else if (strcmp(a, "--list-faults") == 0) {
            fputs(ccsim_faults_help, stdout);
            return 0;
        } else if (strcmp(a, "--verbose") == 0) {
            verbose = true;
        } else if (strcmp(a, "--strict") == 0) {
            strict = true;
            ccsim_strict_enable();
        } else if (strcmp(a, "--exit-with-parent") == 0) {
            parent = getppid();
        } else {
            fprintf(stderr, "camctl-sim: unknown or incomplete option %s\n%s", a, usage);
            return 2;
        }
    }
    if ((start_now || exit_after) && scenario_path == 0 && replay_path == 0) {
        fprintf(stderr, "camctl-sim: --start-now and --exit-after-scenario need --scenario or --replay\n");
        return 2;
    }
    if (scenario_path != 0 && replay_path != 0) {
        fprintf(stderr, "camctl-sim: --scenario and --replay exclude each other\n");
        return 2;
    }
    if (replay_path != 0) {
        char msg[1280];
        if (!ccsim_replay_load(replay_path, camctl_path, &replay, &replay_count, msg, sizeof(msg))) {
            fprintf(stderr, "camctl-sim: --replay %s: %s\n", replay_path, msg);
            return 2;
        }
        replay_pending = true;
    }

    if (g_settings_path != 0) {
        uint8_t image[CCSIM_STORE_BYTES];
        size_t image_len = 0;
        if (read_settings(g_settings_path, image, sizeof image, &image_len) != 0) {
            return 2;
        }
        ccsim_device_init_with_store(&g_sim, seed, image, image_len);
        ccsim_device_set_store_hook(&g_sim, write_settings, 0);
    } else {
        ccsim_device_init(&g_sim, seed);
    }
    if (baud != 0u) {
        ccsim_device_set_baud(&g_sim, (uint32_t)baud);
        g_tx_line.byte_ns = g_rx_line.byte_ns = 10000000000u / baud;
    }
    if (scenario_path != 0) {
        ccsim_parse_error_t err;
        int rc;
        if (read_file(scenario_path, scenario, MAX_SCENARIO_BYTES + 1u, &scenario_len) != 0) {
            return 2;
        }
        {
            /* `fault` lines are camctl-sim's (faults.c): taken out before the firmware's parser */
            char msg[160];
            uint32_t line = 0, column = 0;
            if (!ccsim_faults_extract_scenario(scenario, scenario_len, seed, &line, &column, msg, sizeof(msg))) {
                fprintf(stderr, "camctl-sim: %s:%u:%u: %s\n", scenario_path, (unsigned)line, (unsigned)column, msg);
                return 2;
            }
        }
        rc = start_now ? ccsim_device_play_scenario(&g_sim, scenario, scenario_len, &err)
                       : ccsim_device_play_scenario_on_handshake(&g_sim, scenario, scenario_len,
                                                                 &err);
        if (rc != 0) {
            if (err.reason != 0) {   /* FILE:LINE:COLUMN: reason, as compilers print it */
                fprintf(stderr, "camctl-sim: %s:%u:%u: %s\n", scenario_path, (unsigned)err.line,
                        (unsigned)err.column, err.reason);
            } else {
                fprintf(stderr, "camctl-sim: %s: %s\n", scenario_path, err.message);
            }
            return 2;
        }
    }

    ccsim_faults_set_verbose(verbose);
    if (faults) {
        ccsim_faults_enable(&fault_spec, seed);
    }
    master = open_pty(slave, sizeof(slave));
    if (master < 0) {
        return 1;
    }
    if (link_path != 0 && place_link(link_path, slave) != 0) {
        close(master);
        return 1;
    }
    if (control_path != 0) {
        struct stat st;
        if (lstat(control_path, &st) == 0 && S_ISFIFO(st.st_mode)) {
            (void)unlink(control_path);   /* left by a simulator that was killed */
        }
        /* Opened read-write: the FIFO always has a writer, so a writer closing is no end of file. */
        if (mkfifo(control_path, 0600) != 0 || (g_control_fd = open(control_path, O_RDWR | O_NONBLOCK | O_CLOEXEC)) < 0) {
            fprintf(stderr, "camctl-sim: cannot make the FIFO %s: %s\n", control_path, strerror(errno));
            if (link_path != 0) {
                remove_link(link_path, slave);
            }
            close(master);
            return 1;
        }
    }

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    (void)sigaction(SIGINT, &sa, 0);
    (void)sigaction(SIGTERM, &sa, 0);
    sa.sa_handler = on_report_signal;
    (void)sigaction(SIGUSR1, &sa, 0);
    signal(SIGPIPE, SIG_IGN);
    {
        /* A parent may start us with these blocked (Swift's Foundation.Process
         * passes on the spawning thread's mask): unblock them, or a SIGTERM
         * would never arrive. */
        sigset_t wanted;
        sigemptyset(&wanted);
        sigaddset(&wanted, SIGINT);
        sigaddset(&wanted, SIGTERM);
        sigaddset(&wanted, SIGUSR1);
        (void)sigprocmask(SIG_UNBLOCK, &wanted, 0);
    }

    /* Wake-ups are deadlines to the microsecond: ask the kernel not to add
     * its default 50 us of slack to them. */
    (void)prctl(PR_SET_TIMERSLACK, 1000UL, 0UL, 0UL, 0UL);
    t0 = monotonic_us();
    g_t0_us = t0;
    printf("%s\n", slave);
    if (print_origin) {
        printf("clock-origin-us %llu\n", (unsigned long long)t0);
    }
    fflush(stdout);
    if (replay_pending && start_now) {
        ccsim_device_replay(&g_sim, replay, replay_count);
        replay_pending = false;
    }
    note(replay_path != 0 ? (start_now ? "running; replay started" : "running; the replay starts once the host listens")
         : scenario_path == 0 ? "running (no scenario)"
         : start_now ? "running; scenario started"
                     : "running; the scenario starts once the host listens");

    uint64_t stall_us = 0;   /* the lag when the current catch-up began (0: not catching up) */
    uint64_t heard_at_us = 0; /* when host bytes were last read during a catch-up (real time, since t0) */
    while (!g_stop) {
        struct pollfd pfds[2];
        struct pollfd *const pfd_master = &pfds[0];
        uint64_t now, now_ns, wake_ns;
        bool active, lagging;

        /* --faults / scenario `fault` lines: reboots, unplugs and replugs (faults.c) */
        if (g_report) {
            g_report = 0;
            ccsim_faults_report();
        }
        if (ccsim_faults_active()) {
            unsigned act = ccsim_faults_tick(ccsim_device_now_us(&g_sim));
            if ((act & CCSIM_FAULT_RESET) != 0u) {
                ccsim_faults_reboot(&g_sim);
                note("fault: the firmware rebooted");
            }
            if ((act & CCSIM_FAULT_UNPLUG) != 0u && master >= 0) {
                if (link_path != 0) {
                    remove_link(link_path, slave);
                }
                close(master);
                master = -1;
                g_hung_up = true;
                line_clear(&g_tx_line);
                line_clear(&g_rx_line);
                ccsim_faults_flush();
                if (ccsim_filter_active()) {
                    ccsim_filter_unplugged();
                }
                note("fault: unplugged (the pty is gone)");
            }
            if ((act & CCSIM_FAULT_REPLUG) != 0u && master < 0) {
                master = open_pty(slave, sizeof(slave));
                if (master < 0 || (link_path != 0 && place_link(link_path, slave) != 0)) {
                    status = 1;
                    break;
                }
                if (!g_quiet) {
                    fprintf(stderr, "camctl-sim: fault: plugged in again at %s\n", slave);
                }
            }
        }

        /* Wait for host bytes, the pty's room for completed bytes, or the next
         * wake-up (next_wake_ns: the firmware's next step, the next frame
         * delimiter's completion on either line), whichever comes first; not
         * a fixed tick. Device time lagging behind the clock (a stall being
         * caught up) means no sleep at all. With no slave open the master
         * reports POLLHUP at once, so then only sleep. */
        now_ns = monotonic_ns();
        wake_ns = next_wake_ns(now_ns);
        if (g_hung_up) {
            pfd_master->fd = master;
            pfd_master->events = POLLIN;
            pfd_master->revents = 0;
            if (master >= 0 && poll(pfd_master, 1, 0) >= 0 && (pfd_master->revents & POLLHUP) == 0) {
                g_hung_up = false;
                if (ccsim_filter_active()) {
                    ccsim_filter_host_opened();
                }
                note("host opened the port");
            } else {
                struct pollfd control;
                control.fd = g_control_fd;
                control.events = POLLIN;
                control.revents = 0;
                (void)wait_for(&control, g_control_fd >= 0 ? 1u : 0u, wake_ns, 0u);
            }
        } else {
            size_t room = ccsim_faults_active() ? ccsim_faults_room(CCSIM_TO_DEVICE) : device_room();
            pfd_master->fd = master;
            /* No room for host bytes (in the firmware's receive ring, less what
             * is on the line to it): do not wait for input (it would wake us at
             * once), wait for the deadline instead. */
            pfd_master->events = (short)((room > g_rx_line.len && line_room(&g_rx_line) > 0u ? POLLIN : 0) |
                                 (line_ready(&g_tx_line, now_ns, HOST_CHUNK_BYTES) > 0u ? POLLOUT : 0));
            pfd_master->revents = 0;
            pfds[1].fd = g_control_fd;
            pfds[1].events = POLLIN;
            pfds[1].revents = 0;
            if (wait_for(pfds, g_control_fd >= 0 ? 2u : 1u, wake_ns, spin_ns) < 0 && errno != EINTR) {
                fprintf(stderr, "camctl-sim: ppoll: %s\n", strerror(errno));
                status = 1;
                break;
            }
            if ((pfd_master->revents & POLLHUP) != 0 && (pfd_master->revents & POLLIN) == 0) {
                host_closed();
            }
        }

        /* Host -> line: only as many bytes as the firmware's receive ring
         * (or the injector) has room for, less those already on the line;
         * the rest stays in the kernel, which holds the host back
         * (backpressure). A byte read is never dropped (issue 9). The bytes
         * start on the line now; after a stall, at the device time being
         * caught up from, so the firmware sees them at once. */
        now = monotonic_us() - t0;
        lagging = now > ccsim_device_now_us(&g_sim) + MAX_STEP_US;
        while (!g_hung_up) {
            static uint8_t in[1024];
            size_t room = ccsim_faults_active() ? ccsim_faults_room(CCSIM_TO_DEVICE) : device_room();
            ssize_t n;
            room = room > g_rx_line.len ? room - g_rx_line.len : 0u;
            room = room < line_room(&g_rx_line) ? room : line_room(&g_rx_line);
            if (room == 0u) {
                break;
            }
            n = read(master, in, room < sizeof(in) ? room : sizeof(in));
            if (n > 0) {
                line_push(&g_rx_line, in, (size_t)n, dev_ns(lagging ? ccsim_device_now_us(&g_sim) : now));
                if (lagging) {
                    heard_at_us = now;
                }
                continue;
            }
            if (n < 0 && errno == EIO) {
                host_closed();
            }
            break;
        }

        if (g_control_fd >= 0) {
            read_control(&g_sim);
        }

        /* Device time follows the monotonic clock (run_device_to: in steps at
         * the moments the firmware acts). After a stall (a loaded machine did
         * not run us for a while) it catches up by at most MAX_STEP_US per
         * pass, reading the pty between the passes: the host's bytes of the
         * stall all arrive at once, and jumping the whole stall at once would
         * look to the firmware like host silence and end a live session. */
        now = monotonic_us() - t0;
        if (now > ccsim_device_now_us(&g_sim) + MAX_STEP_US) {
            /* Catching up: this device time passes in a moment of real time, so the host cannot answer
             * what the firmware sends in it (a handshake response, say, after which the host starts its
             * heartbeats): host silence here is the simulator's stall, not the host's (§8), unless the
             * stall outlasted the dead timeout (the host gave up too: cc_device_note_stall). */
            if (stall_us == 0u) {
                stall_us = now - ccsim_device_now_us(&g_sim);
            }
            /* Host bytes read during the catch-up were sent in real time, by the moment they were read,
             * but reach the firmware at the catch-up's start: the host was alive up to that moment however
             * long the stall, so the catch-up up to it is not its silence either (a handshake sent while
             * the simulator was stopped would otherwise start a session that dies in the catch-up, before
             * the host could answer). Past that moment host silence counts again. */
            cc_device_note_stall(ccsim_device_core(&g_sim), ccsim_device_now_us(&g_sim),
                                 ccsim_device_now_us(&g_sim) < heard_at_us ? MAX_STEP_US : stall_us, MAX_STEP_US);
            if (ccsim_filter_active()) {
                ccsim_filter_stalled(MAX_STEP_US); /* --strict: nor is it the host's time to answer in */
            }
            now = ccsim_device_now_us(&g_sim) + MAX_STEP_US;
        } else {
            stall_us = 0u;
        }
        run_device_to(now > ccsim_device_now_us(&g_sim) ? now : ccsim_device_now_us(&g_sim));

        active = cc_device_session_active(ccsim_device_core(&g_sim));
        if (ccsim_filter_active()) {
            uint8_t fake[64];
            size_t k;
            ccsim_filter_in_line(g_rx_line.pushed_total, g_rx_line.popped_total);
            k = ccsim_filter_tick(ccsim_device_now_us(&g_sim), active, fake, sizeof(fake));
            if (k > 0u && k <= sizeof(g_filtered) - g_filtered_len) {
                memcpy(g_filtered + g_filtered_len, fake, k); /* after what waits, never dropped */
                g_filtered_len += k;
                flush_filtered();
            }
        }
        if (active != was_active) {
            note(active ? "session started (handshake)" : "session ended");
            was_active = active;
            answer_acked = false;
        }
        if (active && !answer_acked && cc_link_unacked(&ccsim_device_core(&g_sim)->link) == 0u) {
            /* The host has the session too: its ACK of the answer arrived. */
            note("session acknowledged by the host");
            answer_acked = true;
        }

        /* Device -> host: the bytes that have completed on the line. */
        if (!g_hung_up && !write_ready(master)) {
            host_closed();
        }

        /* --exit-with-parent: once reparented, whoever started us is gone. */
        if (parent != 0 && getppid() != parent) {
            note("parent exited");
            break;
        }

        /* --replay: once the host listens (ccsim_device_host_listening); --exit-after-scenario after it */
        if (replay_path != 0) {
            if (replay_pending && ccsim_device_host_listening(&g_sim)) {
                ccsim_device_replay(&g_sim, replay, replay_count);
                replay_pending = false;
                note("replay started");
            }
            if (!replay_pending && !ccsim_device_replay_running(&g_sim) && scenario_done_us == 0u) {
                scenario_done_us = ccsim_device_now_us(&g_sim);
                note("replay finished");
            }
            if (exit_after && scenario_done_us != 0u &&
                ccsim_device_now_us(&g_sim) - scenario_done_us >= EXIT_GRACE_US) {
                break;
            }
        }

        /* --exit-after-scenario */
        if (scenario_path != 0) {
            bool running = ccsim_device_scenario_running(&g_sim);
            if (running) {
                scenario_seen = true;
                if (!g_sim.pending_valid) {
                    ccsim_faults_scenario_at(g_sim.player.step, false, ccsim_device_now_us(&g_sim));
                }
            } else if (scenario_seen) {
                ccsim_faults_scenario_at(UINT32_MAX, true, ccsim_device_now_us(&g_sim));
            }
            if (!running && scenario_seen && scenario_done_us == 0u) {
                scenario_done_us = ccsim_device_now_us(&g_sim);
                note("scenario finished");
            }
            if (exit_after && scenario_done_us != 0u &&
                ccsim_device_now_us(&g_sim) - scenario_done_us >= EXIT_GRACE_US) {
                break;
            }
        }
    }

    if (link_path != 0 && master >= 0) {
        remove_link(link_path, slave);
    }
    if (master >= 0) {
        close(master);
    }
    if (g_control_fd >= 0) {
        close(g_control_fd);
        (void)unlink(control_path);
    }
    free(replay);
    ccsim_faults_report();
    if (strict) {
        (void)ccsim_strict_report();
    }
    note("stopped");
    return status;
}
