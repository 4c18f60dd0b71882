enum Plot {
    static func run(_ argv: [String]) async throws {}
}
