// The `control` channel of shared/PROTOCOL.md driven from aiortc (Support/aiortc_wamp_peer.py with aiortc_data.py) through the real router, with media: ping, hold, unhold, keyframe, tone and a malformed command from aiortc, each answered by `peer`, the hold done by peer's re-offer, and the tone's pitch change found by an FFT of aiortc's own recording.
import Foundation
import Testing
import TestSupport

@Suite struct AiortcControlChannelTests {
    typealias Child = JSONLineProcess

    /// aiortc offers audio, video and a `control` channel and, from 1 s after it connects,
    /// sends `ping`, `hold`, `unhold`, `keyframe`, `tone` 880 Hz and a line that is not a
    /// JSON object; `peer` answers with a 440 Hz tone. Then: each command answered on
    /// `control` (`pong` with its id, `ok` for the others, `error` naming the malformed
    /// one); peer's states go `hold` and back to `established`, the hold by peer's own
    /// re-offer; aiortc's Ogg recording of peer's audio (MediaRecorder, libopus) is 440 Hz
    /// in its first whole second and 880 Hz in its last; peer encoded a key frame beyond
    /// the first; both exit 0.
    @Test func aiortcDrivesPeerOverTheControlChannel() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: AiortcInteropTests.python),
                     "no aiortc venv at \(AiortcInteropTests.python): run scripts/bootstrap")
        let services = try await TestServices.shared()
        let router = try #require(services.router_url)
        let prefix = "test.aiortccontrol.p\(getpid())"
        let dir = TestServices.temporaryDirectory("aiortc-control")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let commands = ["1:control:{\"action\":\"ping\",\"id\":1}", "2:control:{\"action\":\"hold\",\"id\":2}",
                        "4:control:{\"action\":\"unhold\"}", "5:control:{\"action\":\"keyframe\",\"id\":3}",
                        "5.2:control:{\"action\":\"tone\",\"hz\":880}", "5.5:control:{\"hold\"}"]
        let peerArgs = ["answer", "--router", router, "--prefix", prefix, "--audio", "tone:440",
                        "--video-out", dir + "/in.ivf", "--audio-out", dir + "/in.ogg", "--min-frames", "0",
                        "--duration", "14", "--timeout", "10", "--local-address", "127.0.0.1", "--json"]
        let aiortcArgs = [AiortcWampInteropTests.script, "--router", router, "--prefix", prefix, "--profile", "legacy", "--role", "offer",
                          "--accept-reoffers", "--duration", "9", "--timeout", "10", "--data-channel", "control",
                          "--record-audio", dir + "/aiortc.ogg"] + commands.flatMap { ["--data-send", $0] }
        var peer: Child?, aiortc: Child?
        defer { peer?.kill(); aiortc?.kill() }
        let p = try Child("peer", PeerConnectionTests.peer, peerArgs)
        peer = p
        let a = try Child("aiortc", AiortcInteropTests.python, aiortcArgs)
        aiortc = a
        let aiortcStatus = try await a.exitStatus(timeout: 40)
        let peerStatus = try await p.exitStatus(timeout: 20)
        let peerEvents = p.events(), aiortcEvents = a.events()
        #expect(peerStatus == 0 && aiortcStatus == 0, "peer \(peerStatus), aiortc \(aiortcStatus)\n\(p.stderr.suffix(2000))\n\(a.stderr.suffix(2000))")
        let result = try #require(aiortcEvents.last { $0["event"] as? String == "result" }, "\(a.stderr.suffix(2000))")
        let aioData = ((result["peers"] as? [String: [String: Any]])?.values.first?["data"] as? [String: [String: Any]]) ?? [:]
        let replies = (aioData["control"]?["texts"] as? [String] ?? [])
            .compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        print("aiortc control replies: \(replies)")
        #expect(replies.contains { $0["action"] as? String == "pong" && $0["id"] as? Int == 1 })
        #expect(replies.contains { $0["result"] as? String == "ok" && $0["action"] as? String == "hold" && $0["id"] as? Int == 2 })
        #expect(replies.contains { $0["result"] as? String == "ok" && $0["action"] as? String == "unhold" })
        #expect(replies.contains { $0["result"] as? String == "ok" && $0["action"] as? String == "keyframe" && $0["id"] as? Int == 3 })
        #expect(replies.contains { $0["result"] as? String == "ok" && $0["action"] as? String == "tone" })
        #expect(replies.contains { $0["result"] as? String == "error" && ($0["reason"] as? String)?.hasPrefix("not a JSON object") == true })
        var states: [String] = []
        for e in peerEvents where e["event"] as? String == "state" {
            if let s = e["state"] as? String, states.last != s { states.append(s) }
        }
        #expect(states.firstIndex(of: "hold").map { states[$0...].contains("established") } == true, "peer's states: \(states)")
        let renegotiated = peerEvents.filter { $0["event"] as? String == "renegotiated" }
        #expect(renegotiated.contains { $0["reason"] as? String == "hold" && $0["offerer"] as? String == "local" }, "\(renegotiated)")
        let tones = try CallDataChannelTests.toneFrequencies(dir + "/aiortc.ogg")
        print("aiortc control: peer's tone in aiortc's recording by second \(tones)")
        #expect(tones.count >= 4 && abs((tones.first ?? 0) - 440) < 12 && abs((tones.last ?? 0) - 880) < 12, "\(tones)")
        let stats = peerEvents.last { $0["event"] as? String == "stats" }.flatMap { ($0["report"] as? [String: Any])?["stats"] as? [String: [String: Any]] }
        let keyframes = stats?.values.first { $0["type"] as? String == "outbound-rtp" && $0["kind"] as? String == "video" }?["keyFramesEncoded"] as? Int ?? 0
        #expect(keyframes >= 2, "the first key frame and the one the command asked for: \(keyframes)")
    }
}
