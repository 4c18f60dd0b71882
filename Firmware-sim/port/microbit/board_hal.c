/* micro:bit port: the HAL of the real board (board_hal.h). */
#include "board_hal.h"

#include "board.h"
#include "board_leds.h"
#include "cc_settings.h"
#include "nrf51.h"

#define PIN_BUTTON_A 17u        /* volume down */
#define PIN_BUTTON_B 26u        /* volume up */
#define PIN_ACTION 18u          /* edge pin P8 */
#define PIN_TOUCH 1u            /* edge pin P2 */
#define AIN_FORCE 4u            /* edge pin P0 (P0.03) */
#define AIN_SLIDE 3u            /* edge pin P1 (P0.02) */

char port_serial_number[17];   /* board_info.h */

/* The settings store (cc_settings.h): slot n in the flash page at
 * SETTINGS_PAGE(n), the last two pages of the flash, outside the image
 * (nrf51822.ld). A write erases the page and programs the slot word by word
 * through the NVMC; the CPU halts meanwhile (about 21 ms for the erase and
 * 4 words on real silicon; QEMU's NVMC is instant), so a UART byte arriving
 * then may be lost to an overrun and is counted (rx_overruns): the host's
 * retransmission brings the request again. */
#define SETTINGS_PAGE(n) (0x3F800u + (uint32_t)(n) * NRF51_FLASH_PAGE_BYTES)

static void nvmc_wait(void)
{
    while (NVMC_READY == 0u) {
    }
}

static bool microbit_hal_settings_read(void *ctx, uint32_t slot, uint8_t *buf, size_t len)
{
    const volatile uint8_t *flash;
    size_t i;
    (void)ctx;
    if (slot >= CC_SETTINGS_SLOTS || len > NRF51_FLASH_PAGE_BYTES) {
        return false;
    }
    flash = (const volatile uint8_t *)(uintptr_t)SETTINGS_PAGE(slot);
    for (i = 0; i < len; i++) {
        buf[i] = flash[i];
    }
    return true;
}

static bool microbit_hal_settings_write(void *ctx, uint32_t slot, const uint8_t *buf, size_t len)
{
    volatile uint32_t *flash;
    size_t i;
    (void)ctx;
    if (slot >= CC_SETTINGS_SLOTS || len % 4u != 0u || len > NRF51_FLASH_PAGE_BYTES) {
        return false;
    }
    flash = (volatile uint32_t *)(uintptr_t)SETTINGS_PAGE(slot);
    NVMC_CONFIG = NVMC_CONFIG_EEN;
    nvmc_wait();
    NVMC_ERASEPAGE = SETTINGS_PAGE(slot);
    nvmc_wait();
    NVMC_CONFIG = NVMC_CONFIG_WEN;
    nvmc_wait();
    for (i = 0; i < len; i += 4u) {
        flash[i / 4u] = (uint32_t)buf[i] | ((uint32_t)buf[i + 1u] << 8) | ((uint32_t)buf[i + 2u] << 16)
                        | ((uint32_t)buf[i + 3u] << 24);
        nvmc_wait();
    }
    NVMC_CONFIG = NVMC_CONFIG_REN;
    nvmc_wait();
    for (i = 0; i < len; i++) {   /* read back: a failed program is a failed write */
        if (((const volatile uint8_t *)flash)[i] != buf[i]) {
            return false;
        }
    }
    return true;
}

/* The ADC converts one input at a time: each read_sensors takes the finished
 * conversion and starts the next input's, never waiting (a 10-bit conversion
 * takes 68 us, far less than a sample period). */
static struct {
    bool started;
    uint8_t channel;        /* 0 force, 1 slide */
    uint16_t counts[2];
} g_adc;

static void adc_start(void)
{
    ADC_CONFIG = ADC_CONFIG_10BIT_THIRD_VBG(g_adc.channel == 0u ? AIN_FORCE : AIN_SLIDE);
    ADC_EVENTS_END = 0u;
    ADC_TASKS_START = 1u;
    g_adc.started = true;
}

