/*
 * micro:bit port: the 5x5 LED matrix (wired as 3 rows x 9 columns: rows
 * P0.13-P0.15 drive high, columns P0.4-P0.12 sink low) as the indicator.
 */
#ifndef MICROBIT_BOARD_LEDS_H
#define MICROBIT_BOARD_LEDS_H

#include <stdint.h>

/* All LEDs off, pins as outputs. */
void board_leds_init(void);
/* The indicator (cameracontrol.v1.IndicatorMode: 0 off, 1 on, 2 blink at
 * about 2 Hz): the centre LED. Any colour is "on". */
void board_leds_set_indicator(uint32_t mode);
/* Runs the blinking; call from the main loop with the time. */
void board_leds_update(uint64_t now_us);
/* Every LED on (the fault handler's sign). */
void board_leds_fault(void);

#endif /* MICROBIT_BOARD_LEDS_H */
