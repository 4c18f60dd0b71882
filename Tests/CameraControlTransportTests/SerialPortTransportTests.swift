import CameraControlPosixTransport
import CameraControlSerialTransport
import CameraControlTransport
import Testing

@Suite("Serial port transport")
struct SerialPortTransportTests {
    @Test("listing serial ports works and every entry has a name")
    func listing() throws {
        let ports = try SerialPorts.list()
        // No port is assumed to exist; whatever is listed must be usable as a name and sorted.
        for port in ports {
            #expect(!port.name.isEmpty)
            #expect(!Transports.isPseudoTerminal(path: port.name))
            if port.attachment != .usb {
                #expect(port.usbVendorID == nil)
            }
        }
        #expect(ports.map(\.name) == ports.map(\.name).sorted())
    }

    @Test("opening a serial port that does not exist throws a typed .notFound error")
    func missingPort() {
        #expect {
            _ = try SerialPortTransport(portName: "/dev/ttyACM-camera-control-missing")
        } throws: { error in
            guard let error = error as? TransportError else { return false }
            return error.code == .notFound && error.description.contains("ttyACM-camera-control-missing")
        }
    }

    @Test("the factory reports a missing serial path as .notFound")
    func factoryMissingPort() {
        #expect {
            _ = try Transports.open(path: "/dev/ttyUSB-camera-control-missing")
        } throws: { error in
            (error as? TransportError)?.code == .notFound
        }
    }

    @Test("an invalid baud rate is a configuration error, not a crash", arguments: [0, -1])
    func invalidBaudRate(_ baudRate: Int) {
        #expect {
            _ = try SerialPortTransport(portName: "/dev/ttyS0", baudRate: baudRate)
        } throws: { error in
            (error as? TransportError)?.code == .configurationFailed
        }
    }
}
