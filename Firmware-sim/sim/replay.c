/*
 * camctl-sim --replay FILE: camctl's replay sample file, read and checked
 * (replay.h; docs/SIMULATOR.md, "Replay").
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif

#include "replay.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

const char ccsim_replay_header[] =
    "# camctl-sim replay samples v1: t_us force_mn position touched buttons remote_clicks";

/* One decimal field at *p (a '-' first only when lo < 0), lo..hi, ended by
 * `end` (or, for the last field, by the end of the line). */
static bool field(const char **p, int64_t lo, int64_t hi, char end, int64_t *out)
{
    const char *s = *p;
    bool negative = false;
    int64_t v = 0;
    int digits = 0;
    if (*s == '-' && lo < 0) {
        negative = true;
        s++;
    }
    while (*s >= '0' && *s <= '9') {
        if (++digits > 18) {   /* no overflow: below 10^18 */
            return false;
        }
        v = v * 10 + (int64_t)(*s - '0');
        if (v > hi && !(negative && -v >= lo)) {
            return false;
        }
        s++;
    }
    if (digits == 0) {
        return false;
    }
    v = negative ? -v : v;
    if (v < lo || v > hi) {
        return false;
    }
    if (end == '\n' ? (*s != '\n' && *s != '\0') : *s != end) {
        return false;
    }
    *p = s + 1;
    *out = v;
    return true;
}

bool ccsim_replay_read(FILE *in, ccsim_replay_sample_t **samples, size_t *count, char *msg, size_t cap)
{
    static const struct {
        int64_t lo, hi;
        const char *name;
    } fields[6] = {
        {0, INT64_MAX, "t_us 0.."},
        {INT32_MIN, INT32_MAX, "force_mn a 32-bit integer"},
        {0, 65535, "position 0..65535"},
        {0, 1, "touched 0 or 1"},
        {0, 15, "buttons 0..15"},
        {0, 255, "remote_clicks 0..255"},
    };
    char line[CCSIM_REPLAY_MAX_LINE + 2u];
    ccsim_replay_sample_t *out = 0;
    size_t n = 0, room = 0;
    unsigned long number = 0;
    uint64_t last = 0;

    *samples = 0;
    *count = 0;
    while (fgets(line, (int)sizeof(line), in) != 0) {
        size_t len = strlen(line);
        const char *p = line;
        int64_t v[6];
        int k;
        number++;
        if (len == sizeof(line) - 1u && line[len - 1u] != '\n') {
            snprintf(msg, cap, "line %lu: longer than %u bytes", number, (unsigned)CCSIM_REPLAY_MAX_LINE);
            goto fail;
        }
        if (number == 1u) {
            if (strncmp(line, ccsim_replay_header, sizeof(ccsim_replay_header) - 1u) != 0 ||
                (line[sizeof(ccsim_replay_header) - 1u] != '\n' && line[sizeof(ccsim_replay_header) - 1u] != '\0')) {
                snprintf(msg, cap, "line 1: not a replay sample file (want \"%s\")", ccsim_replay_header);
                goto fail;
            }
            continue;
        }
        for (k = 0; k < 6; k++) {
            if (!field(&p, fields[k].lo, fields[k].hi, k == 5 ? '\n' : ' ', &v[k])) {
                snprintf(msg, cap, "line %lu: field %d: want %s (six integers separated by one space)", number,
                         k + 1, fields[k].name);
                goto fail;
            }
        }
        if ((uint64_t)v[0] < last) {
            snprintf(msg, cap, "line %lu: t_us goes back", number);
            goto fail;
        }
        last = (uint64_t)v[0];
        if (n == room) {
            size_t grown = room == 0u ? 4096u : room * 2u;
            ccsim_replay_sample_t *bigger;
            if (n >= CCSIM_REPLAY_MAX_SAMPLES) {
                snprintf(msg, cap, "line %lu: more than %u samples (the most camctl-sim replays)", number,
                         (unsigned)CCSIM_REPLAY_MAX_SAMPLES);
                goto fail;
            }
            if (grown > CCSIM_REPLAY_MAX_SAMPLES) {
                grown = CCSIM_REPLAY_MAX_SAMPLES;
            }
            bigger = (ccsim_replay_sample_t *)realloc(out, grown * sizeof(*out));
            if (bigger == 0) {
                snprintf(msg, cap, "out of memory for %lu samples", (unsigned long)grown);
                goto fail;
            }
            out = bigger;
            room = grown;
        }
        out[n].t_us = (uint64_t)v[0];
        out[n].force_mn = (int32_t)v[1];
        out[n].position = (uint16_t)v[2];
        out[n].touched = v[3] != 0;
        out[n].buttons = (uint8_t)v[4];
        out[n].remote_clicks = (uint8_t)v[5];
        n++;
    }
    if (ferror(in)) {
        snprintf(msg, cap, "read error: %s", strerror(errno));
        goto fail;
    }
    if (number == 0u) {
        snprintf(msg, cap, "empty (not a replay sample file)");
        goto fail;
    }
    if (n == 0u) {
        snprintf(msg, cap, "no samples");
        goto fail;
    }
    *samples = out;
    *count = n;
    return true;
fail:
    free(out);
    return false;
}

