// The stats timeline and the call report from it: series computed from known snapshots, the HTML page's plots (real gnuplot) and the chrome://webrtc-internals export's structure, and `peer report` naming a bad line.
import Foundation
import Testing
import TestSupport
@testable import PeerCall

@Suite struct CallReportTests {
    /// Five snapshots a second apart of one peer: 125,000 bytes received and 62,500 sent a
    /// second (1000 and 500 kbit/s), video decoded at 30 then 0 then 30 frames a second
    /// (a freeze counted at t = 3 s), RTT 20 ms, latency p50 40 ms.
    static func timeline(peer: String = "answerer") -> String {
        (0..<5).map { i -> String in
            let t = 1_700_000_000_000 + i * 1000
            let decoded = [0, 30, 60, 60, 90][i]
            let freezes = i >= 3 ? 1 : 0
            return #"{"peer":"\#(peer)","timestamp":\#(t),"report":{"stats":{"# +
                #""T01":{"type":"transport","bytesReceived":\#(i * 125_000),"bytesSent":\#(i * 62_500)},"# +
                #""IT-video-1":{"type":"inbound-rtp","kind":"video","framesDecoded":\#(decoded),"framesReceived":\#(decoded),"# +
                #""framesPerSecond":\#(i == 3 ? 0 : 30),"freezeCount":\#(freezes),"totalFreezesDuration":\#(Double(freezes) * 1.2),"# +
                #""packetsLost":\#(i),"packetsReceived":\#(i * 100),"jitter":0.004,"frameWidth":320,"frameHeight":240},"# +
                #""CP1":{"type":"candidate-pair","currentRoundTripTime":0.02,"nominated":true},"# +
                #""E2E-IT-video-1":{"type":"peer-e2e","clock":"same-host","latencyP50Ms":40,"latencyP95Ms":45,"latencyMaxMs":60,"# +
                #""latencyRecentP50Ms":\#(40 + i),"framesMissing":2}}}}"#
        }.joined(separator: "\n") + "\n"
    }

    @Test func seriesAndSummaryComeFromTheSnapshots() throws {
        let samples = try StatsTimeline.read(Self.timeline(), source: "t.jsonl")
        #expect(samples.count == 5)
        let series = ReportSeries(samples)
        #expect(series.peers == ["answerer"])
        #expect(series.duration == 4)
        let bitrate = try #require(series.plots.first { $0.title == "Bitrate each way" })
        #expect(bitrate.lines.map(\.name) == ["answerer → us", "us → answerer"])
        #expect(bitrate.lines[0].points.map(\.1) == [1000, 1000, 1000, 1000])
        #expect(bitrate.lines[1].points.map(\.1) == [500, 500, 500, 500])
        #expect(bitrate.marks.map(\.0) == [3], "the freeze is marked where freezeCount rose")
        let rtt = try #require(series.plots.first { $0.title == "Round-trip time" })
        #expect(rtt.lines[0].points.map(\.1) == [20, 20, 20, 20, 20])
        let latency = try #require(series.plots.first { $0.title.hasPrefix("End-to-end latency") })
        #expect(latency.lines[0].points.map(\.1) == [40, 41, 42, 43, 44])
        func value(_ figure: String) -> String? { series.summary.first { $0.figure.hasPrefix(figure) }?.value }
        #expect(value("video frames per second (mean)") == "22.5", "90 frames over 4 s")
        #expect(value("freezes") == "1 (1.20 s)")
        #expect(value("end-to-end latency") == "40.0 / 45.0 / 60.0")
        #expect(value("frames missing by marker") == "2")
        #expect(value("video size") == "320x240")
    }

    /// Real gnuplot: one inline SVG per plot with data, its axis labels as text, the title
    /// escaped, nothing fetched from anywhere (no src or href to another document).
    @Test func htmlPageHasOneSVGPerPlotAndNothingExternal() throws {
        let samples = try StatsTimeline.read(Self.timeline(), source: "t.jsonl")
        let html = try CallReport.html(samples, title: "call <7> & co")
        #expect(html.contains("<title>call &lt;7&gt; &amp; co</title>"))
        #expect(html.components(separatedBy: "<section class=\"plot\"").count - 1 == 6)
        #expect(html.components(separatedBy: "<svg").count - 1 == 6)
        for label in ["kbit/s", "frames/s", "time (s)", "answerer → us", "us → answerer"] {
            #expect(html.contains(label), "label \(label)")
        }
        #expect(!html.contains("src=\"http"), "no external script or image")
        #expect(!html.contains("<script"), "no script: the page opens as it is")
    }

    /// The export parses as JSON of webrtc-internals' dump shape: PeerConnections → one
    /// connection → stats → "<id>-<field>" with startTime/endTime (ISO 8601), statsType and
    /// values (a JSON array in a string, one value a snapshot).
    @Test func webrtcInternalsExportHasTheDumpStructure() throws {
        let samples = try StatsTimeline.read(Self.timeline() + Self.timeline(peer: "bob"), source: "t.jsonl")
        let text = CallReport.webrtcInternals(samples)
        let dump = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        #expect(dump["getUserMedia"] is [Any])
        #expect(dump["UserAgent"] is String)
        let connections = try #require(dump["PeerConnections"] as? [String: [String: Any]])
        #expect(connections.count == 2)
        for (_, connection) in connections {
            #expect(connection["updateLog"] is [Any])
            let stats = try #require(connection["stats"] as? [String: [String: Any]])
            let fps = try #require(stats["IT-video-1-framesPerSecond"])
            #expect(fps["statsType"] as? String == "inbound-rtp")
            let values = try #require(fps["values"] as? String)
            #expect(try JSONSerialization.jsonObject(with: Data(values.utf8)) as? [Double] == [30, 30, 30, 0, 30])
            let start = try #require(fps["startTime"] as? String), end = try #require(fps["endTime"] as? String)
            let iso = ISO8601DateFormatter()
            iso.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            let s = try #require(iso.date(from: start)), e = try #require(iso.date(from: end))
            #expect(e.timeIntervalSince(s) == 4)
            #expect(stats["E2E-IT-video-1-clock"]?["values"] as? String == #"["same-host","same-host","same-host","same-host","same-host"]"#)
        }
    }

