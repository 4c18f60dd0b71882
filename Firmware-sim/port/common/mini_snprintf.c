/*
 * Every board port: a small snprintf for the simulator image. simlib formats
 * two strings with snprintf ("SIM-%08X", "line %u: %s"); newlib's would link
 * its whole printf and, through it, malloc. This one knows %s, %c, %u, %d,
 * %x, %X with an optional 0 flag and width, and %% — enough for simlib.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

typedef struct out {
    char *buf;
    size_t cap;
    size_t len;
} out_t;

static void put(out_t *o, char c)
{
    if (o->len + 1u < o->cap) {
        o->buf[o->len] = c;
    }
    o->len++;
}

static void put_number(out_t *o, unsigned long v, unsigned base, int upper, int width, char pad)
{
    const char *digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
    char tmp[24];
    int n = 0;
    do {
        tmp[n++] = digits[v % base];
        v /= base;
    } while (v != 0u && n < (int)sizeof tmp);
    while (width-- > n) {
        put(o, pad);
    }
    while (n > 0) {
        put(o, tmp[--n]);
    }
}

int vsnprintf(char *buf, size_t cap, const char *fmt, va_list ap)
{
    out_t o;
    o.buf = buf;
    o.cap = cap;
    o.len = 0u;
    for (; *fmt != '\0'; fmt++) {
        char pad = ' ';
        int width = 0;
        if (*fmt != '%') {
            put(&o, *fmt);
            continue;
        }
        fmt++;
        if (*fmt == '0') {
            pad = '0';
            fmt++;
        }
        while (*fmt >= '0' && *fmt <= '9') {
            width = width * 10 + (*fmt - '0');
            fmt++;
        }
        switch (*fmt) {
        case 's': {
            const char *s = va_arg(ap, const char *);
            for (; s != NULL && *s != '\0'; s++) {
                put(&o, *s);
            }
            break;
        }
        case 'c':
            put(&o, (char)va_arg(ap, int));
            break;
        case 'u':
            put_number(&o, va_arg(ap, unsigned), 10u, 0, width, pad);
            break;
        case 'd': {
            int v = va_arg(ap, int);
            if (v < 0) {
                put(&o, '-');
                put_number(&o, 0ul - (unsigned long)v, 10u, 0, width - 1, pad);
            } else {
                put_number(&o, (unsigned long)v, 10u, 0, width, pad);
            }
            break;
        }
        case 'x':
        case 'X':
            put_number(&o, va_arg(ap, unsigned), 16u, *fmt == 'X', width, pad);
            break;
        case '\0':
            fmt--;
            break;
        default:
            put(&o, *fmt);
            break;
        }
    }
    if (cap > 0u) {
        buf[o.len < cap ? o.len : cap - 1u] = '\0';
    }
    return (int)o.len;
}

int snprintf(char *buf, size_t cap, const char *fmt, ...)
{
    va_list ap;
    int n;
    va_start(ap, fmt);
    n = vsnprintf(buf, cap, fmt, ap);
    va_end(ap);
    return n;
}
