// ReportSeries: what a stats timeline says over time for each peer — bitrate each way, frames per second, RTT, packets lost, jitter, end-to-end latency, freezes, packets dropped on arrival by reason — and a summary per direction.
import Foundation
import PeerAgent

/// One plotted line: its name and its points (seconds from the timeline's start, value).
public struct ReportLine: Sendable, Equatable {
    /// The legend's text, e.g. "answerer → us".
    public var name: String
    /// (seconds from the timeline's first sample, value in the plot's unit), in time order.
    public var points: [(Double, Double)]
    /// Same name and the same points.
    public static func == (a: ReportLine, b: ReportLine) -> Bool {
        a.name == b.name && a.points.count == b.points.count && zip(a.points, b.points).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
    }
}

/// One plot: a title, the axes' labels, its lines, and instants to mark (freezes).
public struct ReportPlot: Sendable, Equatable {
    /// The plot's title, e.g. "Bitrate each way".
    public var title: String
    /// The y axis's label: the unit ("kbit/s", "ms", "frames/s", "packets").
    public var yLabel: String
    /// The plotted lines (empty ones are left out of the drawing).
    public var lines: [ReportLine]
    /// Instants (s) marked with a vertical line, and what they mark.
    public var marks: [(Double, String)] = []
    /// Same title, lines and number of marks.
    public static func == (a: ReportPlot, b: ReportPlot) -> Bool {
        a.title == b.title && a.lines == b.lines && a.marks.count == b.marks.count
    }
}

/// `value` as a whole number for the summary ("0" when absent); any finite or infinite
/// value from a file prints, none traps as `Int(_:)` would beyond Int's range.
func whole(_ value: Double?) -> String {
    guard let value, value.isFinite else { return value.map { "\($0)" } ?? "0" }
    return String(format: "%.0f", value)
}

/// The series and summary of a timeline (``StatsTimeline``), computed from its samples.
public struct ReportSeries: Sendable {
    /// The peers, in the order they first appear.
    public let peers: [String]
    /// Seconds from the first sample to the last.
    public let duration: Double
    /// The plots: bitrate, frames per second, RTT, packets lost, jitter, latency, and when
    /// any received packet was dropped, the drops by reason (the `transport` object's drop
    /// counts, ``TransportStats/dropFields``: a line for each reason that counted any;
    /// without drops the summary says "none" and the plot is left out).
    public let plots: [ReportPlot]
    /// The title of the plot of drops by reason.
    public static let dropsTitle = "Packets dropped on arrival, by reason (cumulative)"
    /// Rows of the summary: peer, direction, figure, value.
    public let summary: [(peer: String, direction: String, figure: String, value: String)]

