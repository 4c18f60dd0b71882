import CameraControlPosixTransport
import CameraControlSerialTransport
import CameraControlTestSupport
import CameraControlTransport
import Foundation
import Testing

// Linux only: devpts makes a pty's node anew with each pty, so the pty that takes a number is told apart
// from the one before (st_ctim is Linux's name, too).
#if os(Linux)
    /// A host reconnecting to a pseudo-terminal must never open another program's: once a pty closes, its number
    /// goes to the next pty opened (here, one of the test's own), and opening it claims it (lock file, `flock`,
    /// exclusive mode) from the program it belongs to.
    @Suite("Port reopener")
    struct PortReopenerTests {
        /// Opens a pty pair and waits a little over a kernel clock tick (10 ms at HZ=100, the coarsest), so a pty
        /// made after it has a later node change time whatever the machine's load (a wait that only gets longer).
        static func openPair() async throws -> PseudoTerminalPair {
            let pair = try PseudoTerminalPair.open()
            try await Task.sleep(for: .milliseconds(20))
            return pair
        }

        /// Closes `pair` and opens ptys (kept in the returned list, to be closed by the caller) until `path`, its
        /// number, names a pty again: one of those, or another program's.
        static func takeNumber(of pair: PseudoTerminalPair) throws -> [PseudoTerminalPair] {
            let path = pair.subordinatePath
            var status = stat()
            #expect(stat(path, &status) == 0)
            let old = status.st_ctim
            pair.master.close()
            pair.subordinate.close()
            var taken: [PseudoTerminalPair] = []
            // Lowest number first: the freed one comes back within as many ptys as are open above it, once both
            // sides of the old one are closed (the link's descriptor is released off the caller's thread).
            for _ in 0..<4096 {
                if stat(path, &status) == 0, status.st_ctim.tv_sec != old.tv_sec || status.st_ctim.tv_nsec != old.tv_nsec {
                    return taken
                }
                taken.append(try PseudoTerminalPair.open())
                if taken.count > 32 {
                    // Not on the number (that one ends the loop): bounded, whatever the wait for the old pty.
                    let extra = taken.removeFirst()
                    extra.master.close()
                    extra.subordinate.close()
                }
            }
            Issue.record("no pty took \(path) again")
            return taken
        }

        static func close(_ pairs: [PseudoTerminalPair]) {
            for pair in pairs {
                pair.master.close()
                pair.subordinate.close()
            }
        }

        @Test(
            "a pty named by its path opens again while it lives, and once it closed is gone for good: its number, another pty's now, is not opened"
        )
        func ptyByItsPath() async throws {
            let first = try await Self.openPair()
            let reopener = PortReopener(path: first.subordinatePath)
            try reopener.open().close()
            // A session lost while the pty lives on (a heartbeat timeout): the same pty opens again.
            try reopener.open().close()

            let taken = try Self.takeNumber(of: first)
            defer { Self.close(taken) }
            do {
                try reopener.open().close()
                Issue.record("\(first.subordinatePath) was opened again: another pty's now")
            } catch {
                #expect(error.code == .gone, "\(error)")
                #expect(error.message.contains("never comes back"), "\(error)")
            }
        }

        @Test(
            "a symlink left behind to a pty that closed is not followed to the pty on its number; made again, even to the same number, it opens"
        )
        func symlinkLeftBehind() async throws {
            let folder = try makeTemporaryFolder()
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let link = folder + "/camera-control"
            let first = try await Self.openPair()
            let number = first.subordinatePath
            try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: number)
            let reopener = PortReopener(path: link)
            try reopener.open().close()
            try reopener.open().close()

            // The simulator was killed: its link stays, and the pty's number goes to the next pty.
            let taken = try Self.takeNumber(of: first)
            defer { Self.close(taken) }
            do {
                try reopener.open().close()
                Issue.record("\(link) was followed to the pty that took \(number)")
            } catch {
                #expect(error.code == .notFound, "\(error)")  // not for good: a new link may come
                #expect(error.message.contains("still points at \(number)"), "\(error)")
            }

            // A simulator started again makes its link anew: to the same number when that pty is its own.
            let own = try taken.first { $0.subordinatePath == number } ?? PseudoTerminalPair.open()
            defer { Self.close([own]) }
            try FileManager.default.removeItem(atPath: link)
            try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: own.subordinatePath)
            try reopener.open().close()
        }
    }
#endif
