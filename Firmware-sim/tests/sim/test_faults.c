/*
 * camctl-sim's link faults (--faults, sim/faults.c) on scripted bytes: bytes pass
 * as they come unless a fault needs a frame whole (dup, reorder, a baud
 * mismatch); a streamed frame's drop and stall are rolled at its first byte and
 * act on all of it; a frame gathered when a whole-frame fault ends leaves with
 * the next bytes.
 */
#include <stdio.h>

#include "cc_test.h"
#include "faults.h"

enum { TO_HOST = 1 };

/* The faults of `text` from now on, what is in flight kept. */
static void change(const char *text)
{
    ccsim_fault_spec_t spec;
    char msg[160];
    ccsim_fault_spec_init(&spec);
    if (!ccsim_fault_spec_parse(text, &spec, msg, sizeof msg)) {
        cc_test_fail(__FILE__, __LINE__, msg);
        return;
    }
    ccsim_faults_enable(&spec, 1u);
}

/* The faults of `text` from now on, nothing in flight. */
static void use(const char *text)
{
    ccsim_faults_flush();
    change(text);
}

static void feed(const char *bytes, size_t n, uint64_t now_us)
{
    ccsim_faults_feed(TO_HOST, (const uint8_t *)bytes, n, now_us);
}

static size_t take(uint64_t now_us)
{
    uint8_t out[256];
    return ccsim_faults_take(TO_HOST, out, sizeof out, now_us);
}

static void test_byte_faults_pass_bytes_as_they_come(void)
{
    use("corrupt=0.0001%");
    feed("\x01\x02\x03", 3u, 0u);
    CHECK_EQ(take(0u), 3u);
    feed("\x04\x00", 2u, 1000u);
    CHECK_EQ(take(1000u), 2u);
}

static void test_frame_faults_that_need_no_whole_frame_stream(void)
{
    use("drop-frame=0.0001%,garbage=0.0001%:4,stall=0.0001%:10ms");
    feed("\x01\x02\x03", 3u, 0u);
    CHECK_EQ(take(0u), 3u);
    feed("\x04\x00\x05", 3u, 1000u);
    CHECK_EQ(take(1000u), 3u);
}

static void test_a_dropped_frame_goes_whole(void)
{
    use("drop-frame=100%");
    feed("\x01\x02", 2u, 0u);
    CHECK_EQ(take(0u), 0u);
    feed("\x03\x00\x07", 3u, 1000u);
    CHECK_EQ(take(1000u), 0u);
}

static void test_a_stall_stops_the_line_after_the_delimiter(void)
{
    use("stall=100%:10ms");
    feed("\x01\x02", 2u, 0u);
    CHECK_EQ(take(0u), 2u);
    feed("\x03\x00", 2u, 1000u);
    CHECK_EQ(take(1000u), 0u);
    CHECK_EQ(take(10999u), 0u);
    CHECK_EQ(take(11000u), 2u);
}

static void test_dup_and_reorder_wait_for_the_whole_frame(void)
{
    use("dup=100%");
    feed("\x01\x02\x03", 3u, 0u);
    CHECK_EQ(take(0u), 0u);
    feed("\x04\x00", 2u, 1000u);
    CHECK_EQ(take(1000u), 10u);

    use("reorder=100%");
    feed("\x01\x02\x00", 3u, 0u);
    CHECK_EQ(take(0u), 0u);
    CHECK_EQ(take(50000u), 3u);
}

static void test_a_gathered_frame_leaves_when_the_fault_ends(void)
{
    use("dup=100%");
    feed("\x01\x02", 2u, 0u);
    CHECK_EQ(take(0u), 0u);
    change("corrupt=0.0001%"); /* a scenario's `fault SPEC for D` ran out */
    feed("\x03", 1u, 1000u);
    CHECK_EQ(take(1000u), 3u);
}

int main(void)
{
    static const cc_test_case_t cases[] = {
        {"byte_faults_pass_bytes_as_they_come", test_byte_faults_pass_bytes_as_they_come},
        {"frame_faults_that_need_no_whole_frame_stream", test_frame_faults_that_need_no_whole_frame_stream},
        {"a_dropped_frame_goes_whole", test_a_dropped_frame_goes_whole},
        {"a_stall_stops_the_line_after_the_delimiter", test_a_stall_stops_the_line_after_the_delimiter},
        {"dup_and_reorder_wait_for_the_whole_frame", test_dup_and_reorder_wait_for_the_whole_frame},
        {"a_gathered_frame_leaves_when_the_fault_ends", test_a_gathered_frame_leaves_when_the_fault_ends},
    };
    unsigned passed = 0, failed = 0;
    cc_test_run("faults", cases, sizeof cases / sizeof cases[0], &passed, &failed);
    printf("test_faults: %u passed, %u failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}
