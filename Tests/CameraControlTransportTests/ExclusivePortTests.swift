import CSystemShim
import CameraControlPosixTransport
import CameraControlSerialTransport
import CameraControlTransport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A pseudo-terminal master opened in-process, with nothing holding its subordinate: a port for tests
/// to open, like a device's.
final class PtyMaster {
    let descriptor: Int32
    /// The subordinate, e.g. `/dev/pts/7`.
    let path: String

    init() throws {
        var master: Int32 = -1
        let status = cc_shim_open_pty_master(&master)
        guard status == 0 else { throw TransportError(code: .openFailed, message: "no pty", errno: status) }
        var name = [CChar](repeating: 0, count: 256)
        let named = cc_shim_pty_subordinate_name(master, &name, name.count)
        guard named == 0 else {
            Glibc.close(master)
            throw TransportError(code: .openFailed, message: "no pty name", errno: named)
        }
        descriptor = master
        path = String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    deinit {
        Glibc.close(descriptor)
    }

    /// Where the standard options put this pty's UUCP lock file.
    var lockFilePath: String {
        let directory = PortLock.Options.standard.lockDirectories.first { directoryExists($0) } ?? "/var/lock"
        return directory + "/" + PortLock.lockFileName(for: path)
    }
}

func directoryExists(_ path: String) -> Bool {
    var isDirectory: ObjCBool = false
    return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory.boolValue
}

func makeTemporaryDirectory() throws -> String {
    let path = NSTemporaryDirectory() + "cc-transport-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}

/// A `/usr/bin/python3 -c script argument` child that prints `ready` once it is set up and then waits for
/// its stdin to close (so it also ends when the test runner dies).
final class Helper {
    let process = Process()
    private let input = Pipe()
    private let output = Pipe()
    /// The child's process id.
    var pid: Int32 { process.processIdentifier }

    /// Starts the child and waits for its `ready` line (giving up after 30 s, or when it exits first).
    init(_ script: String, _ argument: String) throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = ["-c", script, argument]
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let descriptor = output.fileHandleForReading.fileDescriptor
        var line: [UInt8] = []
        var waits = 0
        while line.last != UInt8(ascii: "\n") && waits < 300 {
            var pfd = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&pfd, 1, 100) > 0 else {
                waits += 1
                continue
            }
            var byte: UInt8 = 0
            guard read(descriptor, &byte, 1) == 1 else { break }
            line.append(byte)
        }
        guard line == Array("ready\n".utf8) else {
            stop()
            throw TransportError(code: .io, message: "the helper did not get ready: \(String(decoding: line, as: UTF8.self))")
        }
    }

    deinit {
        stop()
    }

    /// Kills the child (`SIGKILL`) and reaps it; idempotent.
    func stop() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
}

@Suite("Exclusive ports")
struct ExclusivePortTests {
    static let pid = getpid()

    @Test("a second open of the same pty fails at once with .inUse naming this process; close releases the port")
    func secondOpenInProcess() throws {
        let master = try PtyMaster()
        defer { withExtendedLifetime(master) {} }  // the pty lives as long as the test
        let first = try PTYTransport(path: master.path)
        let lockFile = master.lockFilePath
        #expect(FileManager.default.contents(atPath: lockFile) == Data(String(format: "%10d\n", Self.pid).utf8))

        let error = #expect(throws: TransportError.self) { _ = try PTYTransport(path: master.path) }
        #expect(error?.code == .inUse)
        #expect(error?.holderPID == Self.pid)
        #expect(error?.message == "\(master.path) is in use by PID \(Self.pid) (this process)")
        let viaFactory = #expect(throws: TransportError.self) { _ = try Transports.open(path: master.path) }
        #expect(viaFactory?.code == .inUse)

        first.close()
        #expect(!FileManager.default.fileExists(atPath: lockFile))
        let again = try PTYTransport(path: master.path)
        #expect(FileManager.default.fileExists(atPath: lockFile))
        again.close()
        #expect(!FileManager.default.fileExists(atPath: lockFile))
    }

