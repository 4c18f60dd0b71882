/*
 * libFuzzer harness (scripts/fuzz fw-bytes): raw bytes from a hostile host into cc_device_poll,
 * through the C tests' mock HAL. The first byte chooses whether a session is up first and how the
 * bytes are split across polls. Properties: no crash, no sanitizer report, no CC_ASSERT.
 */
#include <stddef.h>
#include <stdint.h>

#include "harness.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    harness_t *h = hx_setup();
    size_t pos = 1, chunk;
    if (size == 0) {
        return 0;
    }
    if (data[0] & 1u) {
        (void)hx_handshake(h, 1u);
    }
    chunk = 1u + (size_t)(data[0] >> 1);
    while (pos < size) {
        size_t n = size - pos < chunk ? size - pos : chunk;
        hx_send_raw(h, data + pos, n);
        hx_advance(h, 1000u);
        pos += n;
    }
    hx_advance(h, 50000u);
    return 0;
}
