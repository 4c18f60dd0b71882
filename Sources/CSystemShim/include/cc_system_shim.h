#ifndef CC_SYSTEM_SHIM_H
#define CC_SYSTEM_SHIM_H

/*
 * Small wrappers over POSIX calls that Glibc's Swift module hides or that are awkward from Swift
 * (pseudo-terminals, termios). Every function returns 0 on success or a positive errno value.
 */

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Opens a new pseudo-terminal master (posix_openpt with O_RDWR | O_NOCTTY), grants and unlocks its
 * subordinate, and writes the master's descriptor to *master_fd. The descriptor is close-on-exec and
 * non-blocking. Returns 0 or an errno value (nothing is left open on failure).
 */
int cc_shim_open_pty_master(int *master_fd);

/*
 * Writes the path of the subordinate terminal of master_fd (e.g. "/dev/pts/3") to buffer, which holds
 * capacity bytes including the terminating NUL. Returns 0 or an errno value (ERANGE when it does not fit).
 */
int cc_shim_pty_subordinate_name(int master_fd, char *buffer, size_t capacity);

/*
 * Puts the terminal fd into raw mode (cfmakeraw), 8 data bits, no parity, 1 stop bit, no hardware or
 * software flow control, receiver on, modem lines ignored (CLOCAL), VMIN = 0 / VTIME = 0, and, when baud
 * is non-zero and a standard rate, that speed in both directions. Returns 0 or an errno value
 * (EINVAL for a baud rate termios has no constant for).
 */
int cc_shim_configure_raw(int fd, unsigned int baud);

/* Sets O_NONBLOCK (nonblocking != 0) or clears it on fd. Returns 0 or an errno value. */
int cc_shim_set_nonblocking(int fd, int nonblocking);

/* Sets FD_CLOEXEC on fd. Returns 0 or an errno value. */
int cc_shim_set_cloexec(int fd);

/*
 * Sets (exclusive != 0, ioctl TIOCEXCL) or clears (TIOCNXCL) exclusive mode on the terminal fd: while set,
 * further open()s of the terminal fail with EBUSY, except for root (CAP_SYS_ADMIN). Returns 0 or an errno
 * value (ENOTSUP where the platform has no such ioctl).
 */
int cc_shim_set_exclusive(int fd, int exclusive);

/* Names the calling thread for the OS (pthread_setname_np: `top -H`, /proc/self/task/N/comm, debuggers);
 * Linux keeps the first 15 bytes. Returns 0 or an errno value (ENOTSUP where the platform cannot). */
int cc_shim_set_thread_name(const char *name);

/* write(2) that never raises SIGPIPE: a pipe or pty whose reader is gone fails with EPIPE instead of
 * killing the process (a library must not make its host ignore SIGPIPE). SIGPIPE is blocked in the calling
 * thread around the write; one the write raised is taken back before the mask is restored (one pending from
 * before is left alone). Returns write's result; errno as write leaves it. */
long cc_shim_write_nosigpipe(int fd, const void *buffer, size_t count);

/* Signals to a pipe, for a tool that must clean up on Ctrl-C and SIGTERM: installs for each of `signals`
 * (`count` of them) a handler that writes the signal's number as one byte to `fd` (the non-blocking write
 * end of a pipe a thread of the tool reads) and does nothing else (async-signal-safe). Whichever thread
 * the kernel picks runs it, so no thread needs the signals blocked; a child process starts with the
 * default actions again (exec resets caught signals). Returns 0 or an errno value. */
int cc_shim_signals_to_pipe(const int *signals, int count, int fd);

/* Unblocks every signal in the calling thread (pthread_sigmask with an empty set). A child process inherits
 * the mask of the thread that spawns it, and the threads of Swift's concurrency pool block nearly every
 * signal: a command launched from one could not be interrupted or terminated. Returns 0, or an errno. */
int cc_shim_unblock_all_signals(void);

/*
 * Local (Unix-domain) stream sockets, for `camctl serve` and the apps that attach to it. Each descriptor
 * written is close-on-exec and non-blocking; nothing is left open on failure. ENAMETOOLONG when path does
 * not fit a socket address.
 *
 * cc_shim_unix_connect connects to the socket at path (ECONNREFUSED when nobody listens there).
 * cc_shim_unix_listen binds a new socket at path (which must not exist) and listens, backlog 16.
 * cc_shim_unix_accept takes the next connection (EAGAIN when none waits).
 * cc_shim_peer_pid writes the process id of the connected peer (SO_PEERCRED; LOCAL_PEERPID on macOS).
 */
int cc_shim_unix_connect(const char *path, int *fd);
int cc_shim_unix_listen(const char *path, int *fd);
int cc_shim_unix_accept(int listener, int *fd);
int cc_shim_peer_pid(int fd, int *pid);

/* Makes the process's stdout line-buffered, so a pipe sees each line as it is printed
 * (Swift 6 cannot name C's `stdout` global safely). */
void cc_shim_line_buffer_stdout(void);

/* Flushes standard output: 0 when everything printed was written; else the flush's errno, or -1 when an
 * earlier write failed (stdout is line-buffered: that write's errno is gone). */
int cc_shim_flush_stdout(void);

#ifdef __cplusplus
}
#endif

#endif /* CC_SYSTEM_SHIM_H */
