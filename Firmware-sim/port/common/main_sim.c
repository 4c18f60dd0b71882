/*
 * Every board's image with the simulator's finger model and scenario player as
 * the input source (`camctl-microbit-sim.hex`, `camctl-stm32-sim.hex`), for
 * QEMU (`-M microbit`, `-M netduinoplus2`), which models no force sensor. The
 * whole simulated device of camctl-sim
 * (ccsim_device_t: the firmware core, the finger model, the scenario player
 * and SimulatorService) runs on the board in the board's real time; the main
 * loop moves bytes between the UART rings and the simulated device's rings,
 * and shows the indicator on the board (port_glue.h: the port's part).
 */
#include "board.h"
#include "ccsim_device.h"
#include "port_glue.h"

#define SEED 1u
#define MOVE_CHUNK 32u

static ccsim_device_t g_sim;

/* Mirrors the simulated indicator on the board. */
static void show_feedback(void)
{
    uint32_t i, count = ccsim_device_feedback_count(&g_sim);
    ccsim_feedback_t f;
    for (i = 0u; i < count; i++) {
        if (ccsim_device_feedback_at(&g_sim, i, &f) && f.kind == CCSIM_FEEDBACK_INDICATOR) {
            port_sim_indicator(f.a);
        }
    }
    ccsim_device_feedback_clear(&g_sim);
}

int main(void)
{
    uint8_t chunk[MOVE_CHUNK];

    board_init();
    ccsim_device_init(&g_sim, SEED);
    port_sim_init(&g_sim.info);

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
        port_sim_update(now);
        board_idle();
    }
}
