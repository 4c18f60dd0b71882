/* STM32F4 port: the HAL of the real board (board_hal.h). */
#include "board_hal.h"

#include "board.h"
#include "stm32f4.h"

#define PIN_FORCE 0u        /* PA0 = A0, ADC1 channel 0 */
#define PIN_SLIDE 1u        /* PA1 = A1, ADC2 channel 1 */
#define PIN_TOUCH 10u       /* PA10 = D2 */
#define PIN_VOLUME_UP 5u    /* PB5 = D4 */
#define PIN_VOLUME_DOWN 4u  /* PB4 = D5 */
#define PIN_ACTION 10u      /* PB10 = D6 */
#define BLINK_HALF_PERIOD_SHIFT 18   /* 2^18 us: 262 ms on, 262 ms off */

char port_serial_number[25];   /* board_info.h */
static uint32_t g_indicator;

/* Each ADC converts one input: each read_sensors takes the finished
 * conversion (EOC) and starts the next, never waiting (12 bits with 480
 * sampling cycles at 21 MHz take 24 us, far less than a sample period).
 * QEMU's ADC never raises EOC, so under QEMU both inputs stay at 0. */
static uint16_t g_counts[2];   /* force, slide */

static void pull_down(uint32_t port, uint32_t pin)
{
    GPIO_MODER(port) &= ~(3u << (2u * pin));   /* input */
    GPIO_PUPDR(port) = (GPIO_PUPDR(port) & ~(3u << (2u * pin))) | (GPIO_PULL_DOWN << (2u * pin));
}

static void adc_init(uint32_t adc, uint32_t channel)
{
    ADC_CR1(adc) = 0u;                                     /* 12 bits, one channel */
    ADC_SMPR2(adc) = ADC_SMP_480_CYCLES << (3u * channel); /* the FSR divider's 10 kOhm */
    ADC_SQR1(adc) = 0u;                                    /* one conversion */
    ADC_SQR3(adc) = channel;
    ADC_CR2(adc) = ADC_CR2_ADON;
    ADC_CR2(adc) = ADC_CR2_ADON | ADC_CR2_SWSTART;
}

static void adc_take(uint32_t adc, uint16_t *counts)
{
    if ((ADC_SR(adc) & ADC_SR_EOC) != 0u) {
        *counts = (uint16_t)(ADC_DR(adc) & 0xFFFu);   /* reading DR clears EOC */
        ADC_CR2(adc) = ADC_CR2_ADON | ADC_CR2_SWSTART;
    }
}

void stm32_hal_init(void)
{
    RCC_APB2ENR |= RCC_APB2ENR_ADC1EN | RCC_APB2ENR_ADC2EN;
    (void)RCC_APB2ENR;   /* the clock reaches the ADCs before their first access (F4 errata) */
    GPIO_MODER(GPIOA_BASE) |= (GPIO_MODE_ANALOG << (2u * PIN_FORCE)) | (GPIO_MODE_ANALOG << (2u * PIN_SLIDE));
    pull_down(GPIOA_BASE, PIN_TOUCH);
    pull_down(GPIOB_BASE, PIN_VOLUME_UP);
    pull_down(GPIOB_BASE, PIN_VOLUME_DOWN);
    pull_down(GPIOB_BASE, PIN_ACTION);
    if (!board_is_emulated()) {
        /* ADC clock: APB2 84 MHz / 4 = 21 MHz (at most 36). QEMU does not model the common register. */
        ADC_CCR = ADC_CCR_ADCPRE_DIV4;
    }
    adc_init(ADC1_BASE, 0u);
    adc_init(ADC2_BASE, 1u);
    board_serial_number(port_serial_number);
    stm32_indicator_set(0u);
}

static uint64_t hal_now_us(void *ctx)
{
    (void)ctx;
    return board_now_us();
}

static size_t hal_uart_read(void *ctx, uint8_t *buf, size_t cap)
{
    (void)ctx;
    return board_uart_read(buf, cap);
}

static size_t hal_uart_write(void *ctx, const uint8_t *buf, size_t len)
{
    (void)ctx;
    return board_uart_write(buf, len);
}

static uint32_t read_buttons(void);

/* The sensors and the buttons in one call (cc_hal.h); no remote. */
static void hal_read_sensors(void *ctx, cc_sensor_reading_t *out)
{
    (void)ctx;
    adc_take(ADC1_BASE, &g_counts[0]);
    adc_take(ADC2_BASE, &g_counts[1]);
    out->force_raw_mn = (int32_t)g_counts[0] * STM32_FORCE_MN_PER_2_COUNTS / 2;
    out->position = g_counts[1];
    out->touched = (GPIO_IDR(GPIOA_BASE) & (1u << PIN_TOUCH)) != 0u;
    out->buttons = read_buttons();
    out->remote_clicks = 0u;
}

static uint32_t read_buttons(void)
{
    uint32_t in = GPIO_IDR(GPIOB_BASE);
    uint32_t bits = 0u;
    /* active high */
    if ((in & (1u << PIN_VOLUME_UP)) != 0u) {
        bits |= CC_BUTTON_VOLUME_UP;
    }
    if ((in & (1u << PIN_VOLUME_DOWN)) != 0u) {
        bits |= CC_BUTTON_VOLUME_DOWN;
    }
    if ((in & (1u << PIN_ACTION)) != 0u) {
        bits |= CC_BUTTON_ACTION;
    }
    return bits;
}

static uint32_t hal_uart_take_overruns(void *ctx)
{
    (void)ctx;
    return board_uart_take_overruns();
}

void stm32_indicator_set(uint32_t mode)
{
    g_indicator = mode;
    board_led(mode == 1u);
}

void stm32_indicator_update(uint64_t now_us)
{
    if (g_indicator == 2u) {
        board_led(((uint32_t)(now_us >> BLINK_HALF_PERIOD_SHIFT) & 1u) == 0u);
    }
}

static void hal_indicator_set(void *ctx, uint32_t mode, uint32_t rgb)
{
    (void)ctx;
    (void)rgb;
    stm32_indicator_set(mode);
}

const cc_hal_t stm32_hal = {
    0,
    hal_now_us,
    hal_uart_read,
    hal_uart_write,
    CC_HAL_SENSORS(hal_read_sensors), /* with the buttons; no remote */
    0,                          /* haptic_play: no actuator (the image's core is built without, Makefile) */
    0,                          /* sound_play: no speaker (the same) */
    CC_HAL_INDICATOR(hal_indicator_set),
    CC_HAL_OVERRUNS(hal_uart_take_overruns),
    CC_HAL_STORE_NONE,          /* settings_read, settings_write: RAM only (no flash driver yet) */
};

const cc_device_info_t stm32_info = CC_BOARD_INFO(port_serial_number);   /* board_info.h */
