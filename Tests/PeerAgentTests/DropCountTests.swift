// DropCountTests: a real peer (aiortc, through its own DTLS-SRTP transport) sends packets `peer` must drop — an unnegotiated payload type, an unknown SSRC without a mid, a broken SRTP tag — and each is counted by reason in `peer`'s stats, its `--stats` file and timeline, and the report drawn from that timeline.
import Foundation
import Testing
import TestSupport
import PeerAgent
@testable import PeerCall

@Suite(.serialized) struct DropCountTests {
    /// aiortc offers and, 2 s after connecting, sends 50 packets of each kind
    /// (`aiortc_wamp_peer.py --send-bad 50`: the video section's mid with payload type 127,
    /// which neither section negotiated; the video payload type from an SSRC never
    /// announced, without a mid; and packets whose SRTP tag has its last byte flipped).
    /// `peer`'s `transport` stats count exactly 50 in `rtpUnknownPayloadTypeDrops`,
    /// `rtpUnknownSsrcDrops` and `srtpAuthFailures` and none in the other reasons, in the
    /// final stats, the `--stats` file and the timeline's last line (0 in its first);
    /// `peer report` of the timeline has the drops plot with a line for each of the three,
    /// drawn (headless Chromium, offline).
    @Test func eachDropIsCountedByReasonAndTheReportDrawsThem() async throws {
        let n = 50
        let dir = TestServices.temporaryDirectory("drops")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let timeline = dir + "/timeline.jsonl", statsFile = dir + "/stats.json", html = dir + "/report.html"
        let r = try await AiortcRenegotiationTests.call(peerOffers: false, seconds: 6, peerExtra: ["--stats-timeline", timeline, "--stats", statsFile],
                                                        aiortcExtra: ["--send-bad", String(n)])
        defer { try? FileManager.default.removeItem(atPath: r.dir) }
        let sent = AiortcRenegotiationTests.named(r.aiortc, "sentBad").first
        let final = ((AiortcRenegotiationTests.named(r.peer, "stats").last?["report"] as? [String: Any])?["stats"] as? [String: [String: Any]])?["T-bundle"] ?? [:]
        let file = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: statsFile))) as? [String: Any]
        let fromFile = (((file?["peers"] as? [String: Any])?["offerer"] as? [String: Any])?["report"] as? [String: Any])
            .flatMap { ($0["stats"] as? [String: [String: Any]])?["T-bundle"] } ?? [:]
        let samples = try StatsTimeline.read(String(contentsOfFile: timeline, encoding: .utf8), source: timeline)
        func drops(_ s: TimelineSample?) -> [String: Double] {
            var out: [String: Double] = [:]
            for f in TransportStats.dropFields { out[f] = s?.objects(ofType: "transport").first?.fields[f]?.number }
            return out
        }
        let counted = ["srtpAuthFailures", "rtpUnknownPayloadTypeDrops", "rtpUnknownSsrcDrops"]
        print("drops: aiortc sent \(sent ?? [:]); peer's transport \(TransportStats.dropFields.map { "\($0) \(final[$0] ?? "-")" }.joined(separator: ", ")); "
            + "earlyPacketsDropped \(final["earlyPacketsDropped"] ?? "-"), srtpFailures \(final["srtpFailures"] ?? "-"); timeline \(samples.count) lines")
        #expect(r.peerStatus == 0 && r.aiortcStatus == 0)
        try #require(sent?["count"] as? Int == n && sent?["midExtension"] as? Bool == true, "aiortc sent them: \(sent ?? [:])")
        for field in counted {
            #expect(final[field] as? Int == n, "\(field): \(final[field] ?? "-")")
            #expect(fromFile[field] as? Int == n, "--stats \(field): \(fromFile[field] ?? "-")")
            #expect(drops(samples.last)[field] == Double(n), "timeline \(field)")
            #expect(drops(samples.first)[field] == 0, "none before aiortc sent them")
        }
        // The other reasons saw nothing (early SRTP is legitimately racy: not asserted).
        for field in ["srtpReplayDrops", "srtpMalformedDrops", "unknownPacketsDropped", "rtpMalformedDrops", "rtcpMalformedDrops"] {
            #expect(final[field] as? Int == 0, "\(field): \(final[field] ?? "-")")
        }
        #expect(final["srtpFailures"] as? Int == n, "the tags, and no protect failure")

        let made = try await TestServices.run(CallHarness.peer, ["report", timeline, "-o", html], timeout: 60)
        #expect(made.status == 0, "\(made.stderr)")
        let page = try String(contentsOfFile: html, encoding: .utf8)
        #expect(page.contains("data-title=\"\(ReportSeries.dropsTitle)\">\n<svg"))
        #expect(page.contains("srtpAuthFailures 50, rtpUnknownPayloadTypeDrops 50, rtpUnknownSsrcDrops 50"), "the summary row")
        let check = try await MarkerQualityTests.tool([MarkerQualityTests.support + "/report_check.py", html, "--out", dir + "/report.png"])
        let plot = (check["plots"] as? [[String: Any]])?.first { $0["title"] as? String == ReportSeries.dropsTitle }
        let texts = plot?["texts"] as? [String] ?? []
        print("drops: the report's plot \(plot.map { "\($0["drawnPixels"] ?? "-") drawn, \($0["colouredPixels"] ?? "-") coloured pixels" } ?? "missing"), texts \(texts)")
        #expect(plot?["svg"] as? Bool == true && (plot?["colouredPixels"] as? Int ?? 0) > 100, "\(plot ?? [:])")
        for field in counted { #expect(texts.contains("offerer \(field)"), "legend \(field): \(texts)") }
        #expect((check["requests"] as? [Any])?.isEmpty == true)
    }
}
