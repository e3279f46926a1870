import Foundation
import Testing
import TestSupport

#if canImport(Glibc)
import Glibc
#endif

/// More `peer offer|answer` behaviour as users run it (see CallTests.swift for the harness):
/// a receive-only answerer, SIGTERM mid-call.
@Suite struct CallMoreTests {
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

    /// SIGTERM to `peer answer` mid-call: it hangs up and exits 130 with complete files
    /// (vpxdec and opusinfo exit 0); the offerer hears the close and ends with 0.
    @Test func sigtermHangsUpWithValidFiles() async throws {
        try await CallSlots.with(peers: 2) {
            let services = try await TestServices.shared()
            let h = CallHarness("sigterm")
            let args = try CallHarness.common(services, duration: 20)
            async let answerer = h.run("answerer", "answer", args)
            #expect(await h.waitForState("answerer", "ringing"))
            async let offerer = h.run("offerer", "offer", args)
            let recording = await h.waitFor("answerer") {
                $0["event"] as? String == "frames" && ($0["video"] as? Int ?? 0) >= 15 && ($0["audio"] as? Int ?? 0) >= 50
            }
            #expect(recording, "\(h.liveEvents("answerer"))")
            let pid = try h.pid("answerer")
            #expect(kill(pid, SIGTERM) == 0)
            let runs = try await [answerer, offerer]
            let a = runs[0], o = runs[1]
            print("call sigterm: answerer exited \(a.status) after \(String(format: "%.2f", a.wallSeconds)) s, offerer \(o.status)")
            #expect(a.status == 130, "\(a.log)")
            #expect(a.exitEventCode == 130)
            #expect(a.wallSeconds < 10, "ended by the signal, not by --duration 20")
            #expect(o.status == 0, "\(o.log)")
            let offererEnd = o.events("exit").first?["reason"] as? String ?? ""
            #expect(offererEnd.contains("hung up"), "\(o.log)")
            let stats = try #require(a.stats(about: "offerer"), "\(a.log)")
            let ivf = try #require(stats["video"] as? String)
            let ogg = try #require(stats["audio"] as? String)
            let frames = try await CallChecks.decodedFrames(ivf)
            let info = try await CallChecks.tool("opusinfo", [ogg])
            #expect(info.status == 0, "opusinfo \(ogg): \(info.stdout) \(info.stderr)")
            let seconds = try await CallChecks.oggSeconds(ogg)
            print("call sigterm: answerer recorded \(frames) frames, \(seconds) s of audio")
            #expect(frames >= 15)
            #expect(seconds >= 0.95)
            h.remove()
        }
    }
}
