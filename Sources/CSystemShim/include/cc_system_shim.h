#ifndef CC_SYSTEM_SHIM_H
#define CC_SYSTEM_SHIM_H
/* Small wrappers over POSIX calls that Glibc's Swift module hides (pty, termios). */
int cc_shim_placeholder(void);
#endif