/* The camctl to run: the given one, the one next to this executable, or PATH's. */
static const char *camctl_program(const char *given, char *buf, size_t cap)
{
    ssize_t len;
    char *slash;
    if (given != 0) {
        return given;
    }
    len = readlink("/proc/self/exe", buf, cap - 1u);
    if (len > 0 && (size_t)len + sizeof("camctl") < cap) {
        buf[len] = '\0';
        slash = strrchr(buf, '/');
        if (slash != 0) {
            memcpy(slash + 1, "camctl", sizeof("camctl"));
            if (access(buf, X_OK) == 0) {
                return buf;
            }
        }
    }
    return "camctl";
}

bool ccsim_replay_load(const char *file, const char *camctl_path, ccsim_replay_sample_t **samples, size_t *count,
                       char *msg, size_t cap)
{
    char program_buf[4096];
    const char *program = camctl_program(camctl_path, program_buf, sizeof(program_buf));
    const char *dir = getenv("TMPDIR");
    char tmp[4096];
    char said[1024];   /* the start of camctl's stderr */
    size_t said_len = 0;
    int pipefd[2], fd, status = 0;
    pid_t pid;
    bool ok = false;
    struct stat st;

    *samples = 0;
    *count = 0;
    /* A FIFO with no writer would block camctl's read (and this process) for
     * ever; a directory is no recording either. A missing file is camctl's to
     * report. */
    if (stat(file, &st) == 0 && !S_ISREG(st.st_mode)) {
        snprintf(msg, cap, "is not a regular file (a recording, .pcapng, or a CSV trace is)");
        return false;
    }
    if (dir == 0 || dir[0] == '\0') {
        dir = "/tmp";
    }
    if ((size_t)snprintf(tmp, sizeof(tmp), "%s/camctl-sim-replay-XXXXXX", dir) >= sizeof(tmp)) {
        snprintf(msg, cap, "TMPDIR is too long");
        return false;
    }
    fd = mkstemp(tmp);
    if (fd < 0) {
        snprintf(msg, cap, "cannot create a temporary file in %s: %s", dir, strerror(errno));
        return false;
    }
    if (pipe2(pipefd, O_CLOEXEC) != 0) {
        snprintf(msg, cap, "pipe: %s", strerror(errno));
        close(fd);
        unlink(tmp);
        return false;
    }
    pid = fork();
    if (pid == 0) {
        char *argv[6];
        int null = open("/dev/null", O_WRONLY);
        argv[0] = (char *)"camctl";
        argv[1] = (char *)"export";
        argv[2] = (char *)file;
        argv[3] = (char *)"--samples";
        argv[4] = tmp;
        argv[5] = 0;
        (void)dup2(pipefd[1], 2);
        if (null >= 0) {
            (void)dup2(null, 1);
        }
        if (strchr(program, '/') != 0) {
            execv(program, argv);
        } else {
            execvp(program, argv);
        }
        dprintf(2, "cannot run %s: %s\n", program, strerror(errno));
        _exit(127);
    }
    close(pipefd[1]);
    if (pid < 0) {
        snprintf(msg, cap, "fork: %s", strerror(errno));
        close(pipefd[0]);
        close(fd);
        unlink(tmp);
        return false;
    }
    for (;;) {   /* all of it (so camctl never blocks), the start kept */
        char chunk[512];
        ssize_t got = read(pipefd[0], chunk, sizeof(chunk));
        if (got < 0 && errno == EINTR) {
            continue;
        }
        if (got <= 0) {
            break;
        }
        if (said_len < sizeof(said) - 1u) {
            size_t take = (size_t)got < sizeof(said) - 1u - said_len ? (size_t)got : sizeof(said) - 1u - said_len;
            memcpy(said + said_len, chunk, take);
            said_len += take;
        }
    }
    close(pipefd[0]);
    said[said_len] = '\0';
    while (said_len > 0u && (said[said_len - 1u] == '\n' || said[said_len - 1u] == '\r')) {
        said[--said_len] = '\0';
    }
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) {
            status = -1;
            break;
        }
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        const char *why = said;
        char *nl;
        if (strncmp(why, "camctl export: ", 15) == 0) {
            why += 15;
        }
        nl = strchr(why, '\n');
        if (nl != 0) {
            *nl = '\0';   /* the reason; a usage hint follows it */
        }
        if (WIFEXITED(status) && WEXITSTATUS(status) == 127) {
            snprintf(msg, cap, "%s (--replay reads the file with camctl: build it, or pass --camctl PATH)",
                     why[0] != '\0' ? why : "cannot run camctl");
        } else {
            snprintf(msg, cap, "%s", why[0] != '\0' ? why : "camctl export failed");
        }
    } else {
        FILE *in = fdopen(fd, "r");
        if (in == 0) {
            snprintf(msg, cap, "cannot read %s: %s", tmp, strerror(errno));
        } else {
            char why[192];
            fd = -1;   /* the stream's now */
            ok = ccsim_replay_read(in, samples, count, why, sizeof(why));
            if (!ok) {
                snprintf(msg, cap, "camctl export's samples: %s", why);
            }
            fclose(in);
        }
    }
    if (fd >= 0) {
        close(fd);
    }
    unlink(tmp);
    return ok;
}
