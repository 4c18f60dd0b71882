/// `camctl-bench selftest`: the harness's statistics on a sample whose answer is known, against the same
/// sample scaled by 2 as the baseline (ratio 0.5). A smoke run of the harness itself.
enum SelfTest {
    static func run(_ options: BenchOptions) async throws -> [BenchRow] {
        let sample = (1...100).map(Double.init)
        return [
            BenchRow(
                name: "1…100", unit: "count", project: Stats(sample),
                baseline: ("2…200", Stats(sample.map { $0 * 2 })))
        ]
    }
}
