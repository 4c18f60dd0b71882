import Foundation

/// An SVG plot of latency distributions: one empirical cumulative distribution per series (the fraction
/// of samples at or below each latency) on a logarithmic time axis, with the median and p99 marked.
/// Plain SVG 1.1 text, no scripts or external resources, so it renders on GitHub and in any browser.
struct LatencyPlot: Sendable {
    /// One distribution.
    struct Series: Sendable {
        /// The legend's text.
        let name: String
        /// The samples, microseconds (non-positive ones are clamped to the axis' left end).
        let valuesMicros: [Double]
        /// A reference drawn as a dashed vertical line in the series' colour (e.g. its floor), or nil.
        var referenceMicros: Double? = nil
    }

    /// The plot's title.
    let title: String
    /// The distributions, drawn in this order.
    let series: [Series]

    static let gridColour = "#e5e5e5"
    static let colours = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"]
    static let (width, height) = (760.0, 420.0)
    static let (left, right, top, bottom) = (64.0, 24.0, 40.0, 56.0)
    static let legendWidth = 470.0
    static let legendBorder = "#cccccc"

    /// The decades the axis spans: from the decade below the smallest sample to the one above the largest.
    var decades: ClosedRange<Int> {
        let all = series.flatMap(\.valuesMicros).filter { $0 > 0 }
        guard let low = all.min(), let high = all.max() else { return 1...4 }
        let from = Int(log10(low).rounded(.down))
        let to = max(from + 1, Int(log10(high).rounded(.up)))
        return from...to
    }