    /// A timeline whose transport counts drops (SRTP tags from t = 2 s, unknown payload
    /// types at 4 s, the other reasons at 0): the report plots them by reason — a line for
    /// each reason that counted any — and the summary names them; a timeline without any
    /// has no such plot, and its summary says "none".
    @Test func dropsByReasonArePlottedAndSummarized() throws {
        let dropping = Self.timeline().split(separator: "\n").enumerated().map { i, line in
            let auth = i >= 2 ? 50 : 0, pt = i >= 4 ? 7 : 0
            return line.replacingOccurrences(of: #""type":"transport","#, with: #""type":"transport","srtpAuthFailures":\#(auth),"#
                + #""rtpUnknownPayloadTypeDrops":\#(pt),"rtpUnknownSsrcDrops":0,"srtpReplayDrops":0,"rtcpMalformedDrops":0,"#)
        }.joined(separator: "\n")
        let series = ReportSeries(try StatsTimeline.read(dropping, source: "t.jsonl"))
        let drops = try #require(series.plots.first { $0.title == ReportSeries.dropsTitle })
        #expect(drops.lines.map(\.name) == ["answerer srtpAuthFailures", "answerer rtpUnknownPayloadTypeDrops"])
        #expect(drops.lines.map { $0.points.map(\.1) } == [[0, 0, 50, 50, 50], [0, 0, 0, 0, 7]])
        #expect(series.summary.first { $0.figure == "packets dropped on arrival" }?.value == "srtpAuthFailures 50, rtpUnknownPayloadTypeDrops 7")
        let html = try CallReport.html(try StatsTimeline.read(dropping, source: "t.jsonl"), title: "t")
        #expect(html.components(separatedBy: "<svg").count - 1 == 7)
        #expect(html.contains("data-title=\"\(ReportSeries.dropsTitle)\">\n<svg"))

        let clean = dropping.replacingOccurrences(of: #""srtpAuthFailures":50,"#, with: #""srtpAuthFailures":0,"#)
            .replacingOccurrences(of: #""rtpUnknownPayloadTypeDrops":7,"#, with: #""rtpUnknownPayloadTypeDrops":0,"#)
        let none = ReportSeries(try StatsTimeline.read(clean, source: "t.jsonl"))
        #expect(!none.plots.contains { $0.title == ReportSeries.dropsTitle })
        #expect(none.summary.first { $0.figure == "packets dropped on arrival" }?.value == "none")
        #expect(!ReportSeries(try StatsTimeline.read(Self.timeline(), source: "t.jsonl")).summary.contains { $0.figure == "packets dropped on arrival" },
                "a timeline without drop counts says nothing about drops")
    }

    /// Outside text and numbers as they come: a peer name with gnuplot's and HTML's
    /// special characters is shown as it is (escaped for HTML, no gnuplot formatting, no
    /// backquote command run), and counts beyond Int's range print instead of trapping.
    @Test func hostileNamesAndHugeNumbersArePrintedAsTheyAre() throws {
        let name = #"user_42 'x' \"y\" `touch /tmp/peer-report-pwned` @m {b} <i>&"#
        let text = Self.timeline(peer: name).replacingOccurrences(of: #""framesReceived":90"#, with: #""framesReceived":1e300"#)
            .replacingOccurrences(of: #""packetsLost":4"#, with: #""packetsLost":9223372036854775807"#)
        let samples = try StatsTimeline.read(text, source: "t.jsonl")
        let html = try CallReport.html(samples, title: "t")
        #expect(!FileManager.default.fileExists(atPath: "/tmp/peer-report-pwned"))
        #expect(html.contains("<td>user_42 &#39;x&#39; &quot;y&quot; `touch /tmp/peer-report-pwned` @m {b} &lt;i&gt;&amp;</td>"))
        #expect(html.contains("user_42 'x' \"y\" `touch /tmp/peer-report-pwned` @m {b} &lt;i>&amp; → us"), "legend text as it is")
        #expect(!html.contains("<tspan"), "no enhanced-text formatting of _ ^ @ { }")
        #expect(html.contains(String(format: "%.0f", 1e300) + " / 90"), "1e300 frames received, printed whole")
        #expect(html.contains("9223372036854775808 of 400"))
    }

    /// A timeline's bad line is named: file, line number, what is wrong; `peer report`
    /// exits 2 with it and writes nothing.
    @Test func badTimelineLineIsNamed() async throws {
        let good = Self.timeline().split(separator: "\n")
        #expect(throws: TimelineError(source: "x", line: 2, reason: "no numeric \"timestamp\"")) {
            try StatsTimeline.read(good[0] + "\n" + #"{"peer":"a","report":{"stats":{}}}"#, source: "x")
        }
        let dir = TestServices.temporaryDirectory("report-bad")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let file = dir + "/t.jsonl"
        try (good.prefix(2).joined(separator: "\n") + "\n{oops\n").write(toFile: file, atomically: true, encoding: .utf8)
        let r = try await TestServices.run(CallHarness.peer, ["report", file, "-o", dir + "/r.html"], timeout: 30)
        #expect(r.status == 2)
        #expect(r.stderr.contains("\(file):3: not JSON"), "\(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir + "/r.html"))
    }
}
