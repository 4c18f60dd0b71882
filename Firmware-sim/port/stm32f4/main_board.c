/*
 * STM32F4 image with the board's own inputs (buttons, ADC, touch pin):
 * the firmware for a Nucleo-F4 people own (`camctl-stm32.hex`).
 */
#include "board.h"
#include "board_hal.h"
#include "cc_device.h"

static cc_device_t g_device;

int main(void)
{
    board_init();
    stm32_hal_init();
    cc_device_init(&g_device, &stm32_hal, NULL);   /* the core has the board's info (board_info.h) */
    for (;;) {
        cc_device_poll(&g_device);
        stm32_indicator_update(board_now_us());
        board_idle();
    }
}
