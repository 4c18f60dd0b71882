/*
 * camctl-sim: the CameraControl firmware and simulator behind a pseudo-terminal.
 *
 * Prints the slave path of a new pty on the first line of stdout, then runs
 * the real firmware core (ccsim_device_t) in real time on CLOCK_MONOTONIC:
 * ppoll() on the pty master wakes the loop when host bytes arrive, at the next
 * sample boundary, or (with --baud) when the modelled serial line completes a
 * frame or the UART's FIFO drains; bytes move both ways without blocking. A host opens the slave like a serial port. The host may close and
 * reopen the slave at any time (the firmware then sees a silent link).
 * See docs/SIMULATOR.md, "camctl-sim".
 *
 * The only file of the simulator that calls the OS.
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
#include "ccsim_device.h"

#define MAX_SCENARIO_BYTES 65536u
/* After a scenario ends, keep running this long before --exit-after-scenario
 * exits, so the last events are delivered and acknowledged. */
#define EXIT_GRACE_US 300000u
/* The largest step of device time per pass of the main loop (see "Device time follows"). */
#define MAX_STEP_US 5000u
/* --baud: the fastest UART the speed model takes (bits per second). */
#define MAX_BAUD 100000000u

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
    "  --start-now            start the scenario immediately instead\n"
    "  --seed N               seed of the finger and sensor model (default 1)\n"
    "  --baud N               pace both directions like a UART of N bits per second, 8N1\n"
    "                         (10 bits a byte, a 16-byte FIFO); default: unpaced\n"
    "  --exit-after-scenario  exit 0 shortly after the scenario has finished\n"
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
    "2 on bad arguments or a scenario that does not parse\n";

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

/* UART speed model (--baud): microseconds until the credit of one direction
 * is back to the FIFO's depth (the modelled UART is idle again), or 0 when it
 * is already. The simulator's credit is updated lazily, so project it to the
 * device time now. */
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

/* How long the loop may sleep (microseconds, from device time now): until the
 * next sample boundary, or earlier when the modelled UART (--baud) finishes
 * the bytes it has and the firmware may have more to send or to read. */
static uint64_t sleep_budget_us(const ccsim_device_t *sim)
{
    const cc_input_config_t *c = cc_device_config(&sim->dev);
    uint64_t rate = (c != 0 && c->sample_rate_hz != 0u) ? c->sample_rate_hz : 1000u;
    uint64_t period = 1000000u / rate;
    uint64_t budget = (sim->now_us / period + 1u) * period - sim->now_us;
    uint64_t tx = uart_busy_us(sim, sim->tx_credit_milli);
    uint64_t rx = sim->rx.len > 0u ? uart_busy_us(sim, sim->rx_credit_milli) : 0u;
    if (tx != 0u && tx < budget) {
        budget = tx;
    }
    if (rx != 0u && rx < budget) {
        budget = rx;
    }
    return budget;
}

/* --baud: one direction of the serial line between the simulated UART and
 * the pty. A chunk of bytes handed to the line starts when the line is free
 * (or now) and its bytes complete one byte time (10 bits) apart; a byte is
 * passed on (to the pty, or to the firmware) only once it has completed, so
 * the host sees each frame's delimiter when a real UART would deliver it.
 * byte_ns 0: unpaced, every byte completes at once. */
typedef struct line {
    uint64_t byte_ns;     /* time of one byte on the wire */
    uint64_t free_ns;     /* the line is busy until then */
    uint64_t base_ns;     /* the current chunk's first byte started then */
} line_t;

