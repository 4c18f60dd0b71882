import CSystemShim
import CameraControlDevice
import CameraControlTransport
import CameraControlWire
import Foundation

/// `camctl`: the CameraControl command-line tool.
@main
struct CamCtl {
    static let usage = """
        usage: camctl <command> [arguments]

        commands:
          demo [--scenario FILE] [--seed N] [--verbose] [--quiet]
                              start the simulator, connect over its pty, play a scenario that exercises
                              every gesture, input source and control, and print what happens
          info PORT           handshake and print identity, protocol version and capabilities
          monitor PORT [--seconds N] [--no-reconnect]
                              print input events, gestures and capture events as they arrive;
                              after an unplug, wait for the device to come back
          ping PORT [--count N]
                              round trips to the device
          counters PORT [--reset]
                              the device's link and call counters
          call PORT METHOD [FIELD=VALUE ...]
                              call a unary method, e.g. `call P DeviceService/Ping`,
                              `call P FeedbackService/PlayHaptic pattern=detent`
          scenario PORT FILE  play a scenario on a simulator (docs/SIMULATOR.md)
          ports               list serial ports (USB ids where known)
          relay A B [--faults SPEC] [--link PATH] [--seconds N] [--quiet]
                              carry bytes between host side A (a port, or `pty`: a new pty) and device
                              side B, injecting faults (docs/RELIABILITY.md) and logging each on stderr
          help                this text

        PORT is a serial port (/dev/ttyACM0, /dev/cu.usbmodem…), a pseudo-terminal or a symlink to one
        (camctl-sim --link PATH).
        """

    static func main() async {
        cc_shim_line_buffer_stdout()  // a pipe (`camctl demo | tee log`) sees each line as it happens
        var argv = Array(CommandLine.arguments.dropFirst())
        guard !argv.isEmpty else {
            print(usage)
            exit(2)
        }
        let command = argv.removeFirst()
        do {
            switch command {
            case "demo": try await Demo.run(argv)
            case "info": try await Commands.info(argv)
            case "monitor": try await Monitor.run(argv)
            case "ping": try await Commands.ping(argv)
            case "counters": try await Commands.counters(argv)
            case "call": try await Commands.call(argv)
            case "scenario": try await Commands.scenario(argv)
            case "ports": try Commands.ports(argv)
            case "relay": try await Relay.run(argv)
            case "help", "--help", "-h": print(usage)
            default:
                fail("unknown command '\(command)'\n\n\(usage)", status: 2)
            }
        } catch let error as Arguments.Failure {
            fail("\(command): \(error)", status: 2)
        } catch {
            fail("\(command): \(error)", status: 1)
        }
        exit(0)
    }

    static func fail(_ message: String, status: Int32) -> Never {
        FileHandle.standardError.write(Data("camctl: \(message)\n".utf8))
        exit(status)
    }
}
