/* micro:bit port: the LED matrix as the indicator (board_leds.h). */
#include "board_leds.h"

#include "nrf51.h"

#define ROWS_MASK (7u << 13)          /* P0.13..P0.15 */
#define COLS_MASK (0x1FFu << 4)       /* P0.4..P0.12 */
/* The display's centre LED is row 2, column 3. */
#define CENTRE_ROW (1u << 14)
#define CENTRE_COL (1u << 6)
#define BLINK_HALF_PERIOD_SHIFT 18   /* 2^18 us: 262 ms on, 262 ms off */

static uint32_t g_mode;

static void centre(int on)
{
    if (on) {
        GPIO_OUTCLR = CENTRE_COL;
        GPIO_OUTSET = CENTRE_ROW;
    } else {
        GPIO_OUTCLR = CENTRE_ROW;
        GPIO_OUTSET = CENTRE_COL;
    }
}

void board_leds_init(void)
{
    GPIO_OUTCLR = ROWS_MASK;
    GPIO_OUTSET = COLS_MASK;
    GPIO_DIRSET = ROWS_MASK | COLS_MASK;
    g_mode = 0u;
}

void board_leds_set_indicator(uint32_t mode)
{
    g_mode = mode;
    centre(mode == 1u);
}

void board_leds_update(uint64_t now_us)
{
    if (g_mode == 2u) {
        centre((int)((uint32_t)(now_us >> BLINK_HALF_PERIOD_SHIFT) & 1u) == 0);
    }
}

void board_leds_fault(void)
{
    GPIO_OUTCLR = COLS_MASK;
    GPIO_OUTSET = ROWS_MASK;
}