static uint64_t monotonic_ns(void)
{
    struct timespec ts;
    (void)clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A chunk of n bytes goes on the line at now_ns. */
static void line_start(line_t *l, uint64_t now_ns, size_t n)
{
    l->base_ns = l->free_ns > now_ns ? l->free_ns : now_ns;
    l->free_ns = l->base_ns + (uint64_t)n * l->byte_ns;
}

/* Bytes of the current chunk (of n) that have completed at now_ns. */
static size_t line_done(const line_t *l, uint64_t now_ns, size_t n)
{
    uint64_t k;
    if (l->byte_ns == 0u) {
        return n;
    }
    if (now_ns < l->base_ns) {
        return 0;
    }
    k = (now_ns - l->base_ns) / l->byte_ns;
    return k < (uint64_t)n ? (size_t)k : n;
}

/* When to wake for a chunk whose bytes [off, n) are not passed on yet: the
 * completion of the next frame delimiter among them (or of the last byte);
 * UINT64_MAX when nothing waits. */
static uint64_t line_due_ns(const line_t *l, const uint8_t *chunk, size_t off, size_t n)
{
    const uint8_t *zero;
    size_t last;
    if (off >= n || l->byte_ns == 0u) {
        return UINT64_MAX;
    }
    zero = memchr(chunk + off, 0, n - off);
    last = zero != 0 ? (size_t)(zero - chunk) : n - 1u;
    return l->base_ns + ((uint64_t)last + 1u) * l->byte_ns;
}

/* Bytes for the firmware, through the --break/--strict filter when it is on. */
static void to_device(const uint8_t *in, size_t n, uint64_t now_us)
{
    if (ccsim_filter_active()) {
        /* --break / --strict: the frame filter may rewrite what the host sent (tests only). */
        static uint8_t filtered[2u * 4096u + 64u];
        size_t m = ccsim_filter_in(in, n, filtered, sizeof(filtered), now_us,
                                   cc_device_session_active(ccsim_device_core(&g_sim)));
        (void)ccsim_device_host_write(&g_sim, filtered, m);
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

int main(int argc, char **argv)
{
    const char *link_path = 0, *scenario_path = 0;
    bool start_now = false, exit_after = false, strict = false, print_origin = false;
    uint64_t seed = 1, baud = 0;
    static char scenario[MAX_SCENARIO_BYTES + 1u];
    size_t scenario_len = 0;
    pid_t parent = 0; /* --exit-with-parent: the parent to outlive not */
    char slave[128];
    int master, i, status = 0;
    struct sigaction sa;
    uint64_t t0, scenario_done_us = 0;
    bool hung_up = true, was_active = false, scenario_seen = false; /* no slave open yet */
    static uint8_t out[4096];
    size_t out_len = 0, out_off = 0;
    static uint8_t held[1024];  /* host -> device bytes on the line (--baud) */
    size_t held_len = 0, held_off = 0;
    line_t tx_line = {0, 0, 0}, rx_line = {0, 0, 0};
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
        } else if (strcmp(a, "--scenario") == 0 && i + 1 < argc) {
            scenario_path = argv[++i];
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
                printf("%-30s %s\n%-30s caught by: %s\n", ccsim_breaks[b].name, ccsim_breaks[b].rule, "",
                       ccsim_breaks[b].cases);
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
    if ((start_now || exit_after) && scenario_path == 0) {
        fprintf(stderr, "camctl-sim: --start-now and --exit-after-scenario need --scenario\n");
        return 2;
    }

    ccsim_device_init(&g_sim, seed);
    if (baud != 0u) {
        ccsim_device_set_baud(&g_sim, (uint32_t)baud);
        tx_line.byte_ns = rx_line.byte_ns = 10000000000u / baud;
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
    printf("%s\n", slave);
    if (print_origin) {
        printf("clock-origin-us %llu\n", (unsigned long long)t0);
    }
    fflush(stdout);
    note(scenario_path == 0 ? "running (no scenario)"
         : start_now ? "running; scenario started"
                     : "running; the scenario starts at the host's handshake");

    while (!g_stop) {
        struct pollfd pfd;
        struct timespec timeout;
        uint64_t now, now_ns, wake_us, wake_ns;
        bool active;

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
                hung_up = true;
                out_len = out_off = held_len = held_off = 0;
                ccsim_faults_flush();
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

        /* Wait for host bytes, the next sample boundary, the modelled UART
         * (sleep_budget_us) or the line's next completed frame (line_due_ns),
         * whichever comes first; not a fixed tick. Device
         * time lagging behind the clock (a stall being caught up) means no
         * sleep at all. With no slave open the master reports POLLHUP at
         * once, so then only sleep. */
        now_ns = monotonic_ns();
        now = now_ns / 1000u - t0;
        wake_us = ccsim_device_now_us(&g_sim) + sleep_budget_us(&g_sim);
        wake_us = wake_us > now ? wake_us - now : 0u;
        wake_ns = wake_us * 1000u;
        {
            uint64_t due = line_due_ns(&tx_line, out, out_off, out_len);
            uint64_t due_rx = line_due_ns(&rx_line, held, held_off, held_len);
            due = due_rx < due ? due_rx : due;
            if (due != UINT64_MAX) {
                due = due > now_ns ? due - now_ns : 0u;
                wake_ns = due < wake_ns ? due : wake_ns;
            }
            if (ccsim_faults_active()) {
                uint64_t f = ccsim_faults_due_us(ccsim_device_now_us(&g_sim));
                if (f != UINT64_MAX && f * 1000u < wake_ns) {
                    wake_ns = f * 1000u;
                }
            }
        }
        timeout.tv_sec = (time_t)(wake_ns / 1000000000u);
        timeout.tv_nsec = (long)(wake_ns % 1000000000u);
        if (hung_up) {
            pfd.fd = master;
            pfd.events = POLLIN;
            pfd.revents = 0;
            if (master >= 0 && poll(&pfd, 1, 0) >= 0 && (pfd.revents & POLLHUP) == 0) {
                hung_up = false;
                note("host opened the port");
            } else {
                (void)ppoll(0, 0, &timeout, 0);
            }
        } else {
            pfd.fd = master;
            /* No room in the firmware's receive ring: do not wait for input
             * (it would wake us at once), wait for the deadline instead. */
            pfd.events = (short)(((ccsim_faults_active() ? ccsim_faults_room(CCSIM_TO_DEVICE)
                                                           : ccsim_device_host_room(&g_sim)) > 0u && held_off >= held_len ? POLLIN : 0)
                                 | (line_done(&tx_line, now_ns, out_len) > out_off ? POLLOUT : 0));
            pfd.revents = 0;
            if (ppoll(&pfd, 1, &timeout, 0) < 0 && errno != EINTR) {
                fprintf(stderr, "camctl-sim: ppoll: %s\n", strerror(errno));
                status = 1;
                break;
            }
            if ((pfd.revents & POLLHUP) != 0 && (pfd.revents & POLLIN) == 0) {
                hung_up = true;
                out_len = out_off = held_len = held_off = 0;
                note("host closed the port");
            }
        }

        /* Host -> device: only as many bytes as the firmware's receive ring
         * has room for; the rest stays in the kernel, which holds the host
         * back (backpressure). A byte read is never dropped (issue 9). */
        if (!hung_up) {
            for (;;) {
                const uint8_t *in;
                size_t room = ccsim_faults_active() ? ccsim_faults_room(CCSIM_TO_DEVICE)
                                                    : ccsim_device_host_room(&g_sim);
                ssize_t n;
                if (room == 0u) {
                    break;
                }
                /* With --baud the bytes read wait on the line (held) until
                 * they have completed; unpaced they complete at once. */
                if (held_off >= held_len) {
                    n = read(master, held, room < sizeof(held) ? room : sizeof(held));
                    held_off = 0;
                    held_len = n > 0 ? (size_t)n : 0u;
                    if (n > 0) {
                        line_start(&rx_line, monotonic_ns(), held_len);
                    }
                }
                if (held_off < held_len) {
                    size_t done = line_done(&rx_line, monotonic_ns(), held_len) - held_off;
                    done = done < room ? done : room;
                    if (done == 0u) {
                        break;
                    }
                    in = held + held_off;
                    held_off += done;
                    n = (ssize_t)done;
                } else {
                    in = held;
                }
                if (n > 0 && ccsim_faults_active()) {
                    ccsim_faults_feed(CCSIM_TO_DEVICE, in, (size_t)n, ccsim_device_now_us(&g_sim));
                    continue;
                }
                if (n > 0) {
                    to_device(in, (size_t)n, monotonic_us() - t0);
                    continue;
                }
                if (n < 0 && errno == EIO) {
                    hung_up = true;
                    out_len = out_off = held_len = held_off = 0;
                    note("host closed the port");
                }
                break;
            }
        }

        /* --faults: what the host -> device injector lets through, as the firmware has room */
        if (ccsim_faults_active()) {
            uint8_t buf[1024];
            size_t room, k;
            while ((room = ccsim_device_host_room(&g_sim)) > 0u &&
                   (k = ccsim_faults_take(CCSIM_TO_DEVICE, buf, room < sizeof(buf) ? room : sizeof(buf),
                                          ccsim_device_now_us(&g_sim))) > 0u) {
                to_device(buf, k, monotonic_us() - t0);
            }
        }

        /* Device time follows the monotonic clock. After a stall (a loaded machine did not run us for a
         * while) it catches up by at most MAX_STEP_US per pass, reading the pty between the steps: the
         * host's bytes of the stall all arrive at once, and jumping the whole stall at once would look
         * to the firmware like host silence and end a live session. */
        now = monotonic_us() - t0;
        if (now > ccsim_device_now_us(&g_sim)) {
            uint64_t step = now - ccsim_device_now_us(&g_sim);
            ccsim_device_advance(&g_sim, step > MAX_STEP_US ? MAX_STEP_US : step);
        } else {
            ccsim_device_poll(&g_sim);
        }

        active = cc_device_session_active(ccsim_device_core(&g_sim));
        if (ccsim_filter_active()) {
            uint8_t fake[64];
            size_t k = ccsim_filter_tick(now, active, fake, sizeof(fake));
            if (k > 0u) {
                (void)ccsim_device_host_write(&g_sim, fake, k);
            }
        }
        if (active != was_active) {
            note(active ? "session started (handshake)" : "session ended");
            was_active = active;
        }

        /* Device -> host; bytes produced while no one listens are dropped. */
        for (;;) {
            ssize_t n;
            size_t done;
            if (out_off >= out_len) {
                out_off = 0;
                out_len = ccsim_faults_active() ? from_device_faulty(out, sizeof(out)) : from_device(out, sizeof(out));
                if (out_len == 0u) {
                    break;
                }
                line_start(&tx_line, monotonic_ns(), out_len);
            }
            if (hung_up) {
                out_off = out_len;
                continue;
            }
            /* --baud: only the bytes that have completed on the line */
            done = line_done(&tx_line, monotonic_ns(), out_len);
            if (done <= out_off) {
                break;
            }
            n = write(master, out + out_off, done - out_off);
            if (n > 0) {
                out_off += (size_t)n;
                continue;
            }
            if (n < 0 && errno == EIO) {
                hung_up = true;
                out_off = out_len;
                note("host closed the port");
                continue;
            }
            break; /* EAGAIN: the pty is full, try at the next tick */
        }

        /* --exit-with-parent: once reparented, whoever started us is gone. */
        if (parent != 0 && getppid() != parent) {
            note("parent exited");
            break;
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
    ccsim_faults_report();
    if (strict) {
        (void)ccsim_strict_report();
    }
    note("stopped");
    return status;
}
