/*
 * micro:bit port: the cc_hal.h functions of the real board.
 *
 * Inputs (docs/PORTING.md, "micro:bit"): button A = volume down (P0.17),
 * button B = volume up (P0.26), an action button on edge pin P8 (P0.18) to
 * GND; a force-sensing resistor on edge pin P0 (AIN4) and a resistive slide
 * strip (soft potentiometer) on P1 (AIN3), both read by the ADC; touch on
 * edge pin P2 (P0.01, low while a finger bridges it to GND). The indicator is
 * the LED matrix's centre LED. No haptic actuator, no speaker.
 */
#ifndef MICROBIT_BOARD_HAL_H
#define MICROBIT_BOARD_HAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "board_info.h"
#include "cc_device_info.h"
#include "cc_hal.h"

/* ADC counts (10 bits) to millinewtons: full scale is about 10 N. */
#define MICROBIT_FORCE_MN_PER_COUNT 10

/* Pins, the LED matrix and the ADC; call after board_init. */
void microbit_hal_init(void);

/* The board's HAL and what it announces (serial number from the chip). */
extern const cc_hal_t microbit_hal;
extern const cc_device_info_t microbit_info;

/* The individual functions, for images that mix them with others (bench). */
uint64_t microbit_hal_now_us(void *ctx);
size_t microbit_hal_uart_read(void *ctx, uint8_t *buf, size_t cap);
size_t microbit_hal_uart_write(void *ctx, const uint8_t *buf, size_t len);
void microbit_hal_read_sensors(void *ctx, cc_sensor_reading_t *out);
void microbit_hal_indicator_set(void *ctx, uint32_t mode, uint32_t rgb);

#endif /* MICROBIT_BOARD_HAL_H */
