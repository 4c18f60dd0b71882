/* Runs every C unit test of the firmware core; the last line is "N passed, M failed". */
#include <stdio.h>

#include "cc_test.h"

typedef struct suite {
    const char *name;
    const cc_test_case_t *cases;
    const size_t *count;
} suite_t;

int main(void)
{
    static const suite_t suites[] = {
        {"wire", cc_tests_wire, &cc_tests_wire_count},
        {"frame", cc_tests_frame, &cc_tests_frame_count},
        {"rpc", cc_tests_rpc, &cc_tests_rpc_count},
        {"link", cc_tests_link, &cc_tests_link_count},
        {"services", cc_tests_services, &cc_tests_services_count},
        {"vectors", cc_tests_vectors, &cc_tests_vectors_count},
        {"v11", cc_tests_v11, &cc_tests_v11_count},
        {"settings", cc_tests_settings, &cc_tests_settings_count},
        {"udiv", cc_tests_udiv, &cc_tests_udiv_count},
        {"port_mem", cc_tests_port_mem, &cc_tests_port_mem_count},
        {"utf8", cc_tests_utf8, &cc_tests_utf8_count},
    };
    unsigned passed = 0;
    unsigned failed = 0;
    size_t s;

    for (s = 0; s < sizeof suites / sizeof suites[0]; s++) {
        cc_test_run(suites[s].name, suites[s].cases, *suites[s].count, &passed, &failed);
    }
    printf("%u passed, %u failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}
