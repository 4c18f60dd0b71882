/* CameraControl firmware core: bounded text for status messages. */
#include "cc_text.h"

#include "cc_udiv.h"

size_t cc_text_append(char *buf, size_t pos, size_t cap, const char *text)
{
    if (cap == 0u) {
        return 0;
    }
    while (*text != '\0' && pos + 1u < cap) {
        buf[pos++] = *text++;
    }
    buf[pos] = '\0';
    return pos;
}

size_t cc_text_append_u32(char *buf, size_t pos, size_t cap, uint32_t value)
{
    char digits[10];
    size_t n = 0;
    if (cap == 0u) {
        return 0;
    }
    do {
        uint32_t tens = CC_UDIV32(value, 10u);
        digits[n++] = (char)('0' + (char)(value - tens * 10u));
        value = tens;
    } while (value != 0u);
    while (n > 0u && pos + 1u < cap) {
        buf[pos++] = digits[--n];
    }
    buf[pos] = '\0';
    return pos;
}
