/*
 * A very small C test framework for the firmware core's unit tests.
 * Each test file exports a table of cases; test_main.c runs them all and
 * prints "N passed, M failed" last.
 */
#ifndef CC_TEST_H
#define CC_TEST_H

#include <stddef.h>

typedef struct cc_test_case {
    const char *name;
    void (*fn)(void);
} cc_test_case_t;

/* Runs `count` cases, counting each in *passed or *failed; a failed case is named "FAIL suite/name"
 * on stderr after its checks' reports. */
void cc_test_run(const char *suite, const cc_test_case_t *cases, size_t count, unsigned *passed, unsigned *failed);

void cc_test_fail(const char *file, int line, const char *what);
void cc_test_fail_eq(const char *file, int line, const char *a, const char *b,
                     unsigned long long va, unsigned long long vb);

#define CHECK(cond) do { if (!(cond)) { cc_test_fail(__FILE__, __LINE__, #cond); } } while (0)
#define CHECK_EQ(a, b) do { unsigned long long cc_va_ = (unsigned long long)(a); \
    unsigned long long cc_vb_ = (unsigned long long)(b); \
    if (cc_va_ != cc_vb_) { cc_test_fail_eq(__FILE__, __LINE__, #a, #b, cc_va_, cc_vb_); } } while (0)
/* Stops the current test when cond is false (to avoid using NULL results). */
#define REQUIRE(cond) do { if (!(cond)) { cc_test_fail(__FILE__, __LINE__, #cond); return; } } while (0)

#define CC_TEST_TABLE(name) \
    extern const cc_test_case_t name[]; \
    extern const size_t name##_count

CC_TEST_TABLE(cc_tests_wire);
CC_TEST_TABLE(cc_tests_frame);
CC_TEST_TABLE(cc_tests_rpc);
CC_TEST_TABLE(cc_tests_link);
CC_TEST_TABLE(cc_tests_services);
CC_TEST_TABLE(cc_tests_vectors);
CC_TEST_TABLE(cc_tests_v11);
CC_TEST_TABLE(cc_tests_settings);
CC_TEST_TABLE(cc_tests_udiv);
CC_TEST_TABLE(cc_tests_port_mem);
CC_TEST_TABLE(cc_tests_utf8);

#define CC_TEST_COUNT(table) (sizeof(table) / sizeof((table)[0]))

#endif /* CC_TEST_H */