    @Test("two names for one pty collide: a symlink is locked as the /dev/pts/N it points to")
    func symlinkCollides() throws {
        let master = try PtyMaster()
        defer { withExtendedLifetime(master) {} }  // the pty lives as long as the test
        let folder = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let link = folder + "/device"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: master.path)
        let first = try PTYTransport(path: link)
        defer { first.close() }
        let error = #expect(throws: TransportError.self) { _ = try Transports.open(path: master.path) }
        #expect(error?.code == .inUse)
        #expect(error?.holderPID == Self.pid)
        let again = #expect(throws: TransportError.self) { _ = try Transports.open(path: link) }
        #expect(again?.message.hasPrefix("\(link) is in use by PID \(Self.pid)") == true)
    }

    @Test("with no lock directory, flock alone refuses the second open and /proc names the holder")
    func flockOnly() throws {
        let master = try PtyMaster()
        defer { withExtendedLifetime(master) {} }  // the pty lives as long as the test
        let options = PortLock.Options(lockDirectories: ["/nonexistent-camera-control-locks"], processDirectory: "/proc")
        let first = try PTYTransport(path: master.path, baudRate: nil, exclusive: true, lockOptions: options, system: .live)
        let error = #expect(throws: TransportError.self) {
            _ = try PTYTransport(path: master.path, baudRate: nil, exclusive: true, lockOptions: options, system: .live)
        }
        #expect(error?.code == .inUse)
        #expect(error?.holderPID == Self.pid)
        first.close()
        let again = try PTYTransport(path: master.path, baudRate: nil, exclusive: true, lockOptions: options, system: .live)
        again.close()
    }

    @Test("a dead process's lock file (and its abandoned temporary) is replaced; a live one's refuses the open")
    func lockFiles() throws {
        let master = try PtyMaster()
        defer { withExtendedLifetime(master) {} }  // the pty lives as long as the test
        let folder = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let options = PortLock.Options(lockDirectories: [folder], processDirectory: "/proc")
        let lockFile = folder + "/" + PortLock.lockFileName(for: master.path)

        // A process that has exited (and been reaped) is dead.
        let gone = Process()
        gone.executableURL = URL(fileURLWithPath: "/bin/true")
        try gone.run()
        gone.waitUntilExit()
        try Data(PortLock.lockFileContents(pid: gone.processIdentifier)).write(to: URL(fileURLWithPath: lockFile))
        // Its temporary, left when it was killed while making the lock, goes too; a live process's stays.
        let abandoned = lockFile + ".\(gone.processIdentifier).tmp"
        let beingMade = lockFile + ".1.tmp"  // PID 1 is alive
        try Data(PortLock.lockFileContents(pid: gone.processIdentifier)).write(to: URL(fileURLWithPath: abandoned))
        try Data(PortLock.lockFileContents(pid: 1)).write(to: URL(fileURLWithPath: beingMade))
        let opened = try PTYTransport(path: master.path, baudRate: nil, exclusive: true, lockOptions: options, system: .live)
        #expect(FileManager.default.contents(atPath: lockFile) == Data(PortLock.lockFileContents(pid: Self.pid)))
        #expect(!FileManager.default.fileExists(atPath: abandoned))
        #expect(FileManager.default.fileExists(atPath: beingMade))
        try? FileManager.default.removeItem(atPath: beingMade)
        opened.close()
        #expect(!FileManager.default.fileExists(atPath: lockFile))

        // A live process's lock file is respected even though that process never opened the port.
        let helper = try Helper("import sys; print('ready', flush=True); sys.stdin.read()", "-")
        defer { helper.stop() }
        let holder = helper.pid
        try Data(PortLock.lockFileContents(pid: holder)).write(to: URL(fileURLWithPath: lockFile))
        let error = #expect(throws: TransportError.self) {
            _ = try PTYTransport(path: master.path, baudRate: nil, exclusive: true, lockOptions: options, system: .live)
        }
        #expect(error?.code == .inUse)
        #expect(error?.holderPID == holder)
        #expect(error?.message.hasPrefix("\(master.path) is in use by PID \(holder)") == true)
        #expect(FileManager.default.contents(atPath: lockFile) == Data(PortLock.lockFileContents(pid: holder)))
    }

    @Test("another process flocking the pty: the open fails naming its PID; once it is killed the open succeeds")
    func heldByAnotherProcess() throws {
        let master = try PtyMaster()
        defer { withExtendedLifetime(master) {} }  // the pty lives as long as the test
        let script = """
            import fcntl, os, sys
            fd = os.open(sys.argv[1], os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            print('ready', flush=True)
            sys.stdin.read()
            """
        let helper = try Helper(script, master.path)
        defer { helper.stop() }
        let holder = helper.pid
        let error = #expect(throws: TransportError.self) { _ = try Transports.open(path: master.path) }
        #expect(error?.code == .inUse)
        #expect(error?.holderPID == holder)
        #expect(error?.message.hasPrefix("\(master.path) is in use by PID \(holder)") == true)
        #expect(!FileManager.default.fileExists(atPath: master.lockFilePath))  // our failed attempt left none

        helper.stop()  // the kernel drops its flock with the process
        let opened = try Transports.open(path: master.path)
        opened.close()
    }

    @Test("UUCP lock file names and contents")
    func lockFileFormat() {
        #expect(PortLock.lockFileName(for: "/dev/ttyACM0") == "LCK..ttyACM0")
        #expect(PortLock.lockFileName(for: "/dev/pts/3") == "LCK..pts_3")
        #expect(PortLock.lockFileContents(pid: 42) == Array("        42\n".utf8))
        #expect(PortLock.lockFileContents(pid: 1_234_567_890) == Array("1234567890\n".utf8))
        #expect(PortLock.pid(in: Array("     4711\n".utf8)) == 4711)
        #expect(PortLock.pid(in: Array("garbage".utf8)) == nil)
    }
}

@Suite("A PORT that is not a device")
struct NotADeviceTests {
    @Test("a regular file is reported as one")
    func regularFile() throws {
        let folder = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/capture.log"
        #expect(FileManager.default.createFile(atPath: path, contents: Data([1, 2, 3])))
        let error = #expect(throws: TransportError.self) { _ = try Transports.open(path: path) }
        #expect(error?.code == .notATerminal)
        #expect(error?.message == "\(path) is a regular file, not a serial port or pseudo-terminal")
    }

    @Test("a directory is reported as one")
    func directory() throws {
        let folder = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let error = #expect(throws: TransportError.self) { _ = try Transports.open(path: folder) }
        #expect(error?.code == .notATerminal)
        #expect(error?.message == "\(folder) is a directory, not a serial port or pseudo-terminal")
    }

    @Test("a missing path is .notFound: no such file")
    func missing() throws {
        let folder = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/ttyACM9"
        let error = #expect(throws: TransportError.self) { _ = try Transports.open(path: path) }
        #expect(error?.code == .notFound)
        #expect(error?.message == "no such file \(path)")
    }

    @Test("a symlink whose pty is gone names the missing target")
    func danglingLink() throws {
        let folder = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let link = folder + "/device"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: "/dev/pts/camera-control-gone")
        let error = #expect(throws: TransportError.self) { _ = try Transports.open(path: link) }
        #expect(error?.code == .notFound)
        #expect(error?.message == "no such file /dev/pts/camera-control-gone (\(link) points there)")
    }
}
