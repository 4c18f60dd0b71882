/* STM32F4 port: its part of the images common to every board (common/port_glue.h): the user LED
 * shows the simulator image's indicator, the SysTick times the benchmark. */
#include "board.h"
#include "board_hal.h"
#include "port_glue.h"

static char g_serial[25];

void port_sim_init(cc_device_info_t *info)
{
    board_serial_number(g_serial);
    stm32_indicator_set(0u);
    info->vendor = "STMicroelectronics";
    info->model = "STM32F4 (simulated input)";
    info->serial_number = g_serial;
    info->firmware_version = "1.0.0-stm32-sim";
}

void port_sim_indicator(uint32_t mode)
{
    stm32_indicator_set(mode);
}

void port_sim_update(uint64_t now_us)
{
    stm32_indicator_update(now_us);
}

uint32_t port_bench_ticks(void)
{
    return (uint32_t)board_cycles();
}

uint32_t port_bench_tenths(uint32_t ticks, uint32_t polls)
{
    /* cycles of the core clock: 10^10 / core_hz instructions x10 each (QEMU: 168 MHz) */
    return (uint32_t)(((uint64_t)ticks * 10000000u) / (board_core_hz() / 1000u) / polls);
}

const cc_device_info_t *port_bench_info(void)
{
    return &stm32_info;
}
