/*
 * CameraControl firmware core: bounded text for status messages (private).
 * No printf: appends to a NUL-terminated buffer, never past cap.
 */
#ifndef CC_TEXT_H
#define CC_TEXT_H

#include <stddef.h>
#include <stdint.h>

/* Appends text at buf[pos]; returns the new length. */
size_t cc_text_append(char *buf, size_t pos, size_t cap, const char *text);

/* Appends a decimal number at buf[pos]; returns the new length. */
size_t cc_text_append_u32(char *buf, size_t pos, size_t cap, uint32_t value);

#endif /* CC_TEXT_H */
