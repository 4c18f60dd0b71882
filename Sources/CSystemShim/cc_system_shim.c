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
#include <sys/socket.h>
#include <sys/un.h>
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

static int unix_address(const char *path, struct sockaddr_un *address) {
    memset(address, 0, sizeof *address);
    address->sun_family = AF_UNIX;
    if (strlen(path) >= sizeof address->sun_path) {
        return ENAMETOOLONG;
    }
    strcpy(address->sun_path, path);
    return 0;
}

/* Makes the new socket s close-on-exec and non-blocking and writes it to *fd, or closes it. */
static int own_socket(int s, int *fd) {
    int status = cc_shim_set_cloexec(s);
    if (status == 0) {
        status = cc_shim_set_nonblocking(s, 1);
    }
    if (status != 0) {
        close(s);
        return status;
    }
    *fd = s;
    return 0;
}

static int unix_socket(int *fd) {
    int s = socket(AF_UNIX, SOCK_STREAM, 0);
    return s < 0 ? errno : own_socket(s, fd);
}

int cc_shim_unix_connect(const char *path, int *fd) {
    struct sockaddr_un address;
    int s = -1;
    int status = unix_address(path, &address);
    if (status != 0 || (status = unix_socket(&s)) != 0) {
        return status;
    }
    /* A local connect completes at once or fails; EINPROGRESS is not used for AF_UNIX (EAGAIN: backlog full). */
    while (connect(s, (const struct sockaddr *)&address, sizeof address) != 0) {
        if (errno == EINTR) {
            continue;
        }
        status = errno;
        close(s);
        return status;
    }
    *fd = s;
    return 0;
}

int cc_shim_unix_listen(const char *path, int *fd) {
    struct sockaddr_un address;
    int s = -1;
    int status = unix_address(path, &address);
    if (status != 0 || (status = unix_socket(&s)) != 0) {
        return status;
    }
    if (bind(s, (const struct sockaddr *)&address, sizeof address) != 0 || listen(s, 16) != 0) {
        status = errno;
        close(s);
        return status;
    }
    *fd = s;
    return 0;
}

int cc_shim_unix_accept(int listener, int *fd) {
    int s;
    do {
        s = accept(listener, NULL, NULL);
    } while (s < 0 && errno == EINTR);
    return s < 0 ? errno : own_socket(s, fd);
}

int cc_shim_peer_pid(int fd, int *pid) {
#if defined(__APPLE__)
    pid_t peer = 0;
    socklen_t length = sizeof peer;
    if (getsockopt(fd, SOL_LOCAL, LOCAL_PEERPID, &peer, &length) != 0) {
        return errno;
    }
    *pid = (int)peer;
#else
    struct ucred credentials;
    socklen_t length = sizeof credentials;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) != 0) {
        return errno;
    }
    *pid = (int)credentials.pid;
#endif
    return 0;
}

/* The write end cc_shim_signals_to_pipe's handler writes to (-1: none). */
static volatile sig_atomic_t g_signal_pipe = -1;

static void cc_shim_signal_to_pipe(int signo) {
    int saved = errno;
    unsigned char number = (unsigned char)signo;
    if (g_signal_pipe >= 0) {
        ssize_t written = write((int)g_signal_pipe, &number, 1);
        (void)written; /* a full pipe: a signal is waiting to be read already */
    }
    errno = saved;
}

int cc_shim_signals_to_pipe(const int *signals, int count, int fd) {
    int i;
    g_signal_pipe = fd;
    for (i = 0; i < count; i++) {
        struct sigaction action;
        memset(&action, 0, sizeof action);
        action.sa_handler = cc_shim_signal_to_pipe;
        sigemptyset(&action.sa_mask);
        action.sa_flags = SA_RESTART;
        if (sigaction(signals[i], &action, NULL) != 0) {
            return errno;
        }
    }
    return 0;
}

int cc_shim_flush_stdout(void) {
    if (fflush(stdout) != 0) {
        return errno != 0 ? errno : -1;
    }
    return ferror(stdout) ? -1 : 0;
}

int cc_shim_unblock_all_signals(void) {
    sigset_t none;
    sigemptyset(&none);
    return pthread_sigmask(SIG_SETMASK, &none, NULL);
}
