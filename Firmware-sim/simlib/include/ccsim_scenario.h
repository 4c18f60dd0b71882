/*
 * CameraControl simulator: scenarios (docs/SIMULATOR.md, "Scenarios").
 *
 * Three parts, each with its own header and source:
 *   ccsim_parser.h   text -> steps, errors with line and column (ccsim_parser.c)
 *   ccsim_planner.h  step -> timed finger/button profile (ccsim_planner.c)
 *   ccsim_player.h   plays the plans in device time (ccsim_player.c)
 * This header includes all three.
 */
#ifndef CCSIM_SCENARIO_H
#define CCSIM_SCENARIO_H

#include "ccsim_parser.h"
#include "ccsim_planner.h"
#include "ccsim_player.h"

#endif /* CCSIM_SCENARIO_H */
