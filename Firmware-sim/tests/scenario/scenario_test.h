/*
 * The scenario tests' checks (tests/scenario/): the parser, the planner and
 * the player of simlib, each tested alone (no device, no HAL). main.c runs them.
 */
#ifndef SCENARIO_TEST_H
#define SCENARIO_TEST_H

#include <stdio.h>

extern int scenario_test_failures;

#define CHECK(cond) do { if (!(cond)) { scenario_test_failures++; \
    fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); } } while (0)
#define CHECK_EQ(a, b) do { unsigned long long va_ = (unsigned long long)(a); \
    unsigned long long vb_ = (unsigned long long)(b); if (va_ != vb_) { scenario_test_failures++; \
    fprintf(stderr, "%s:%d: CHECK_EQ failed: %s == %s (%llu != %llu)\n", __FILE__, __LINE__, #a, #b, \
            va_, vb_); } } while (0)

/* Each returns the number of tests it ran. */
unsigned test_parser_run(void);
unsigned test_planner_run(void);
unsigned test_player_run(void);

#endif /* SCENARIO_TEST_H */
