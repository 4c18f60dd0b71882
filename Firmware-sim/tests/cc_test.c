/* The test framework's failure reports and its runner (cc_test.h), shared by the unit tests' binary
 * (test_main.c) and the board cores' (tests/board/test_board_core.c). */
#include <stdio.h>

#include "cc_test.h"

static int current_failed;

void cc_test_fail(const char *file, int line, const char *what)
{
    current_failed = 1;
    fprintf(stderr, "  %s:%d: check failed: %s\n", file, line, what);
}

void cc_test_fail_eq(const char *file, int line, const char *a, const char *b,
                     unsigned long long va, unsigned long long vb)
{
    current_failed = 1;
    fprintf(stderr, "  %s:%d: %s == %s failed: %llu (0x%llx) != %llu (0x%llx)\n", file, line, a, b, va, va, vb, vb);
}

void cc_test_run(const char *suite, const cc_test_case_t *cases, size_t count, unsigned *passed, unsigned *failed)
{
    size_t i;
    for (i = 0; i < count; i++) {
        current_failed = 0;
        cases[i].fn();
        if (current_failed) {
            (*failed)++;
            fprintf(stderr, "FAIL %s/%s\n", suite, cases[i].name);
        } else {
            (*passed)++;
        }
    }
}
