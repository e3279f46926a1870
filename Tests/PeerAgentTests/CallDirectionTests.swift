import Foundation
import Testing
import TestSupport

#if canImport(Glibc)
import Glibc
#endif

/// Negotiated directions in `peer offer|answer` calls as users run them (see CallTests.swift
/// for the harness): an answerer that receives video but sends none.
@Suite struct CallDirectionTests {
    static let duration = 4.0

    /// `peer answer --video none` (video recvonly) against `peer offer`: both exit 0, the
    /// answerer still records the offerer's video (and audio), the offerer receives no video.
    @Test func answererWithoutVideoStillRecordsTheOfferersVideo() async throws {
        try await CallSlots.with(peers: 2) {
            let services = try await TestServices.shared()
            let h = CallHarness("videonone")
            let args = try CallHarness.common(services, duration: Self.duration)
            var answerArgs = args
            let video = try #require(answerArgs.firstIndex(of: "--video"))
            answerArgs[video + 1] = "none"
            async let answerer = h.run("answerer", "answer", answerArgs)
            #expect(await h.waitForState("answerer", "ringing"), "answerer never subscribed: \(h.liveEvents("answerer"))")
            async let offerer = h.run("offerer", "offer", args)
            let runs = try await [answerer, offerer]
            let a = runs[0], o = runs[1]
            CallChecks.exitedZero(runs)
            // Offerer → answerer: all the checks of the two-way calls.
            let figures = try await CallChecks.media(from: o, to: a, label: "videoNone")
            // Answerer → offerer: audio only; no video sent or received.
            let sent = try #require(a.stats(about: "offerer"), "\(a.log)")
            let got = try #require(o.stats(about: "answerer"), "\(o.log)")
            let outVideo = CallChecks.statsObject(sent, type: "outbound-rtp", kind: "video")
            let inVideo = CallChecks.statsObject(got, type: "inbound-rtp", kind: "video")
            let inAudio = CallChecks.statsObject(got, type: "inbound-rtp", kind: "audio")
            print("call videoNone: \(figures); answerer outbound video \(outVideo.map { "\($0["packetsSent"] ?? "-") packets" } ?? "none"), "
                + "offerer inbound video \(inVideo.map { "\($0["framesReceived"] ?? "-") frames, \($0["packetsReceived"] ?? "-") packets" } ?? "none"), "
                + "offerer inbound audio \(inAudio?["packetsReceived"] ?? "-") packets")
            #expect((outVideo?["packetsSent"] as? Int ?? 0) == 0)
            #expect((inVideo?["framesReceived"] as? Int ?? 0) == 0)
            #expect((inVideo?["packetsReceived"] as? Int ?? 0) == 0)
            #expect((inAudio?["packetsReceived"] as? Int ?? 0) >= 50, "the answerer's audio still reaches the offerer")
            // The negotiated directions: a remote video track only at the answerer (recvonly),
            // the offerer's video is sendonly and gives it no track.
            let tracksO = o.events("track").compactMap { $0["kind"] as? String }.sorted()
            let tracksA = a.events("track").compactMap { $0["kind"] as? String }.sorted()
            print("call videoNone: track events answerer \(tracksA), offerer \(tracksO)")
            #expect(tracksA == ["audio", "video"])
            #expect(tracksO == ["audio"])
            h.remove()
        }
    }
}
