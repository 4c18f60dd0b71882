import CameraControlControls
import CameraControlTestSupport
import Testing

@Suite("CaptureIndexPicker")
struct CaptureIndexPickerTests {
    @Test("empty titles throw emptyIndexTitles")
    func emptyTitles() {
        do {
            _ = try CaptureIndexPicker("Flash", symbolName: "bolt", localizedIndexTitles: [])
            Issue.record("accepted")
        } catch {
            #expect(error.code == .emptyIndexTitles)
        }
    }

    @Test("a count that is not > 0 throws invalidIndexCount", arguments: [0, -1, Int.min])
    func badCount(_ count: Int) {
        do {
            _ = try CaptureIndexPicker("Filter", symbolName: "f", numberOfIndexes: count)
            Issue.record("accepted")
        } catch {
            #expect(error.code == .invalidIndexCount)
        }
    }

    @Test("titles from a list or a transform; selectedIndex defaults to 0")
    func titles() throws {
        let list = try CaptureIndexPicker("Flash", symbolName: "bolt", localizedIndexTitles: ["Off", "On"])
        #expect(list.selectedIndex == 0)
        #expect(list.numberOfIndexes == 2)
        #expect(list.localizedTitle(forIndex: 1) == "On")
        #expect(list.localizedTitle(forIndex: 2) == nil)
        let counted = try CaptureIndexPicker("Filter", symbolName: "f", numberOfIndexes: 1_000_000_000) { "Filter \($0 + 1)" }
        #expect(counted.localizedTitle(forIndex: 41) == "Filter 42")
        #expect(counted.localizedTitle(forIndex: -1) == nil)
        #expect(try CaptureIndexPicker("N", symbolName: "n", numberOfIndexes: 3).localizedTitle(forIndex: 2) == "2")
    }

    @Test("localizedIndexTitles: the titles given, or the transform's title of each index (by default the index)")
    func localizedIndexTitles() throws {
        let list = try CaptureIndexPicker("Flash", symbolName: "bolt", localizedIndexTitles: ["Off", "On", "Auto"])
        #expect(list.localizedIndexTitles == ["Off", "On", "Auto"])
        let counted = try CaptureIndexPicker("Filter", symbolName: "f", numberOfIndexes: 3) { "Filter \($0 + 1)" }
        #expect(counted.localizedIndexTitles == ["Filter 1", "Filter 2", "Filter 3"])
        let plain = try CaptureIndexPicker("N", symbolName: "n", numberOfIndexes: 4)
        #expect(plain.localizedIndexTitles == ["0", "1", "2", "3"])
        #expect(plain.localizedIndexTitles.count == plain.numberOfIndexes)
        #expect(plain.localizedIndexTitles.indices.allSatisfy { plain.localizedIndexTitles[$0] == plain.localizedTitle(forIndex: $0) })
    }

    @Test("selecting outside 0..<count throws and keeps the index", arguments: [-1, 3, Int.max])
    func outOfRange(_ index: Int) throws {
        let picker = try CaptureIndexPicker("Flash", symbolName: "bolt", localizedIndexTitles: ["Off", "On", "Auto"])
        try picker.setSelectedIndex(2)
        do {
            try picker.setSelectedIndex(index)
            Issue.record("accepted")
        } catch {
            #expect(error.code == .indexOutOfRange)
        }
        #expect(picker.selectedIndex == 2)
    }

    @Test("programmatic selection notifies observers, not the action")
    func programmatic() throws {
        let picker = try CaptureIndexPicker("Flash", symbolName: "bolt", localizedIndexTitles: ["Off", "On"])
        let actions = Recorder<Int>()
        let changes = Recorder<ValueChange<Int>>()
        picker.setActionQueue(InlineExecutor()) { actions.append($0) }
        picker.observeValueChanges(on: InlineExecutor()) { changes.append($0) }
        try picker.setSelectedIndex(1)
        #expect(actions.values.isEmpty)
        #expect(changes.values == [ValueChange(controlID: "flash", value: 1, origin: .programmatic)])
        #expect(picker.snapshot.value == .index(1))
    }
}
