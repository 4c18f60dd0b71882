/*
 * micro:bit image with the simulator's finger model and scenario player as
 * the input source (`camctl-microbit-sim.hex`), for QEMU's `-M microbit`,
 * which has no force sensor. The whole simulated device of camctl-sim
 * (ccsim_device_t: the firmware core, the finger model, the scenario player
 * and SimulatorService) runs on the board in the board's real time; the main
 * loop moves bytes between the UART rings and the simulated device's rings,
 * and shows the indicator on the LED matrix.
 */
#include "board.h"
#include "board_hal.h"
#include "board_leds.h"
#include "ccsim_device.h"

#define SEED 1u
#define MOVE_CHUNK 32u

static ccsim_device_t g_sim;
static char g_serial[17];

/* Mirrors the simulated indicator on the LED matrix. */
static void show_feedback(void)
{
    uint32_t i, count = ccsim_device_feedback_count(&g_sim);
    ccsim_feedback_t f;
    for (i = 0u; i < count; i++) {
        if (ccsim_device_feedback_at(&g_sim, i, &f) && f.kind == CCSIM_FEEDBACK_INDICATOR) {
            board_leds_set_indicator(f.a);
        }
    }
    ccsim_device_feedback_clear(&g_sim);
}

int main(void)
{
    uint8_t chunk[MOVE_CHUNK];

    board_init();
    board_leds_init();
    board_serial_number(g_serial);
    ccsim_device_init(&g_sim, SEED);
    g_sim.info.vendor = "BBC";
    g_sim.info.model = "micro:bit v1 (simulated input)";
    g_sim.info.serial_number = g_serial;
    g_sim.info.firmware_version = "1.0.0-microbit-sim";

    for (;;) {
        uint64_t now, sim_now;
        size_t n;

        /* host -> device: only what the simulated device's ring can take */
        while (board_uart_rx_pending() > 0u && g_sim.rx.len < g_sim.rx.cap) {
            size_t room = g_sim.rx.cap - g_sim.rx.len;
            n = board_uart_read(chunk, room < sizeof chunk ? room : sizeof chunk);
            (void)ccsim_device_host_write(&g_sim, chunk, n);
        }
        /* Bytes the board's UART ring had to drop (the ISR found it full) are the device's overruns too:
         * the simulated device reports them with its own in rx_overruns. */
        g_sim.rx_dropped += board_uart_take_overruns();

        now = board_now_us();
        sim_now = ccsim_device_now_us(&g_sim);
        if (now > sim_now) {
            ccsim_device_advance(&g_sim, now - sim_now);
        } else {
            ccsim_device_poll(&g_sim);
        }

        /* device -> host: only what the UART ring can take */
        while (ccsim_device_host_pending(&g_sim) > 0u && board_uart_tx_room() > 0u) {
            size_t room = board_uart_tx_room();
            n = ccsim_device_host_read(&g_sim, chunk, room < sizeof chunk ? room : sizeof chunk);
            (void)board_uart_write(chunk, n);
        }

        show_feedback();
        board_leds_update(now);
        board_idle();
    }
}
