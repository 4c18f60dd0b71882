/* micro:bit port: its part of the images common to every board (common/port_glue.h): the LED
 * matrix shows the simulator image's indicator, TIMER0 times the benchmark. */
#include "board.h"
#include "board_hal.h"
#include "board_leds.h"
#include "port_glue.h"

static char g_serial[17];

void port_sim_init(cc_device_info_t *info)
{
    board_leds_init();
    board_serial_number(g_serial);
    info->vendor = "BBC";
    info->model = "micro:bit v1 (simulated input)";
    info->serial_number = g_serial;
    info->firmware_version = "1.0.0-microbit-sim";
}

void port_sim_indicator(uint32_t mode)
{
    board_leds_set_indicator(mode);
}

void port_sim_update(uint64_t now_us)
{
    board_leds_update(now_us);
}

uint32_t port_bench_ticks(void)
{
    return board_cycles16();
}

uint32_t port_bench_tenths(uint32_t ticks, uint32_t polls)
{
    /* TIMER0 at 16 MHz: 62.5 instructions per tick, x10: 625 */
    return (uint32_t)(((uint64_t)ticks * 625u) / polls);
}

const cc_device_info_t *port_bench_info(void)
{
    return &microbit_info;
}
