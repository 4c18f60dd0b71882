/* camctl-bench scale: simulated devices behind pseudo-terminals, and a minimal C host.
 *
 * The feeder runs N copies of the real firmware and simulator (ccsim_device_t) on one thread in real
 * time, 1 ms steps on CLOCK_MONOTONIC, each behind the master side of its own pty: exactly the bytes
 * N camctl-sim processes would send, without N processes waking 1000 times a second each.
 *
 * The minimal C host opens the subordinate sides and does the least a host must: a handshake, one
 * StreamRawSamples call, ACKs for reliable packets, heartbeats; and for every frame: read, COBS-decode,
 * CRC-check, parse the envelope, unpack RawSampleBatch with protobuf-c, count. */
#define _GNU_SOURCE
#include "cc_bench_support.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "cameracontrol/v1/device.pb-c.h"
#include "cameracontrol/v1/input.pb-c.h"
#include "cc_cobs.h"
#include "cc_crc16.h"
#include "ccsim_device.h"

static uint64_t now_ns(clockid_t clock) {
    struct timespec ts;
    (void)clock_gettime(clock, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int cc_bench_scale_open_pty(char *path, size_t cap) {
    struct termios t;
    int s;
    int m = posix_openpt(O_RDWR | O_NOCTTY);
    if (m < 0) return -1;
    if (grantpt(m) != 0 || unlockpt(m) != 0 || ptsname_r(m, path, cap) != 0) {
        close(m);
        return -1;
    }
    s = open(path, O_RDWR | O_NOCTTY);
    if (s < 0 || tcgetattr(s, &t) != 0) {
        if (s >= 0) close(s);
        close(m);
        return -1;
    }
    cfmakeraw(&t);
    (void)tcsetattr(s, TCSANOW, &t);
    close(s);
    (void)fcntl(m, F_SETFL, fcntl(m, F_GETFL) | O_NONBLOCK);
    return m;
}

/* ---- the feeder ---- */

struct cc_bench_feeder {
    int count;
    int *fds;
    ccsim_device_t *devices;
    pthread_t thread;
    volatile int stop;
    volatile uint64_t cpu_ns;      /* the feeder thread's CPU time so far */
    volatile uint64_t late_steps;  /* 1 ms steps that started more than one step late */
    volatile uint64_t bytes_dropped;
};

static void *feeder_main(void *arg) {
    cc_bench_feeder_t *f = arg;
    uint64_t t0 = now_ns(CLOCK_MONOTONIC), step = 0;
    uint8_t buf[2048];
    while (!f->stop) {
        /* Device time follows the clock in whole milliseconds: a late step skips the sleeps it missed
         * and advances the devices by all of them (the firmware samples every millisecond of it), so
         * a feeder that falls behind delivers late, never fewer samples. */
        struct timespec at;
        uint64_t due = t0 + (step + 1u) * 1000000u, device_us, now;
        at.tv_sec = (time_t)(due / 1000000000u);
        at.tv_nsec = (long)(due % 1000000000u);
        (void)clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL);
        now = now_ns(CLOCK_MONOTONIC);
        if (now > due + 1000000u) f->late_steps++;
        step = (now - t0) / 1000000u;
        device_us = step * 1000u;
        for (int i = 0; i < f->count; i++) {
            ccsim_device_t *d = &f->devices[i];
            for (;;) {
                size_t room = ccsim_device_host_room(d);
                ssize_t n;
                if (room == 0) break;
                n = read(f->fds[i], buf, room < sizeof buf ? room : sizeof buf);
                if (n <= 0) break;
                (void)ccsim_device_host_write(d, buf, (size_t)n);
            }
            ccsim_device_advance(d, device_us - ccsim_device_now_us(d));
            for (;;) {
                size_t n = ccsim_device_host_read(d, buf, sizeof buf), off = 0;
                if (n == 0) break;
                while (off < n) {
                    ssize_t w = write(f->fds[i], buf + off, n - off);
                    if (w <= 0) break;
                    off += (size_t)w;
                }
                f->bytes_dropped += n - off; /* nobody has the pty open, or it is full */
            }
        }
        f->cpu_ns = now_ns(CLOCK_THREAD_CPUTIME_ID);
    }
    return NULL;
}

cc_bench_feeder_t *cc_bench_feeder_start(int count, const int *master_fds) {
    cc_bench_feeder_t *f = calloc(1, sizeof *f);
    if (f == NULL) return NULL;
    f->count = count;
    f->fds = calloc((size_t)count, sizeof(int));
    f->devices = calloc((size_t)count, sizeof(ccsim_device_t));
    if (f->fds == NULL || f->devices == NULL) {
        free(f->fds);
        free(f->devices);
        free(f);
        return NULL;
    }
    for (int i = 0; i < count; i++) {
        f->fds[i] = master_fds[i];
        ccsim_device_init(&f->devices[i], (uint64_t)i + 1u);
        ccsim_device_set_noise(&f->devices[i], true);
    }
    if (pthread_create(&f->thread, NULL, feeder_main, f) != 0) {
        free(f->fds);
        free(f->devices);
        free(f);
        return NULL;
    }
    return f;
}

uint64_t cc_bench_feeder_cpu_ns(const cc_bench_feeder_t *f) { return f->cpu_ns; }
uint64_t cc_bench_feeder_late_steps(const cc_bench_feeder_t *f) { return f->late_steps; }

void cc_bench_feeder_stop(cc_bench_feeder_t *f) {
    f->stop = 1;
    (void)pthread_join(f->thread, NULL);
    free(f->fds);
    free(f->devices);
    free(f);
}

/* ---- the minimal C host ---- */

typedef struct c_device {
    int fd;
    uint16_t tx_seq;
    uint32_t next_call;
    uint32_t stream_call;   /* 0 until requested */
    int state;              /* 0 handshaking, 1 streaming */
    uint64_t last_tx_ns, handshake_ns;
    uint8_t frame[600];
    size_t frame_len;
    int overflow;
    uint64_t next_ts;       /* expected first_timestamp_us of the next batch (0: none yet) */
} c_device_t;

static void send_packet(c_device_t *d, uint8_t type_flags, uint32_t call, int has_method, uint8_t service,
                        uint8_t method, const uint8_t *payload, size_t payload_len, uint64_t now) {
    uint8_t raw[256], out[300];
    size_t n = 0;
    raw[n++] = type_flags;
    raw[n++] = (uint8_t)(d->tx_seq & 0xFFu);
    raw[n++] = (uint8_t)(d->tx_seq >> 8);
    d->tx_seq++;
    do {
        uint8_t b = (uint8_t)(call & 0x7Fu);
        call >>= 7;
        raw[n++] = (uint8_t)(b | (call != 0 ? 0x80u : 0u));
    } while (call != 0);
    if (has_method) {
        raw[n++] = service;
        raw[n++] = method;
    }
    if (payload_len > sizeof raw - n - 2) return;
    memcpy(raw + n, payload, payload_len);
    n += payload_len;
    uint16_t crc = cc_crc16(raw, n);
    raw[n++] = (uint8_t)(crc & 0xFFu);
    raw[n++] = (uint8_t)(crc >> 8);
    size_t m = cc_cobs_encode(raw, n, out, sizeof out - 1);
    if (m == 0) return;
    out[m++] = 0;
    (void)write(d->fd, out, m);
    d->last_tx_ns = now;
}

static void send_handshake(c_device_t *d, uint64_t now) {
    Cameracontrol__V1__ProtocolVersion version = CAMERACONTROL__V1__PROTOCOL_VERSION__INIT;
    Cameracontrol__V1__HandshakeRequest request = CAMERACONTROL__V1__HANDSHAKE_REQUEST__INIT;
    uint8_t payload[64];
    version.major = 1;
    version.minor = 1;
    request.host_version = &version;
    request.host_name = "c-host";
    size_t n = cameracontrol__v1__handshake_request__pack(&request, payload);
    send_packet(d, 0x11, d->next_call++, 1, 1, 1, payload, n, now);
    d->handshake_ns = now;
}

static void on_frame(c_device_t *d, cc_bench_c_host_counts_t *counts, uint64_t now) {
    uint8_t raw[600];
    size_t n = 0, at = 3;
    uint32_t call = 0;
    int shift = 0;
    if (cc_cobs_decode(d->frame, d->frame_len, raw, sizeof raw, &n) != 0 || n < 6) {
        counts->bad_frames++;
        return;
    }
    if (cc_crc16(raw, n - 2) != (uint16_t)(raw[n - 2] | (raw[n - 1] << 8))) {
        counts->bad_frames++;
        return;
    }
    n -= 2;
    while (at < n && shift < 35) {
        call |= (uint32_t)(raw[at] & 0x7Fu) << shift;
        shift += 7;
        if ((raw[at++] & 0x80u) == 0) break;
    }
    counts->frames++;
    uint8_t type = raw[0] & 0x0Fu;
    if ((raw[0] & 0x10u) != 0) { /* RELIABLE: acknowledge its sequence number */
        uint8_t ack[2] = {raw[1], raw[2]};
        send_packet(d, 0x07, 0, 0, 0, 0, ack, 2, now);
    }
    if (type == 2 && d->state == 0 && call == d->next_call - 1) { /* the handshake's RESPONSE */
        d->state = 1;
        d->stream_call = d->next_call++;
        send_packet(d, 0x11, d->stream_call, 1, 2, 2, NULL, 0, now); /* StreamRawSamples, device's batch */
    } else if (type == 3 && call == d->stream_call && d->stream_call != 0) {
        Cameracontrol__V1__RawSampleBatch *batch =
            cameracontrol__v1__raw_sample_batch__unpack(NULL, n - at, raw + at);
        if (batch == NULL) {
            counts->bad_frames++;
            return;
        }
        uint64_t samples = batch->samples.len / 4u;
        counts->samples += samples;
        counts->lost += batch->dropped_before;
        if (d->next_ts != 0 && batch->first_timestamp_us > d->next_ts && batch->sample_interval_us != 0) {
            counts->lost += (batch->first_timestamp_us - d->next_ts) / batch->sample_interval_us;
        }
        d->next_ts = batch->first_timestamp_us + samples * batch->sample_interval_us;
        cameracontrol__v1__raw_sample_batch__free_unpacked(batch, NULL);
    }
}

int cc_bench_c_host_run(int count, const char *const *paths, double warmup_s, double seconds,
                        cc_bench_c_host_counts_t *out) {
    c_device_t *devices = calloc((size_t)count, sizeof *devices);
    struct pollfd *pfds = calloc((size_t)count, sizeof *pfds);
    cc_bench_c_host_counts_t counts;
    uint8_t buf[4096];
    int opened = 0, rc = 0;
    memset(&counts, 0, sizeof counts);
    memset(out, 0, sizeof *out);
    if (devices == NULL || pfds == NULL) {
        rc = -1;
        goto done;
    }
    uint64_t start = now_ns(CLOCK_MONOTONIC);
    for (int i = 0; i < count; i++) {
        devices[i].fd = open(paths[i], O_RDWR | O_NOCTTY | O_NONBLOCK);
        if (devices[i].fd < 0) {
            rc = -1;
            goto done;
        }
        opened++;
        devices[i].next_call = 1;
        pfds[i].fd = devices[i].fd;
        pfds[i].events = POLLIN;
        send_handshake(&devices[i], start);
    }
    uint64_t measure_at = start + (uint64_t)(warmup_s * 1e9), end = measure_at + (uint64_t)(seconds * 1e9);
    uint64_t cpu_at_measure = 0;
    int measuring = 0;
    for (;;) {
        uint64_t now = now_ns(CLOCK_MONOTONIC);
        if (!measuring && now >= measure_at) {
            measuring = 1;
            counts.frames = counts.samples = counts.lost = counts.bad_frames = 0;
            cpu_at_measure = now_ns(CLOCK_THREAD_CPUTIME_ID);
        }
        if (now >= end) break;
        if (poll(pfds, (nfds_t)count, 10) < 0 && errno != EINTR) {
            rc = -1;
            break;
        }
        now = now_ns(CLOCK_MONOTONIC);
        for (int i = 0; i < count; i++) {
            c_device_t *d = &devices[i];
            if ((pfds[i].revents & POLLIN) != 0) {
                ssize_t n;
                while ((n = read(d->fd, buf, sizeof buf)) > 0) {
                    for (ssize_t k = 0; k < n; k++) {
                        if (buf[k] == 0) {
                            if (!d->overflow && d->frame_len > 0) on_frame(d, &counts, now);
                            d->frame_len = 0;
                            d->overflow = 0;
                        } else if (d->frame_len < sizeof d->frame) {
                            d->frame[d->frame_len++] = buf[k];
                        } else {
                            d->overflow = 1;
                        }
                    }
                }
            }
            if (d->state == 0 && now - d->handshake_ns > 300000000u) send_handshake(d, now);
            if (d->state == 1 && now - d->last_tx_ns >= 50000000u) {
                send_packet(d, 0x08, 0, 0, 0, 0, NULL, 0, now); /* HEARTBEAT */
            }
        }
    }
    for (int i = 0; i < count; i++) counts.streaming += devices[i].state == 1;
    counts.cpu_ns = now_ns(CLOCK_THREAD_CPUTIME_ID) - cpu_at_measure;
    *out = counts;
done:
    for (int i = 0; i < opened; i++) close(devices[i].fd);
    free(devices);
    free(pfds);
    return rc;
}
