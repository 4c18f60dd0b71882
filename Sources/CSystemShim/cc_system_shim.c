/* Wrappers over POSIX pseudo-terminal and termios calls; see include/cc_system_shim.h. */
#define _GNU_SOURCE 1
#define _DEFAULT_SOURCE 1
#if defined(__APPLE__)
#define _DARWIN_C_SOURCE 1
#endif

#include "cc_system_shim.h"

#include <stdio.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

int cc_shim_set_nonblocking(int fd, int nonblocking) {
    int flags = fcntl(fd, F_GETFL);
    if (flags < 0) {
        return errno;
    }
    flags = nonblocking ? (flags | O_NONBLOCK) : (flags & ~O_NONBLOCK);
    if (fcntl(fd, F_SETFL, flags) < 0) {
        return errno;
    }
    return 0;
}

int cc_shim_set_cloexec(int fd) {
    int flags = fcntl(fd, F_GETFD);
    if (flags < 0) {
        return errno;
    }
    if (fcntl(fd, F_SETFD, flags | FD_CLOEXEC) < 0) {
        return errno;
    }
    return 0;
}

int cc_shim_open_pty_master(int *master_fd) {
    int fd;
    int error;
    if (master_fd == NULL) {
        return EINVAL;
    }
    fd = posix_openpt(O_RDWR | O_NOCTTY);
    if (fd < 0) {
        return errno;
    }
    if (grantpt(fd) != 0 || unlockpt(fd) != 0) {
        error = errno;
        close(fd);
        return error;
    }
    error = cc_shim_set_cloexec(fd);
    if (error == 0) {
        error = cc_shim_set_nonblocking(fd, 1);
    }
    if (error != 0) {
        close(fd);
        return error;
    }
    *master_fd = fd;
    return 0;
}

int cc_shim_pty_subordinate_name(int master_fd, char *buffer, size_t capacity) {
    if (buffer == NULL || capacity == 0) {
        return EINVAL;
    }
#if defined(__linux__)
    {
        int result = ptsname_r(master_fd, buffer, capacity);
        /* glibc returns the error number; some libcs return -1 and set errno. */
        if (result < 0) {
            return errno;
        }
        return result;
    }
#else
    {
        const char *name = ptsname(master_fd);
        size_t length;
        if (name == NULL) {
            return errno != 0 ? errno : ENOTTY;
        }
        length = strlen(name);
        if (length + 1 > capacity) {
            return ERANGE;
        }
        memcpy(buffer, name, length + 1);
        return 0;
    }
#endif
}

static int cc_shim_speed_for_baud(unsigned int baud, speed_t *speed) {
    switch (baud) {
    case 9600: *speed = B9600; return 0;
    case 19200: *speed = B19200; return 0;
    case 38400: *speed = B38400; return 0;
    case 57600: *speed = B57600; return 0;
    case 115200: *speed = B115200; return 0;
    case 230400: *speed = B230400; return 0;
#ifdef B460800
    case 460800: *speed = B460800; return 0;
#endif
#ifdef B921600
    case 921600: *speed = B921600; return 0;
#endif
#ifdef B1000000
    case 1000000: *speed = B1000000; return 0;
#endif
#ifdef B2000000
    case 2000000: *speed = B2000000; return 0;
#endif
    default: return EINVAL;
    }
}

int cc_shim_configure_raw(int fd, unsigned int baud) {
    struct termios settings;
    if (tcgetattr(fd, &settings) != 0) {
        return errno;
    }
    cfmakeraw(&settings);
    settings.c_cflag &= ~(tcflag_t)(CSIZE | PARENB | CSTOPB);
#ifdef CRTSCTS
    settings.c_cflag &= ~(tcflag_t)CRTSCTS;
#endif
    settings.c_cflag |= (tcflag_t)(CS8 | CLOCAL | CREAD);
    settings.c_iflag &= ~(tcflag_t)(IXON | IXOFF | IXANY);
    settings.c_cc[VMIN] = 0;
    settings.c_cc[VTIME] = 0;
    if (baud != 0) {
        speed_t speed;
        int error = cc_shim_speed_for_baud(baud, &speed);
        if (error != 0) {
            return error;
        }
        if (cfsetispeed(&settings, speed) != 0 || cfsetospeed(&settings, speed) != 0) {
            return errno;
        }
    }
    if (tcsetattr(fd, TCSANOW, &settings) != 0) {
        return errno;
    }
    return 0;
}

int cc_shim_set_exclusive(int fd, int exclusive) {
#if defined(TIOCEXCL) && defined(TIOCNXCL)
    if (ioctl(fd, exclusive ? TIOCEXCL : TIOCNXCL) != 0) {
        return errno;
    }
    return 0;
#else
    (void)fd;
    (void)exclusive;
    return ENOTSUP;
#endif
}

void cc_shim_line_buffer_stdout(void)
{
    (void)setvbuf(stdout, NULL, _IOLBF, 0);
}

int cc_shim_set_thread_name(const char *name) {
#if defined(__linux__)
    char truncated[16];
    strncpy(truncated, name, sizeof truncated - 1);
    truncated[sizeof truncated - 1] = '\0';
    return pthread_setname_np(pthread_self(), truncated);
#elif defined(__APPLE__)
    return pthread_setname_np(name);
#else
    (void)name;
    return ENOTSUP;
#endif
}

long cc_shim_write_nosigpipe(int fd, const void *buffer, size_t count) {
    sigset_t pipe_only, previous, pending;
    int was_pending, saved;
    ssize_t written;
    sigemptyset(&pipe_only);
    sigaddset(&pipe_only, SIGPIPE);
    sigemptyset(&pending);
    (void)sigpending(&pending);
    was_pending = sigismember(&pending, SIGPIPE) == 1;
    (void)pthread_sigmask(SIG_BLOCK, &pipe_only, &previous);
    written = write(fd, buffer, count);
    saved = errno;
    if (written < 0 && saved == EPIPE && !was_pending) {
#if defined(__APPLE__)
        int taken;
        (void)sigwait(&pipe_only, &taken);
#else
        struct timespec none = {0, 0};
        while (sigtimedwait(&pipe_only, NULL, &none) < 0 && errno == EINTR) {
        }
#endif
    }
    (void)pthread_sigmask(SIG_SETMASK, &previous, NULL);
    errno = saved;
    return (long)written;
}
