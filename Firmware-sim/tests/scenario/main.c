/* Runs the scenario parser, planner and player tests; prints "scenario: N tests, M failed checks". */
#include "scenario_test.h"

int scenario_test_failures;

int main(void)
{
    unsigned tests = test_parser_run();
    tests += test_planner_run();
    tests += test_player_run();
    printf("scenario: %u tests, %d failed checks\n", tests, scenario_test_failures);
    return scenario_test_failures == 0 ? 0 : 1;
}
