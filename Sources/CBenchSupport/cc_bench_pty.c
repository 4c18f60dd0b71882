#define _GNU_SOURCE
#include "cc_bench_pty.h"

#include <errno.h>

#if defined(__linux__)
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

static uint64_t monotonic_micros(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)now.tv_sec * 1000000u + (uint64_t)now.tv_nsec / 1000u;
}

static uint64_t monotonic_nanos(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

static int make_raw(int fd)
{
    struct termios attributes;
    if (tcgetattr(fd, &attributes) != 0) return -1;
    cfmakeraw(&attributes);
    return tcsetattr(fd, TCSANOW, &attributes);
}

static uint64_t count_frames(int fd)
{
    uint8_t buffer[512];
    uint64_t frames = 0;
    ssize_t got = read(fd, buffer, sizeof buffer);
    for (ssize_t index = 0; index < got; index++) {
        if (buffer[index] == 0) frames++;
    }
    return frames;
}

int cc_bench_open_pty(int *master_out, char *path, size_t path_size)
{
    int master = posix_openpt(O_RDWR | O_NOCTTY);
    if (master < 0) return -1;
    if (grantpt(master) != 0 || unlockpt(master) != 0 || ptsname_r(master, path, path_size) != 0 || make_raw(master) != 0) {
        int saved = errno;
        close(master);
        errno = saved;
        return -1;
    }
    *master_out = master;
    return 0;
}

/* Opens a fresh raw pair: its master in *master, its subordinate (opened with `extra_flags` too) in
 * *subordinate. Returns 0, or -1 with nothing left open (errno set). */
static int open_raw_pair(int *master, int *subordinate, int extra_flags)
{
    char name[128];
    if (cc_bench_open_pty(master, name, sizeof name) != 0) return -1;
    *subordinate = open(name, O_RDWR | O_NOCTTY | extra_flags);
    if (*subordinate < 0 || make_raw(*subordinate) != 0) {
        int saved = errno;
        if (*subordinate >= 0) close(*subordinate);
        close(*master);
        errno = saved;
        return -1;
    }
    return 0;
}

int cc_bench_pty_one_way(size_t count, double *micros)
{
    int master, subordinate;
    if (open_raw_pair(&master, &subordinate, 0) != 0) return -1;
    int status = 0;
    for (size_t index = 0; index < count && status == 0; index++) {
        uint8_t out[2] = {(uint8_t)(index | 1u), 0};
        uint8_t in[2];
        uint64_t start = monotonic_nanos();
        if (write(master, out, sizeof out) != (ssize_t)sizeof out) status = -1;
        size_t got = 0;
        while (status == 0 && got < sizeof in) {
            ssize_t n = read(subordinate, in + got, sizeof in - got);
            if (n <= 0) status = -1;
            else got += (size_t)n;
        }
        micros[index] = (double)(monotonic_nanos() - start) / 1000.0;
    }
    close(subordinate);
    close(master);
    return status;
}

int cc_bench_idle_c_link(double seconds, uint32_t interval_micros, const uint8_t *frame, size_t frame_length,
                         cc_bench_idle_cost *cost)
{
    int master = posix_openpt(O_RDWR | O_NOCTTY);
    if (master < 0) return -1;
    char name[128];
    if (grantpt(master) != 0 || unlockpt(master) != 0 || ptsname_r(master, name, sizeof name) != 0) {
        close(master);
        return -1;
    }
    int subordinate = open(name, O_RDWR | O_NOCTTY);
    if (subordinate < 0 || make_raw(subordinate) != 0 || make_raw(master) != 0) {
        int saved = errno;
        if (subordinate >= 0) close(subordinate);
        close(master);
        errno = saved;
        return -1;
    }
    struct rusage before, after;
    getrusage(RUSAGE_THREAD, &before);
    uint64_t start = monotonic_micros();
    uint64_t end = start + (uint64_t)(seconds * 1e6);
    uint64_t next_beat = start + interval_micros;
    uint64_t frames = 0;
    struct pollfd fds[2] = {{.fd = master, .events = POLLIN}, {.fd = subordinate, .events = POLLIN}};
    for (;;) {
        uint64_t now = monotonic_micros();
        if (now >= end) break;
        if (now >= next_beat) {
            if (write(master, frame, frame_length) < 0 || write(subordinate, frame, frame_length) < 0) break;
            next_beat += interval_micros;
            continue;
        }
        uint64_t wait = (next_beat < end ? next_beat : end) - now;
        int ready = poll(fds, 2, (int)((wait + 999) / 1000));
        if (ready < 0 && errno != EINTR) break;
        for (int index = 0; index < 2; index++) {
            if (ready > 0 && (fds[index].revents & POLLIN)) frames += count_frames(fds[index].fd);
        }
    }
    getrusage(RUSAGE_THREAD, &after);
    cost->wall_micros = monotonic_micros() - start;
    cost->cpu_micros = (uint64_t)(after.ru_utime.tv_sec - before.ru_utime.tv_sec) * 1000000u
        + (uint64_t)(after.ru_stime.tv_sec - before.ru_stime.tv_sec) * 1000000u
        + (uint64_t)(after.ru_utime.tv_usec - before.ru_utime.tv_usec)
        + (uint64_t)(after.ru_stime.tv_usec - before.ru_stime.tv_usec);
    cost->context_switches = (uint64_t)(after.ru_nvcsw - before.ru_nvcsw) + (uint64_t)(after.ru_nivcsw - before.ru_nivcsw);
    cost->frames_received = frames;
    close(subordinate);
    close(master);
    return 0;
}
/* The reader of cc_bench_pty_cross_thread: poll(), read until a 0x00 ends the frame, stamp, signal. */
typedef struct {
    int fd;
    size_t count;
    uint64_t *handled;
    sem_t done;
    int status;
} cross_thread_reader;

static void *cross_thread_read(void *argument)
{
    cross_thread_reader *reader = argument;
    uint8_t buffer[4096];
    for (size_t index = 0; index < reader->count && reader->status == 0; index++) {
        int ended = 0;
        while (!ended) {
            struct pollfd pfd = {reader->fd, POLLIN, 0};
            if (poll(&pfd, 1, 5000) <= 0) {
                reader->status = -1;
                break;
            }
            ssize_t n = read(reader->fd, buffer, sizeof buffer);
            if (n <= 0) {
                reader->status = -1;
                break;
            }
            ended = memchr(buffer, 0, (size_t)n) != NULL;
        }
        reader->handled[index] = monotonic_nanos();
        sem_post(&reader->done);
    }
    sem_post(&reader->done);
    return NULL;
}

int cc_bench_pty_cross_thread(size_t count, const uint8_t *frame, size_t frame_length, unsigned gap_micros,
                              double *micros)
{
    int master, subordinate;
    if (count == 0 || frame_length == 0 || open_raw_pair(&master, &subordinate, O_NONBLOCK) != 0) return -1;
    uint64_t *handled = calloc(count, sizeof *handled);
    cross_thread_reader reader = {subordinate, count, handled, {{0}}, 0};
    pthread_t thread;
    int status = handled == NULL || sem_init(&reader.done, 0, 0) != 0 ? -1 : 0;
    if (status == 0 && pthread_create(&thread, NULL, cross_thread_read, &reader) != 0) {
        sem_destroy(&reader.done);
        status = -1;
    }
    if (status != 0) {
        free(handled);
        close(subordinate);
        close(master);
        return -1;
    }
    for (size_t index = 0; index < count; index++) {
        uint64_t start = monotonic_nanos();
        if (write(master, frame, frame_length) != (ssize_t)frame_length) {
            status = -1;
            break;
        }
        sem_wait(&reader.done);
        if (reader.status != 0) {
            status = -1;
            break;
        }
        micros[index] = (double)(handled[index] - start) / 1000.0;
        usleep(gap_micros); /* the reader goes back to sleep in poll(), as between real events */
    }
    if (status != 0) reader.status = -1;
    close(master); /* ends a reader still waiting */
    pthread_join(thread, NULL);
    sem_destroy(&reader.done);
    free(handled);
    close(subordinate);
    return status;
}

#else
int cc_bench_open_pty(int *master, char *path, size_t path_size)
{
    (void)master; (void)path; (void)path_size;
    errno = ENOSYS;
    return -1;
}

int cc_bench_pty_one_way(size_t count, double *micros)
{
    (void)count; (void)micros;
    errno = ENOSYS;
    return -1;
}

int cc_bench_pty_cross_thread(size_t count, const uint8_t *frame, size_t frame_length, unsigned gap_micros,
                              double *micros)
{
    (void)count; (void)frame; (void)frame_length; (void)gap_micros; (void)micros;
    errno = ENOSYS;
    return -1;
}

int cc_bench_idle_c_link(double seconds, uint32_t interval_micros, const uint8_t *frame, size_t frame_length,
                         cc_bench_idle_cost *cost)
{
    (void)seconds; (void)interval_micros; (void)frame; (void)frame_length; (void)cost;
    errno = ENOSYS;
    return -1;
}
#endif