    /// The SVG document.
    func svg() -> String {
        let decades = decades
        let plotWidth = Self.width - Self.left - Self.right
        let plotHeight = Self.height - Self.top - Self.bottom
        func x(_ micros: Double) -> Double {
            let clamped = max(micros, pow(10, Double(decades.lowerBound)))
            let fraction = (log10(clamped) - Double(decades.lowerBound)) / Double(decades.upperBound - decades.lowerBound)
            return Self.left + fraction * plotWidth
        }
        func y(_ fraction: Double) -> Double { Self.top + (1 - fraction) * plotHeight }
        func number(_ value: Double) -> String { String(format: "%.1f", value) }
        func label(_ micros: Double) -> String {
            micros >= 1_000 ? "\(BenchRow.format(micros / 1_000)) ms" : "\(BenchRow.format(micros)) µs"
        }
        func tick(_ micros: Double) -> String {
            if micros >= 1_000 { return String(format: "%g ms", micros / 1_000) }
            return micros >= 1 ? String(format: "%g µs", micros) : String(format: "%g ns", micros * 1_000)
        }
        func escaped(_ text: String) -> String {
            text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
                .replacingOccurrences(of: ">", with: "&gt;")
        }

        var out = [
            #"<svg xmlns="http://www.w3.org/2000/svg" width="\#(Int(Self.width))" height="\#(Int(Self.height))" "#
                + #"viewBox="0 0 \#(Int(Self.width)) \#(Int(Self.height))" font-family="sans-serif" font-size="12">"#,
            #"<rect width="100%" height="100%" fill="white"/>"#,
            #"<text x="\#(number(Self.width / 2))" y="22" text-anchor="middle" font-size="14">\#(escaped(title))</text>"#,
        ]
        // Grid: 1-2-5 steps of each decade on x, tenths on y.
        for decade in decades {
            for step in [1.0, 2.0, 5.0] {
                let micros = step * pow(10, Double(decade))
                guard decade < decades.upperBound || step == 1 else { continue }
                let at = number(x(micros))
                let stroke = step == 1 ? "#bbbbbb" : "#e5e5e5"
                out.append(
                    #"<line x1="\#(at)" y1="\#(number(Self.top))" x2="\#(at)" y2="\#(number(Self.top + plotHeight))" stroke="\#(stroke)"/>"#
                )
                out.append(
                    #"<text x="\#(at)" y="\#(number(Self.top + plotHeight + 16))" text-anchor="middle">\#(escaped(tick(micros)))</text>"#)
            }
        }
        for tenth in 0...10 {
            let at = number(y(Double(tenth) / 10))
            out.append(
                #"<line x1="\#(number(Self.left))" y1="\#(at)" x2="\#(number(Self.left + plotWidth))" y2="\#(at)" stroke="\#(Self.gridColour)"/>"#
            )
            out.append(#"<text x="\#(number(Self.left - 6))" y="\#(at)" dy="4" text-anchor="end">\#(tenth * 10) %</text>"#)
        }
        out.append(
            #"<text x="\#(number(Self.left + plotWidth / 2))" y="\#(number(Self.height - 14))" text-anchor="middle">"#
                + "latency (log scale); marks: median ● and p99 ▲; dashed: the series' reference</text>")
        out.append(
            #"<text transform="translate(16 \#(number(Self.top + plotHeight / 2))) rotate(-90)" text-anchor="middle">"#
                + "samples at or below</text>")

        var legend: [String] = []  // drawn last, over the curves
        for (index, series) in series.enumerated() {
            let colour = Self.colours[index % Self.colours.count]
            let sorted = series.valuesMicros.sorted()
            guard !sorted.isEmpty else { continue }
            // A step function: at each sample the fraction rises by 1/n.
            var points: [String] = ["\(number(x(sorted[0]))),\(number(y(0)))"]
            for (rank, value) in sorted.enumerated() {
                let px = number(x(value))
                points.append("\(px),\(number(y(Double(rank) / Double(sorted.count))))")
                points.append("\(px),\(number(y(Double(rank + 1) / Double(sorted.count))))")
            }
            out.append(#"<polyline fill="none" stroke="\#(colour)" stroke-width="2" points="\#(points.joined(separator: " "))"/>"#)
            if let reference = series.referenceMicros, reference > 0 {
                let at = number(x(reference))
                out.append(
                    #"<line x1="\#(at)" y1="\#(number(Self.top))" x2="\#(at)" y2="\#(number(Self.top + plotHeight))" "#
                        + #"stroke="\#(colour)" stroke-dasharray="5,4"/>"#)
            }
            let stats = Stats(sorted)
            out.append(#"<circle cx="\#(number(x(stats.median)))" cy="\#(number(y(0.5)))" r="4" fill="\#(colour)"/>"#)
            let p99x = x(stats.p99)
            let p99y = y(0.99)
            out.append(
                #"<path d="M\#(number(p99x)),\#(number(p99y - 5)) l5,9 l-10,0 z" fill="\#(colour)"/>"#)
            // The legend: bottom right, on a white box over the curves.
            let legendX = Self.left + plotWidth - Self.legendWidth
            let legendY = Self.top + plotHeight - 10 - Double(self.series.count - 1 - index) * 18
            if index == 0 {
                let boxTop = Self.top + plotHeight - 26 - Double(self.series.count - 1) * 18
                legend.append(
                    #"<rect x="\#(number(legendX - 6))" y="\#(number(boxTop))" width="\#(number(Self.legendWidth))" "#
                        + #"height="\#(number(Self.top + plotHeight - 2 - boxTop))" fill="white" stroke="\#(Self.legendBorder)"/>"#)
            }
            legend.append(
                #"<line x1="\#(number(legendX))" y1="\#(number(legendY - 4))" x2="\#(number(legendX + 24))" "#
                    + #"y2="\#(number(legendY - 4))" stroke="\#(colour)" stroke-width="3"/>"#)
            legend.append(
                #"<text x="\#(number(legendX + 30))" y="\#(number(legendY))">"#
                    + "\(escaped(series.name)): median \(escaped(label(stats.median))), p99 \(escaped(label(stats.p99)))</text>")
        }
        out += legend
        out.append("</svg>")
        return out.joined(separator: "\n") + "\n"
    }
}
