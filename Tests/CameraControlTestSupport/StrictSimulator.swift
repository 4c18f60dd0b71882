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

    /// Starts `camctl-sim --strict` with `arguments` and waits (up to 10 s) for its pty; when it cannot be
    /// started, the folder is removed and the error thrown.
    package init(arguments: [String] = [], sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let folder = try makeTemporaryFolder()
        let link = folder + "/pty"
        let log = folder + "/stderr"
        let process = Process()
        do {
            _ = FileManager.default.createFile(atPath: log, contents: nil)
            process.executableURL = URL(fileURLWithPath: try BuiltProducts.executable("camctl-sim"))
            process.arguments = ["--strict", "--exit-with-parent", "--link", link] + arguments
            process.standardOutput = FileHandle.nullDevice
            process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
            try process.run()
        } catch {
            try? FileManager.default.removeItem(atPath: folder)
            throw error
        }
        (self.folder, self.link, self.log, self.process) = (folder, link, log, process)
        #expect(
            await eventually(within: .seconds(10)) { FileManager.default.fileExists(atPath: link) },
            "camctl-sim --strict made no pty within 10 s", sourceLocation: sourceLocation)
    }

    deinit {
        if process.isRunning { signalProcess(process.processIdentifier, SIGKILL) }
    }

    /// Stops the simulator (`SIGTERM`: it prints the checker's report and exits) and returns its stderr.
    /// An expectation fails when it does not end within 10 s.
    package func report(sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        #expect(
            terminateChild(process), "camctl-sim --strict did not end within 10 s of SIGTERM", sourceLocation: sourceLocation)
        return try String(contentsOfFile: log, encoding: .utf8)
    }
}
