/* Every board port: start-up memory and the fault report's line (port_start.h). */
#include "port_start.h"

#include <stdint.h>

extern uint32_t _data_load, _data_start, _data_end, _bss_start, _bss_end;

void port_start_memory(void)
{
    const uint32_t *src = &_data_load;
    uint32_t *dst = &_data_start;
    while (dst < &_data_end) {
        *dst++ = *src++;
    }
    for (dst = &_bss_start; dst < &_bss_end; dst++) {
        *dst = 0u;
    }
}

static void hex32(char *out, uint32_t v)
{
    int i;
    for (i = 7; i >= 0; i--) {
        uint32_t d = v & 0xFu;
        out[i] = (char)(d < 10u ? '0' + d : 'a' - 10u + d);
        v >>= 4;
    }
}

void port_fault_line(char out[PORT_FAULT_LINE_BYTES], const uint32_t *frame)
{
    static const char line[PORT_FAULT_LINE_BYTES] =
        "\nFAULT pc=0x........ lr=0x........ psr=0x........ sp=0x........\n";
    uint32_t i;
    for (i = 0u; i < PORT_FAULT_LINE_BYTES; i++) {
        out[i] = line[i];
    }
    hex32(out + 12, frame[6]);
    hex32(out + 26, frame[5]);
    hex32(out + 41, frame[7]);
    hex32(out + 55, (uint32_t)(uintptr_t)frame);
}
