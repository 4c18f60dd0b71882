import Testing

@testable import camctl_bench

/// `camctl-bench firmware`'s reading of callgrind output files (`CallgrindCalls`): the instructions per poll
/// of the host build come from the calls each measuring function makes to `cc_device_poll`.
@Suite("camctl-bench: callgrind output")
struct BenchCallgrindTests {
    /// Shaped like what `valgrind --tool=callgrind --compress-strings=no --compress-pos=no` writes for
    /// `cc_host_bench`: the first call of a loop is recorded apart from the others.
    static let uncompressed = """
        # callgrind format
        version: 1
        positions: line
        events: Ir
        summary: 4131914

        fn=bench_idle_ticks
        118 5
        121 1
        cfi=/work/Firmware-sim/core/cc_device.c
        cfn=cc_device_poll
        calls=1 275
        121 131
        121 3999
        cfn=cc_device_poll
        calls=3999 275
        121 523869
        120 8000

        fn=bench_samples_at_rest
        127 5
        cfn=move_finger
        calls=2 109
        131 46
        cfn=cc_device_poll
        calls=4 275
        131 1216
        131 3999

        fn=main
        cfn=bench_idle_ticks
        calls=1 118
        165 544011
        cfn=cc_device_poll
        calls=300 275
        163 90391
        totals: 4131914
        """

    @Test func sumsEveryCallSiteOfTheCalleeByCaller() throws {
        let calls = try CallgrindCalls.parse(Self.uncompressed, callee: "cc_device_poll")
        #expect(calls["bench_idle_ticks"] == CallgrindCalls(calls: 4_000, instructions: 524_000))
        // Calls to other functions, and the caller's own instructions, are not counted.
        #expect(calls["bench_samples_at_rest"] == CallgrindCalls(calls: 4, instructions: 1_216))
        #expect(calls["main"] == CallgrindCalls(calls: 300, instructions: 90_391))
        #expect(calls.count == 3)
    }

    @Test func compressedNamesAndOtherColumns() throws {
        // Names given once with an id, then by the id alone (fn and cfn share the table); two position
        // columns and the instructions as the second event; a trailing zero cost left out.
        let text = """
            positions: instr line
            events: Dr Ir
            fn=(1) bench_samples_pressed
            cfn=(2) cc_device_poll
            calls=10 0x40 275
            0x10 12 3 3360
            fn=(3) main
            cfn=(2)
            calls=1 0x40 275
            0x20 14 7
            fn=(1)
            cfn=(2)
            calls=5 0x40 275
            +4 * 9 1700
            """
        let calls = try CallgrindCalls.parse(text, callee: "cc_device_poll")
        #expect(calls["bench_samples_pressed"] == CallgrindCalls(calls: 15, instructions: 5_060))
        #expect(calls["main"] == CallgrindCalls(calls: 1, instructions: 0))
    }

    @Test func costsBeforeAnIrEventAreRejected() {
        let text = """
            positions: line
            events: Dr
            fn=main
            cfn=cc_device_poll
            calls=1 10
            12 40
            """
        #expect(throws: CallgrindCalls.Malformed.self) { try CallgrindCalls.parse(text, callee: "cc_device_poll") }
    }

    /// `camctl-bench presspath`: one dump a press, written with `--dump-instr=yes`.
    @Test func pressDumpCountsInstructionsLinesAndFunctions() throws {
        // Header lines whose first letter is a hexadecimal digit (cmd, desc, creator) are not positions; a
        // call's line carries the callee's inclusive cost and is not counted again; zero costs run nothing.
        let text = """
            # callgrind format
            version: 1
            creator: callgrind-3.19.0
            cmd:  ./camctl-bench-probe /dev/pts/3 24
            desc: I1 cache:
            positions: instr line
            events: Ir
            summary: 1234

            ob=/usr/lib/libc.so.6
            fn=read
            0x1000 0 4
            0x1004 0 3
            fn=decode
            0x103e 0 2
            0x1040 0 5
            cfn=helper
            calls=1 0x2000 0
            0x1044 0 900
            0x10c0 0 0
            fn=helper
            0x2000 0 6
            """
        let cost = try PressPathBench.parse(text)
        // 4 + 3 + 2 + 5 + 6; the lines 0x1000 (0x1000–0x103f), 0x1040 and 0x2000.
        #expect(cost == PressPathBench.PressCost(instructions: 20, codeLines: 3, functions: 3))
    }

    @Test func pressDumpWithCompressedNamesAndPositions() throws {
        // A name given first on a `cfn=` line, then used by `fn=(id)`; the same name in two objects is two
        // functions.
        let text = """
            positions: instr line
            events: Dr Ir
            ob=(1) /usr/lib/libc.so.6
            fn=(1) read
            0x1000 0 1 4
            cfn=(2) decode
            calls=1 0x1040 0
            +4 * 1 3
            fn=(2)
            +60 * 0 2
            fn=(1)
            -64 * 0 1
            ob=(2) /tmp/probe
            fn=(1)
            0x9000 0 0 5
            """
        // Addresses 0x1000, 0x1004 (the call's line: not counted), 0x1040, 0x1000 again, 0x9000; the second
        // event column is Ir. Functions: read and decode in libc, read in the probe.
        #expect(try PressPathBench.parse(text) == PressPathBench.PressCost(instructions: 12, codeLines: 3, functions: 3))
    }

    @Test func pressDumpWithoutInstructionAddressesIsRejected() {
        let text = """
            positions: line
            events: Ir
            fn=read
            12 40
            """
        #expect(throws: PressPathBench.Malformed.self) { try PressPathBench.parse(text) }
    }
}
