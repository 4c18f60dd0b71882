import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `camctl-sim --strict` (the simulator's host checker) on a pty of its own in a scratch folder, its
/// stderr, where the checker reports, kept in a file there. The caller removes ``folder`` when done with
/// what it wrote into it.
package final class StrictSimulator {
    /// The scratch folder: the pty's link and the simulator's stderr are in it.
    package let folder: String
    /// The pty's path, for the host under test.
    package let link: String
    private let log: String
    private let process: Process

    /// Starts `camctl-sim --strict` with `arguments` and waits (up to 10 s) for its pty.
    package init(arguments: [String] = []) async throws {
        folder = try makeTemporaryFolder()
        link = folder + "/pty"
        log = folder + "/stderr"
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        process = Process()
        process.executableURL = URL(fileURLWithPath: try BuiltProducts.executable("camctl-sim"))
        process.arguments = ["--strict", "--exit-with-parent", "--link", link] + arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
        try process.run()
        #expect(await eventually(within: .seconds(10)) { FileManager.default.fileExists(atPath: link) })
    }

    deinit {
        if process.isRunning { signalProcess(process.processIdentifier, SIGKILL) }
    }

    /// Stops the simulator (`SIGTERM`: it prints the checker's report and exits) and returns its stderr.
    /// An expectation fails when it does not end within 10 s.
    package func report() throws -> String {
        #expect(terminateChild(process), "camctl-sim --strict did not end within 10 s of SIGTERM")
        return try String(contentsOfFile: log, encoding: .utf8)
    }
}
