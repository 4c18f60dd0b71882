/*
 * STM32F4 port: the cc_hal.h functions of the real board.
 *
 * Inputs (docs/PORTING.md, "STM32F4"; Nucleo-64 Arduino header names): a
 * force-sensing resistor on A0 (PA0, ADC1 channel 0) and a resistive slide
 * strip (soft potentiometer) on A1 (PA1, ADC2 channel 1); touch from a
 * capacitive touch module's output on D2 (PA10, high while touched); volume
 * up on D4 (PB5), volume down on D5 (PB4), the action button on D6 (PB10),
 * each a switch to 3V3 with the pin's pull-down. Every input reads idle at
 * 0 V: QEMU, which models no GPIO, reads all of them as 0. The indicator is
 * the user LED LD2 (PA5). No haptic actuator, no speaker.
 */
#ifndef STM32F4_BOARD_HAL_H
#define STM32F4_BOARD_HAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "board_info.h"
#include "cc_device_info.h"
#include "cc_hal.h"

/* ADC counts (12 bits) to millinewtons: full scale is about 10 N (x5/2). */
#define STM32_FORCE_MN_PER_2_COUNTS 5

/* Pins and the ADCs; call after board_init. */
void stm32_hal_init(void);

/* The board's HAL and what it announces (serial number from the chip). */
extern const cc_hal_t stm32_hal;
extern const cc_device_info_t stm32_info;

/* The indicator on the LED (cameracontrol.v1.IndicatorMode: 0 off, 1 on, 2 blink
 * at about 2 Hz), and its blinking, run from the main loop with the time. */
void stm32_indicator_set(uint32_t mode);
void stm32_indicator_update(uint64_t now_us);

#endif /* STM32F4_BOARD_HAL_H */
