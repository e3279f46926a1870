// Exit codes that never lie: a call that never reached `established` never exits 0, and
// a peer that was to send video must deliver at least one frame by default.
import Foundation
import Media
import Testing
import TestSupport

@Suite struct CallExitCodeTests {
    /// The offerer is relay-only with a wrong TURN password, so it cannot gather, fails and
    /// hangs up; the answerer, whose call never connected, used to say `finished` and exit
    /// 0. Now both exit 5 and the answerer's final state names the step it reached.
    @Test func aCallThatNeverConnectedIsNotAPass() async throws {
        try await CallSlots.with(peers: 2) {
            let services = try await TestServices.shared()
            let turn = try #require(services.turn_url)
            let h = CallHarness("neverconnected")
            let args = try CallHarness.common(services, duration: 3, timeout: 20)
            async let answerer = h.run("answerer", "answer", args)
            #expect(await h.waitForState("answerer", "ringing"), "answerer never subscribed: \(h.liveEvents("answerer"))")
            async let offerer = h.run("offerer", "offer", args + ["--ice-policy", "relay", "--turn", turn,
                                                                  "--turn-user", "nobody", "--turn-password", "wrong"])
            let runs = try await [answerer, offerer]
            let a = runs[0], o = runs[1]
            #expect(o.status == 5, "\(o.log)")
            #expect(a.status == 5, "\(a.log)")
            #expect(a.exitEventCode == 5, "\(a.log)")
            let final = a.events("state").last
            #expect(final?["state"] as? String == "failed", "\(a.log)")
            let reason = final?["reason"] as? String ?? ""
            print("answerer's final reason: \(reason)")
            #expect(reason.contains("never established") && reason.contains("ICE"), "\(reason)")
            #expect(!a.events("state").contains { $0["state"] as? String == "established" })
            h.remove()
        }
    }

    /// The offerer sends an IVF with no frames, so its video is negotiated (sendrecv) but
    /// nothing arrives: by default (`--min-frames` not given) the answerer exits 7 and
    /// says why; with `--min-frames 0` the same call exits 0.
    @Test(arguments: [false, true])
    func aPeerThatSendsNoFramesFailsTheDefaultCheck(turnedOff: Bool) async throws {
        try await CallSlots.with(peers: 2) {
            let services = try await TestServices.shared()
            let h = CallHarness("noframes\(turnedOff ? "-off" : "")")
            let empty = h.dir + "/empty.ivf"
            try CallChecks.writeInterFramesOnly(to: empty)
            let args = try CallHarness.common(services, duration: 2, timeout: 20)
            async let answerer = h.run("answerer", "answer", args + (turnedOff ? ["--min-frames", "0"] : []))
            #expect(await h.waitForState("answerer", "ringing"), "answerer never subscribed: \(h.liveEvents("answerer"))")
            var offerArgs = args
            let video = try #require(offerArgs.firstIndex(of: "--video"))
            offerArgs[video + 1] = "ivf:" + empty
            async let offerer = h.run("offerer", "offer", offerArgs)
            let runs = try await [answerer, offerer]
            let a = runs[0], o = runs[1]
            #expect(a.events("state").contains { $0["state"] as? String == "established" }, "\(a.log)")
            #expect(o.status == 0, "the offerer received the answerer's video: \(o.log)")
            if turnedOff {
                #expect(a.status == 0, "\(a.log)")
            } else {
                #expect(a.status == 7, "\(a.log)")
                let reason = a.events("state").last?["reason"] as? String ?? ""
                #expect(reason.contains("0 frames") && reason.contains("--min-frames 1"), "\(reason)")
            }
            h.remove()
        }
    }
}
