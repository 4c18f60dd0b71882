/*
 * micro:bit image with the board's own inputs (buttons, ADC, touch pin):
 * the firmware for a micro:bit people own (`camctl-microbit.hex`).
 */
#include "board.h"
#include "board_hal.h"
#include "board_leds.h"
#include "cc_device.h"

static cc_device_t g_device;

int main(void)
{
    board_init();
    microbit_hal_init();
    cc_device_init(&g_device, &microbit_hal, NULL);   /* the core has the board's info (board_info.h) */
    for (;;) {
        cc_device_poll(&g_device);
        board_leds_update(board_now_us());
        board_idle();
    }
}
