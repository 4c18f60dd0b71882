/*
 * What a port gives the images common to every board (common/main_sim.c, the
 * simulator image; common/bench.c, the benchmark image) besides the board.h
 * calls every port has under the same names (board_init, board_now_us,
 * board_uart_read/write/rx_pending/tx_room/take_overruns/write_blocking,
 * board_idle). Each port defines these in its glue.c.
 */
#ifndef PORT_GLUE_H
#define PORT_GLUE_H

#include <stdint.h>

#include "cc_device_info.h"

/* After board_init: the board's indicator output, and the simulated device's
 * identity (vendor, model "... (simulated input)", serial number, version). */
void port_sim_init(cc_device_info_t *info);
/* Shows the simulated indicator (cameracontrol.v1.IndicatorMode) on the board. */
void port_sim_indicator(uint32_t mode);
/* Runs the indicator's blinking; called from the main loop with the time. */
void port_sim_update(uint64_t now_us);

/* A free-running count for measurements (wraps at 32 bits). */
uint32_t port_bench_ticks(void);
/* ticks of port_bench_ticks over polls calls, as instructions x10 per call
 * under QEMU's -icount shift=0 (one instruction per nanosecond). */
uint32_t port_bench_tenths(uint32_t ticks, uint32_t polls);
/* What the benchmark's device announces (the board image's own). */
const cc_device_info_t *port_bench_info(void);

#endif /* PORT_GLUE_H */