void microbit_hal_init(void)
{
    GPIO_PIN_CNF(PIN_BUTTON_A) = GPIO_CNF_INPUT_PULLUP;
    GPIO_PIN_CNF(PIN_BUTTON_B) = GPIO_CNF_INPUT_PULLUP;
    GPIO_PIN_CNF(PIN_ACTION) = GPIO_CNF_INPUT_PULLUP;
    /* P2 has the micro:bit's 10 MOhm pull-up for touch sensing; add none. */
    GPIO_PIN_CNF(PIN_TOUCH) = GPIO_CNF_INPUT_NOPULL;
    board_leds_init();
    board_serial_number(port_serial_number);
    ADC_ENABLE = 1u;
    g_adc.channel = 0u;
    adc_start();
}

uint64_t microbit_hal_now_us(void *ctx)
{
    (void)ctx;
    return board_now_us();
}

size_t microbit_hal_uart_read(void *ctx, uint8_t *buf, size_t cap)
{
    (void)ctx;
    return board_uart_read(buf, cap);
}

size_t microbit_hal_uart_write(void *ctx, const uint8_t *buf, size_t len)
{
    (void)ctx;
    return board_uart_write(buf, len);
}

static uint32_t read_buttons(void);

/* The sensors and the buttons in one call (cc_hal.h); no remote. */
void microbit_hal_read_sensors(void *ctx, cc_sensor_reading_t *out)
{
    (void)ctx;
    if (ADC_EVENTS_END != 0u) {
        g_adc.counts[g_adc.channel] = (uint16_t)(ADC_RESULT & 0x3FFu);
        g_adc.channel ^= 1u;
        adc_start();
    } else if (!g_adc.started) {
        adc_start();
    }
    out->force_raw_mn = (int32_t)g_adc.counts[0] * MICROBIT_FORCE_MN_PER_COUNT;
    out->position = g_adc.counts[1];
    out->touched = (GPIO_IN & (1u << PIN_TOUCH)) == 0u;
    out->buttons = read_buttons();
    out->remote_clicks = 0u;
}

static uint32_t read_buttons(void)
{
    uint32_t in = GPIO_IN;
    uint32_t bits = 0u;
    /* active low */
    if ((in & (1u << PIN_BUTTON_A)) == 0u) {
        bits |= CC_BUTTON_VOLUME_DOWN;
    }
    if ((in & (1u << PIN_BUTTON_B)) == 0u) {
        bits |= CC_BUTTON_VOLUME_UP;
    }
    if ((in & (1u << PIN_ACTION)) == 0u) {
        bits |= CC_BUTTON_ACTION;
    }
    return bits;
}

static uint32_t microbit_hal_uart_take_overruns(void *ctx)
{
    (void)ctx;
    return board_uart_take_overruns();
}

void microbit_hal_indicator_set(void *ctx, uint32_t mode, uint32_t rgb)
{
    (void)ctx;
    (void)rgb;
    board_leds_set_indicator(mode);
}

const cc_hal_t microbit_hal = {
    0,
    microbit_hal_now_us,
    microbit_hal_uart_read,
    microbit_hal_uart_write,
    CC_HAL_SENSORS(microbit_hal_read_sensors), /* with the buttons; no remote */
    0,                          /* haptic_play: no actuator (the image's core is built without, Makefile) */
    0,                          /* sound_play: no speaker (the same) */
    CC_HAL_INDICATOR(microbit_hal_indicator_set),
    CC_HAL_OVERRUNS(microbit_hal_uart_take_overruns),
    CC_HAL_STORE(microbit_hal_settings_read, microbit_hal_settings_write), /* the last two flash pages, through the NVMC */
};

const cc_device_info_t microbit_info = CC_BOARD_INFO(port_serial_number);   /* board_info.h */
