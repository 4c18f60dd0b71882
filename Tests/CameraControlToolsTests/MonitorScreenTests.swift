import Testing

@testable import CameraControlTools

/// The full-screen monitor's memory and drawing: the log keeps at most ``MonitorScreen/logCapacity``
/// lines, the newest last, and a screen of any size is drawn without a line wider than the terminal.
@Suite struct MonitorScreenTests {
    @Test("the log keeps the newest logCapacity lines, in order, whatever was appended")
    func logIsBounded() {
        let screen = MonitorScreen()
        let appended = MonitorScreen.logCapacity + 300
        for index in 0..<appended { screen.append("event \(index)") }
        let text = screen.render(columns: 100, rows: 10_000)
        let events = text.split(separator: "\r\n").filter { $0.hasPrefix("event ") }
        #expect(events.count == MonitorScreen.logCapacity)
        #expect(events.first?.hasPrefix("event \(appended - MonitorScreen.logCapacity)\u{1B}") == true, "\(events.first ?? "")")
        #expect(events.last?.hasPrefix("event \(appended - 1)\u{1B}") == true, "\(events.last ?? "")")
    }

    @Test("tiny and huge terminals: no line wider than the terminal (at least 40 columns), the rows respected")
    func anySize() {
        let screen = MonitorScreen()
        screen.setHeader(String(repeating: "h", count: 500))
        for index in 0..<50 { screen.append(String(repeating: "x", count: index * 10)) }
        for (columns, rows) in [(1, 1), (40, 5), (80, 24), (400, 200)] {
            let text = screen.render(columns: columns, rows: rows)
            let lines = text.split(separator: "\r\n", omittingEmptySubsequences: false)
            #expect(lines.count <= max(rows, 1), "\(columns)×\(rows)")
            for line in lines {
                let visible = line.replacing("\u{1B}[H", with: "").replacing("\u{1B}[K", with: "").replacing("\u{1B}[J", with: "")
                #expect(visible.count <= max(40, columns), "\(columns)×\(rows): \(visible.count) columns")
            }
        }
    }
}