    /// Computes everything from `samples` (any order of peers; each peer's in time order).
    public init(_ samples: [TimelineSample]) {
        let groups = TimelineSample.byPeer(samples)
        peers = groups.map(\.peer)
        let start = samples.map(\.timestamp).min() ?? 0
        duration = ((samples.map(\.timestamp).max() ?? start) - start) / 1000
        func t(_ s: TimelineSample) -> Double { (s.timestamp - start) / 1000 }

        var bitrate: [ReportLine] = [], fps: [ReportLine] = [], rtt: [ReportLine] = [], lost: [ReportLine] = [],
            jitter: [ReportLine] = [], latency: [ReportLine] = [], drops: [ReportLine] = []
        var freezes: [(Double, String)] = []
        var rows: [(String, String, String, String)] = []
        for (peer, list) in groups {
            func inbound(_ s: TimelineSample, _ kind: String) -> [String: TimelineValue]? {
                s.objects(ofType: "inbound-rtp").first { $0.fields["kind"]?.string == kind }?.fields
            }
            func outbound(_ s: TimelineSample, _ kind: String) -> [String: TimelineValue]? {
                s.objects(ofType: "outbound-rtp").first { $0.fields["kind"]?.string == kind }?.fields
            }
            var kIn: [(Double, Double)] = [], kOut: [(Double, Double)] = []
            for (a, b) in zip(list, list.dropFirst()) {
                let dt = (b.timestamp - a.timestamp) / 1000
                guard dt > 0, let ta = a.objects(ofType: "transport").first?.fields, let tb = b.objects(ofType: "transport").first?.fields else { continue }
                if let r0 = ta["bytesReceived"]?.number, let r1 = tb["bytesReceived"]?.number { kIn.append((t(b), max(0, r1 - r0) * 8 / 1000 / dt)) }
                if let s0 = ta["bytesSent"]?.number, let s1 = tb["bytesSent"]?.number { kOut.append((t(b), max(0, s1 - s0) * 8 / 1000 / dt)) }
            }
            bitrate += [ReportLine(name: "\(peer) → us", points: kIn), ReportLine(name: "us → \(peer)", points: kOut)]
            fps.append(ReportLine(name: "\(peer) → us", points: list.compactMap { s in inbound(s, "video")?["framesPerSecond"]?.number.map { (t(s), $0) } }))
            fps.append(ReportLine(name: "us → \(peer)", points: list.compactMap { s in outbound(s, "video")?["framesPerSecond"]?.number.map { (t(s), $0) } }))
            rtt.append(ReportLine(name: peer, points: list.compactMap { s in
                s.objects(ofType: "candidate-pair").first?.fields["currentRoundTripTime"]?.number.map { (t(s), $0 * 1000) }
            }))
            for kind in ["video", "audio"] {
                lost.append(ReportLine(name: "\(peer) \(kind)", points: list.compactMap { s in inbound(s, kind)?["packetsLost"]?.number.map { (t(s), $0) } }))
                jitter.append(ReportLine(name: "\(peer) \(kind)", points: list.compactMap { s in inbound(s, kind)?["jitter"]?.number.map { (t(s), $0 * 1000) } }))
            }
            latency.append(ReportLine(name: "\(peer) → us p50", points: list.compactMap { s in
                s.objects(ofType: "peer-e2e").first?.fields["latencyRecentP50Ms"]?.number.map { (t(s), $0) }
            }))
            for field in TransportStats.dropFields {
                let points = list.compactMap { s in s.objects(ofType: "transport").first?.fields[field]?.number.map { (t(s), $0) } }
                if points.contains(where: { $0.1 > 0 }) { drops.append(ReportLine(name: "\(peer) \(field)", points: points)) }
            }
            var lastFreezes = 0.0
            for s in list {
                guard let count = inbound(s, "video")?["freezeCount"]?.number else { continue }
                if count > lastFreezes { freezes.append((t(s), "freeze (\(peer))")) }
                lastFreezes = count
            }
            // The summary, from each peer's last sample.
            guard let last = list.last else { continue }
            func row(_ direction: String, _ figure: String, _ value: String) { rows.append((peer, direction, figure, value)) }
            if let v = inbound(last, "video") {
                let n = { (k: String) in v[k]?.number }
                row("\(peer) → us", "video frames received / decoded", "\(whole(n("framesReceived"))) / \(whole(n("framesDecoded")))")
                // Between the first and the last snapshot with video: frames before the first are not counted.
                let decoded = list.compactMap { s in inbound(s, "video")?["framesDecoded"]?.number.map { (s.timestamp, $0) } }
                if let a = decoded.first, let b = decoded.last, b.0 - a.0 >= 500 {
                    row("\(peer) → us", "video frames per second (mean)", String(format: "%.1f", (b.1 - a.1) * 1000 / (b.0 - a.0)))
                }
                row("\(peer) → us", "freezes (total s)", "\(whole(n("freezeCount"))) (" + String(format: "%.2f s", n("totalFreezesDuration") ?? 0) + ")")
                row("\(peer) → us", "video packets lost", "\(whole(n("packetsLost"))) of \(whole(n("packetsReceived")))")
                if let w = n("frameWidth"), let h = n("frameHeight") { row("\(peer) → us", "video size", "\(whole(w))x\(whole(h))") }
            }
            if let a = inbound(last, "audio") {
                row("\(peer) → us", "audio packets received / lost", "\(whole(a["packetsReceived"]?.number)) / \(whole(a["packetsLost"]?.number))")
                if let c = a["concealedSamples"]?.number, let r = a["totalSamplesReceived"]?.number, r > 0 {
                    row("\(peer) → us", "audio concealed", String(format: "%.2f %%", c * 100 / r))
                }
            }
            if let e = last.objects(ofType: "peer-e2e").first?.fields {
                let f = { (k: String) in e[k]?.number.map { String(format: "%.1f", $0) } ?? "-" }
                row("\(peer) → us", "end-to-end latency p50 / p95 / max, ms (\(e["clock"]?.string ?? "?"))", "\(f("latencyP50Ms")) / \(f("latencyP95Ms")) / \(f("latencyMaxMs"))")
                row("\(peer) → us", "frames missing by marker", "\(whole(e["framesMissing"]?.number))")
            }
            if let t = last.objects(ofType: "transport").first?.fields, TransportStats.dropFields.contains(where: { t[$0] != nil }) {
                let counted = TransportStats.dropFields.compactMap { f in t[f]?.number.flatMap { $0 > 0 ? "\(f) \(whole($0))" : nil } }
                row("\(peer) → us", "packets dropped on arrival", counted.isEmpty ? "none" : counted.joined(separator: ", "))
            }
            for kind in ["video", "audio"] {
                guard let s = inbound(last, kind), let n = s["packetsWithPreviousPayloadType"]?.number, n > 0 else { continue }
                row("\(peer) → us", "\(kind) packets with a renumbered payload type (\(whole(s["previousPayloadType"]?.number)))", whole(n))
            }
            if let v = outbound(last, "video") {
                row("us → \(peer)", "video frames sent", "\(whole(v["framesSent"]?.number))")
            }
            if !kIn.isEmpty { row("\(peer) → us", "transport kbit/s (mean)", String(format: "%.0f", kIn.map(\.1).reduce(0, +) / Double(kIn.count))) }
            if !kOut.isEmpty { row("us → \(peer)", "transport kbit/s (mean)", String(format: "%.0f", kOut.map(\.1).reduce(0, +) / Double(kOut.count))) }
            if let r = last.objects(ofType: "candidate-pair").first?.fields["currentRoundTripTime"]?.number {
                row("both", "round-trip time, ms (last)", String(format: "%.1f", r * 1000))
            }
        }
        plots = [
            ReportPlot(title: "Bitrate each way", yLabel: "kbit/s", lines: bitrate, marks: freezes),
            ReportPlot(title: "Video frames per second", yLabel: "frames/s", lines: fps, marks: freezes),
            ReportPlot(title: "Round-trip time", yLabel: "ms", lines: rtt),
            ReportPlot(title: "Packets lost (cumulative)", yLabel: "packets", lines: lost),
            ReportPlot(title: "Jitter", yLabel: "ms", lines: jitter),
            ReportPlot(title: "End-to-end latency (frame markers)", yLabel: "ms", lines: latency, marks: freezes),
        ] + (drops.isEmpty ? [] : [ReportPlot(title: ReportSeries.dropsTitle, yLabel: "packets", lines: drops)])
        summary = rows
    }
}
