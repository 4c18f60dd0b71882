import CLibSerialPort
import CameraControlPosixTransport
import CameraControlTransport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A transport over a real serial port (USB CDC-ACM `/dev/ttyACM*`, USB-serial `/dev/ttyUSB*`, a UART,
/// macOS `/dev/cu.*`), opened and configured with libserialport.
///
/// The port runs at the given baud rate, 8 data bits, no parity, 1 stop bit, no flow control. Reading
/// and writing use the port's descriptor with the same poll-based engine as ``PTYTransport``, so closing
/// is prompt and unplugging the device ends ``receive()`` with ``TransportError/Code/closed`` (or
/// ``TransportError/Code/io``, depending on what the driver reports).
///
/// libserialport cannot open pseudo-terminals (it looks ports up in `/sys/class/tty`); use
/// ``PTYTransport`` or ``Transports/open(path:baudRate:)`` for those.
public final class SerialPortTransport: EventLoopTransport {
    /// The default rate: 115200 baud.
    public static let defaultBaudRate = 115_200

    /// The port's name as given to ``init(portName:baudRate:exclusive:)``.
    public let portName: String
    /// The configured baud rate.
    public let baudRate: Int
    /// Same as ``portName``.
    public var name: String { portName }
    private let link: FileDescriptorLink

    /// Opens the serial port `portName` (e.g. `/dev/ttyACM0`), claims it, and configures it at `baudRate`,
    /// 8N1, no flow control.
    ///
    /// With `exclusive` (the default) the port is claimed before it is configured: a UUCP lock file,
    /// `flock` and `TIOCEXCL` (as ``PTYTransport/init(path:baudRate:exclusive:)`` does), so a second open
    /// fails with ``TransportError/Code/inUse`` naming the holder's PID where that can be known. The claim
    /// ends with ``close()`` (or with the process).
    ///
    /// - Throws: ``TransportError/Code/notFound`` when libserialport knows no such port,
    ///   ``TransportError/Code/inUse`` when another transport or program holds it,
    ///   ``TransportError/Code/openFailed`` when it cannot be opened (permissions, ...),
    ///   ``TransportError/Code/configurationFailed`` when the settings are refused.
    public init(
        portName: String, baudRate: Int = SerialPortTransport.defaultBaudRate, exclusive: Bool = true
    )
        throws(TransportError)
    {
        guard baudRate > 0, baudRate <= Int(Int32.max) else {
            throw TransportError(code: .configurationFailed, message: "invalid baud rate \(baudRate) for \(portName)")
        }
        let system = SystemCalls.live
        let devicePath = system.realpath(portName) ?? portName
        var found: OpaquePointer?
        let lookup = sp_get_port_by_name(portName, &found)
        guard lookup == SP_OK, let port = found else {
            throw TransportError(
                code: .notFound,
                message: "no serial port named \(portName) (\(SerialPortTransport.lastError(lookup)))",
                errno: SerialPortTransport.lastErrno(lookup)
            )
        }
        if exclusive {
            do {
                try PortLock.checkLockFile(devicePath: devicePath, portName: portName)
            } catch {
                sp_free_port(port)
                throw error
            }
        }
        let opened = sp_open(port, SP_MODE_READ_WRITE)
        guard opened == SP_OK else {
            let errorNumber = SerialPortTransport.lastErrno(opened)
            let detail = SerialPortTransport.lastError(opened)
            sp_free_port(port)
            if errorNumber == EBUSY {
                throw PortLock.busyError(devicePath: devicePath, portName: portName)
            }
            // With an errno the error prints its text once; libserialport's own message only when there is none.
            let message = "cannot open serial port \(portName)" + (errorNumber == nil ? " (\(detail))" : "")
            throw TransportError(code: .openFailed, message: message, errno: errorNumber)
        }
        var descriptor: Int32 = -1
        let handle = sp_get_port_handle(port, &descriptor)
        if handle != SP_OK || descriptor < 0 {
            let error = TransportError(
                code: .openFailed,
                message: "cannot get the descriptor of \(portName) (\(SerialPortTransport.lastError(handle)))",
                errno: SerialPortTransport.lastErrno(handle))
            sp_close(port)
            sp_free_port(port)
            throw error
        }
        var lock: PortLock?
        if exclusive {
            do {
                lock = try PortLock.acquire(descriptor: descriptor, devicePath: devicePath, portName: portName)
            } catch {
                sp_close(port)
                sp_free_port(port)
                throw error
            }
        }
        func fail(_ what: String, _ result: sp_return) -> TransportError {
            let error = TransportError(
                code: .configurationFailed,
                message: "cannot set \(what) on \(portName) (\(SerialPortTransport.lastError(result)))",
                errno: SerialPortTransport.lastErrno(result)
            )
            lock?.release()
            sp_close(port)
            sp_free_port(port)
            return error
        }
        var result = sp_set_baudrate(port, Int32(baudRate))
        if result != SP_OK { throw fail("baud rate \(baudRate)", result) }
        result = sp_set_bits(port, 8)
        if result != SP_OK { throw fail("8 data bits", result) }
        result = sp_set_parity(port, SP_PARITY_NONE)
        if result != SP_OK { throw fail("no parity", result) }
        result = sp_set_stopbits(port, 1)
        if result != SP_OK { throw fail("1 stop bit", result) }
        result = sp_set_flowcontrol(port, SP_FLOWCONTROL_NONE)
        if result != SP_OK { throw fail("no flow control", result) }
        if case .failure(let error) = system.setNonblocking(descriptor) {
            lock?.release()
            sp_close(port)
            sp_free_port(port)
            throw TransportError(code: .configurationFailed, message: "cannot make \(portName) non-blocking", errno: error.rawValue)
        }
        self.portName = portName
        self.baudRate = baudRate
        let portHandle = SerialPortHandle(port: port)
        let claim = lock
        self.link = FileDescriptorLink(
            descriptor: descriptor, name: portName, system: system, onClose: { claim?.release() }
        ) { _ in
            sp_close(portHandle.port)
            sp_free_port(portHandle.port)
        }
    }

    deinit {
        link.close()
    }

    /// Hands `bytes` to the port's loop (see ``ByteTransport/send(_:)``).
    ///
    /// - Throws: ``TransportError/Code/closed`` after ``close()`` or when the device is gone,
    ///   ``TransportError/Code/io`` when the write fails.
    public func send(_ bytes: [UInt8]) async throws(TransportError) {
        try await link.send(bytes)
    }

    /// The next received bytes (see ``ByteTransport/receive()``).
    ///
    /// - Throws: ``TransportError/Code/closed`` at the end, ``TransportError/Code/io``,
    ///   ``TransportError/Code/cancelled``, ``TransportError/Code/concurrentReceive``.
    public func receive() async throws(TransportError) -> [UInt8] {
        try await link.receive()
    }

    /// Runs the port on an event loop for `delegate` (see ``EventLoopTransport/startEventLoop(delegate:on:)``):
    /// the loop's thread (`loop`'s, a ``PollEventLoop`` shared with other links and with actors, or one of the
    /// port's own) hands each read to the delegate in place and sleeps in `poll()` until the next byte or
    /// the delegate's timer.
    ///
    /// - Returns: nil after ``receive()`` or ``send(_:)`` was called, a loop was started already, or the port is closed.
    public func startEventLoop(delegate: any EventLoopDelegate, on loop: (any EventLoop)?) -> (any EventLoopControl)? {
        link.startEventLoop(delegate: delegate, on: loop)
    }

    /// Ends the port's loop and closes the port.
    public func close() {
        link.close()
    }

    static func lastError(_ result: sp_return) -> String {
        switch result {
        case SP_ERR_ARG: return "invalid argument"
        case SP_ERR_MEM: return "out of memory"
        case SP_ERR_SUPP: return "not supported"
        case SP_ERR_FAIL:
            guard let text = sp_last_error_message() else { return "failed" }
            defer { sp_free_error_message(text) }
            return String(cString: text)
        default: return "error \(result.rawValue)"
        }
    }

    static func lastErrno(_ result: sp_return) -> Int32? {
        result == SP_ERR_FAIL ? sp_last_error_code() : nil
    }
}

/// The libserialport port, passed to the release closure (used once the link's loop has let it go).
private final class SerialPortHandle: @unchecked Sendable {
    let port: OpaquePointer
    init(port: OpaquePointer) { self.port = port }
}

/// What libserialport knows about one serial port.
public struct SerialPortInfo: Hashable, Sendable, CustomStringConvertible {
    /// How the port is attached.
    public enum Attachment: String, Hashable, Sendable {
        /// A native port (a UART of the machine).
        case native
        /// A USB device (CDC-ACM or a USB-serial adapter).
        case usb
        /// A Bluetooth serial port.
        case bluetooth
        /// Unknown to libserialport.
        case unknown
    }

    /// The name to open, e.g. `/dev/ttyACM0`.
    public var name: String
    /// libserialport's human-readable description.
    public var description: String
    /// How the port is attached.
    public var attachment: Attachment
    /// The USB vendor id, for USB ports that report one.
    public var usbVendorID: UInt16?
    /// The USB product id, for USB ports that report one.
    public var usbProductID: UInt16?
    /// The USB serial number string, when reported.
    public var usbSerialNumber: String?
    /// The USB manufacturer string, when reported.
    public var usbManufacturer: String?
    /// The USB product string, when reported.
    public var usbProduct: String?

    /// A port description; normally produced by ``SerialPorts/list()``.
    public init(
        name: String,
        description: String,
        attachment: Attachment,
        usbVendorID: UInt16? = nil,
        usbProductID: UInt16? = nil,
        usbSerialNumber: String? = nil,
        usbManufacturer: String? = nil,
        usbProduct: String? = nil
    ) {
        self.name = name
        self.description = description
        self.attachment = attachment
        self.usbVendorID = usbVendorID
        self.usbProductID = usbProductID
        self.usbSerialNumber = usbSerialNumber
        self.usbManufacturer = usbManufacturer
        self.usbProduct = usbProduct
    }
}

/// Enumerates the machine's serial ports with libserialport.
public enum SerialPorts {
    /// The serial ports libserialport finds, sorted by name (possibly none). Pseudo-terminals are not listed.
    ///
    /// - Throws: ``TransportError/Code/io`` when enumeration fails.
    public static func list() throws(TransportError) -> [SerialPortInfo] {
        var listPointer: UnsafeMutablePointer<OpaquePointer?>?
        let result = sp_list_ports(&listPointer)
        guard result == SP_OK, let list = listPointer else {
            throw TransportError(
                code: .io,
                message: "cannot list serial ports (\(SerialPortTransport.lastError(result)))",
                errno: SerialPortTransport.lastErrno(result)
            )
        }
        defer { sp_free_port_list(list) }
        var ports: [SerialPortInfo] = []
        var index = 0
        while let port = list[index] {
            index += 1
            ports.append(info(for: port))
        }
        return ports.sorted { $0.name < $1.name }
    }

    private static func string(_ pointer: UnsafeMutablePointer<CChar>?) -> String? {
        pointer.map { String(cString: $0) }
    }

    private static func info(for port: OpaquePointer) -> SerialPortInfo {
        let name = string(sp_get_port_name(port)) ?? ""
        let description = string(sp_get_port_description(port)) ?? name
        var info = SerialPortInfo(name: name, description: description, attachment: .unknown)
        switch sp_get_port_transport(port) {
        case SP_TRANSPORT_NATIVE: info.attachment = .native
        case SP_TRANSPORT_USB: info.attachment = .usb
        case SP_TRANSPORT_BLUETOOTH: info.attachment = .bluetooth
        default: info.attachment = .unknown
        }
        if info.attachment == .usb {
            var vendor: Int32 = -1
            var product: Int32 = -1
            if sp_get_port_usb_vid_pid(port, &vendor, &product) == SP_OK {
                if (0...0xFFFF).contains(vendor) { info.usbVendorID = UInt16(vendor) }
                if (0...0xFFFF).contains(product) { info.usbProductID = UInt16(product) }
            }
            info.usbSerialNumber = string(sp_get_port_usb_serial(port))
            info.usbManufacturer = string(sp_get_port_usb_manufacturer(port))
            info.usbProduct = string(sp_get_port_usb_product(port))
        }
        return info
    }
}
