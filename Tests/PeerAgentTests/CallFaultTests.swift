// Faults a call must survive or end cleanly: the remote process SIGKILLed mid-call (no
// BYE, no close, no DTLS close_notify): `disconnected` within 5 s, then `failed` and exit 5
// within 35 s when consent freshness (RFC 7675) expires, with valid files.
import Foundation
import Testing
import TestSupport

#if canImport(Glibc)
import Glibc
#endif

@Suite struct CallFaultTests {
    @Test func aRemoteKilledMidCallIsDisconnectedThenFailedWithValidFiles() async throws {
        try await CallSlots.with(peers: 2) {
            let services = try await TestServices.shared()
            let h = CallHarness("remotekill")
            let args = try CallHarness.common(services, duration: 90, timeout: 20)
            async let answerer = h.run("answerer", "answer", args, timeout: 120)
            #expect(await h.waitForState("answerer", "ringing"))
            async let offerer = h.run("offerer", "offer", args, timeout: 120)
            let recording = await h.waitFor("offerer") {
                $0["event"] as? String == "frames" && ($0["video"] as? Int ?? 0) >= 15 && ($0["audio"] as? Int ?? 0) >= 50
            }
            #expect(recording, "\(h.liveEvents("offerer"))")
            let killedAt = Date()
            #expect(kill(try h.pid("answerer"), SIGKILL) == 0)
            let disconnected = await h.waitFor("offerer", timeout: 10) {
                $0["event"] as? String == "connectionState" && $0["state"] as? String == "disconnected"
            }
            let disconnectedAfter = Date().timeIntervalSince(killedAt)
            #expect(disconnected, "no disconnected event: \(h.liveEvents("offerer").suffix(5))")
            let runs = try await [answerer, offerer]
            let failedAfter = Date().timeIntervalSince(killedAt)
            let o = runs[1]
            print("call remoteKill: disconnected seen \(String(format: "%.2f", disconnectedAfter)) s after the SIGKILL, "
                  + "offerer exited \(o.status) \(String(format: "%.1f", failedAfter)) s after it: \(o.events("exit").first?["reason"] ?? "-")")
            #expect(disconnectedAfter <= 5, "disconnected \(disconnectedAfter) s after the kill")
            #expect(o.status == 5, "\(o.log)")
            #expect(o.exitEventCode == 5)
            #expect(failedAfter <= 35, "failed \(failedAfter) s after the kill")
            #expect(o.events("connectionState").contains { $0["state"] as? String == "failed" }, "\(o.log)")
            // What was recorded before the kill stays valid.
            let stats = try #require(o.stats(about: "answerer"), "\(o.log)")
            let ivf = try #require(stats["video"] as? String), ogg = try #require(stats["audio"] as? String)
            let frames = try await CallChecks.decodedFrames(ivf)
            let info = try await CallChecks.tool("opusinfo", [ogg])
            #expect(info.status == 0, "opusinfo \(ogg): \(info.stdout) \(info.stderr)")
            let seconds = try await CallChecks.oggSeconds(ogg)
            print("call remoteKill: offerer recorded \(frames) frames, \(seconds) s of audio")
            #expect(frames >= 15 && seconds >= 0.95)
            h.remove()
        }
    }
}
