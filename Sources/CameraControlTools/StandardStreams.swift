#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Text to standard error or standard output with `write(2)`, for the tools' messages and prompts.
/// Foundation's `FileHandle.write(_:)` traps on a failed write (a full disk, a closed pipe with `SIGPIPE`
/// ignored): a message that cannot be written is dropped instead, and the tool goes on to its exit status.
package enum StandardStreams {
    /// Writes `line` and a newline to standard error.
    package static func error(_ line: String) {
        write(line + "\n", to: 2)
    }

    /// Writes `text` (as is, no newline added) to standard output.
    package static func output(_ text: String) {
        write(text, to: 1)
    }

    /// `text` as a message may quote it: each control character but tab (C0, DEL, C1) written as `\xNN`,
    /// so a file's bytes quoted in an error (a bad scenario line, a CSV field) cannot move the cursor,
    /// recolour or clear the terminal, and a NUL is seen. Everything else is kept.
    package static func visible(_ text: some StringProtocol) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            let value = scalar.value
            if (value < 0x20 && scalar != "\t") || (0x7F...0x9F).contains(value) {
                let hex = String(value, radix: 16, uppercase: true)
                out += "\\x" + (hex.count < 2 ? "0" + hex : hex)
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// Writes all of `text` to `descriptor`, retrying after a signal; gives up on any other error.
    package static func write(_ text: String, to descriptor: Int32) {
        let bytes = Array(text.utf8)
        var written = 0
        while written < bytes.count {
            let count = bytes[written...].withUnsafeBytes { buffer in
                #if canImport(Glibc)
                    Glibc.write(descriptor, buffer.baseAddress, buffer.count)
                #else
                    Darwin.write(descriptor, buffer.baseAddress, buffer.count)
                #endif
            }
            if count < 0 {
                if errno == EINTR { continue }
                return
            }
            written += count
        }
    }
}
