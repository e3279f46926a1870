import Foundation
import Testing
import TestSupport

/// Renegotiation against aiortc 1.16 over the real router (legacy trickle;
/// `Support/aiortc_wamp_peer.py` with `--accept-reoffers` / `--reoffer-at`): aiortc
/// re-offers a direction change and `peer` follows; `peer` holds aiortc and unholds; an
/// aiortc that ignores re-offers (as the oldest clients do) makes `peer`'s re-offer time
/// out, roll back and the call go on.
@Suite(.serialized) struct AiortcRenegotiationTests {
    typealias Child = JSONLineProcess

    /// Both sides of one call: `peer SUBCOMMAND` with `peerExtra` and the aiortc peer in the
    /// other role with `aiortcExtra`; the answerer starts first. Returns both event lists,
    /// exit statuses and the path of `peer`'s IVF.
    static func call(peerOffers: Bool, seconds: Int, peerExtra: [String], aiortcExtra: [String], timeout: Int = 10) async throws
        -> (peer: [[String: Any]], aiortc: [[String: Any]], peerStatus: Int32, aiortcStatus: Int32, ivf: String, dir: String) {
        try #require(FileManager.default.isExecutableFile(atPath: AiortcInteropTests.python), "no aiortc venv: run scripts/bootstrap")
        let services = try await TestServices.shared()
        let router = try #require(services.router_url)
        let prefix = "test.aiortcreneg.\(UUID().uuidString.prefix(8).lowercased())"
        let dir = TestServices.temporaryDirectory("aiortc-reneg")
        let peerArgs = [peerOffers ? "offer" : "answer", "--router", router, "--prefix", prefix, "--video", "pattern:320x240@30",
                        "--video-out", dir + "/from-aiortc.ivf", "--audio-out", dir + "/from-aiortc.ogg",
                        "--duration", "\(peerOffers ? seconds + 4 : seconds)", "--timeout", "\(timeout)",
                        "--local-address", "127.0.0.1", "--json"] + peerExtra
        let aiortcArgs = [AiortcWampInteropTests.script, "--router", router, "--prefix", prefix, "--trickle",
                          "--profile", "legacy", "--role", peerOffers ? "answer" : "offer",
                          "--duration", "\(peerOffers ? seconds : seconds + 4)", "--timeout", "10", "--fps", "30"] + aiortcExtra
        var peer: Child?, aiortc: Child?
        defer { peer?.kill(); aiortc?.kill() }
        if peerOffers {
            let a = try Child("aiortc", AiortcInteropTests.python, aiortcArgs)
            aiortc = a
            _ = try await a.next(timeout: 15, "ready") { $0["event"] as? String == "ready" }
            peer = try Child("peer", CallHarness.peer, peerArgs)
        } else {
            let p = try Child("peer", CallHarness.peer, peerArgs)
            peer = p
            _ = try await p.next(timeout: 10, "ringing") { $0["event"] as? String == "state" && $0["state"] as? String == "ringing" }
            aiortc = try Child("aiortc", AiortcInteropTests.python, aiortcArgs)
        }
        let p = try #require(peer), a = try #require(aiortc)
        let peerStatus = try await p.exitStatus(timeout: Double(seconds + 30))
        let aiortcStatus = try await a.exitStatus(timeout: 30)
        if peerStatus != 0 || aiortcStatus != 0 { print("peer stderr: \(p.stderr)\naiortc stderr: \(a.stderr)") }
        return (p.events(), a.events(), peerStatus, aiortcStatus, dir + "/from-aiortc.ivf", dir)
    }

    static func named(_ events: [[String: Any]], _ name: String) -> [[String: Any]] {
        events.filter { $0["event"] as? String == name }
    }

    static func stats(_ events: [[String: Any]], _ type: String, _ kind: String) -> [String: Any]? {
        let report = named(events, "stats").last?["report"] as? [String: Any]
        return (report?["stats"] as? [String: [String: Any]])?.values.first { $0["type"] as? String == type && $0["kind"] as? String == kind }
    }

    static func states(_ events: [[String: Any]]) -> [String] {
        var out: [String] = []
        for e in named(events, "state") { if let s = e["state"] as? String, out.last != s { out.append(s) } }
        return out
    }

    /// aiortc (offering) re-offers `sendonly` 2 s after connecting and `sendrecv` at 5 s;
    /// `peer` (answering) follows each: `recvonly` then `sendrecv` again, states `hold` and
    /// `established`, its video to aiortc paused for the hold (fewer frames sent than a
    /// whole call's), aiortc's video recorded all along and decodable.
    @Test func aiortcReoffersADirectionChangeAndPeerFollows() async throws {
        let r = try await Self.call(peerOffers: false, seconds: 8, peerExtra: [],
                                    aiortcExtra: ["--accept-reoffers", "--reoffer-at", "2:sendonly", "--reoffer-at", "5:sendrecv"])
        defer { try? FileManager.default.removeItem(atPath: r.dir) }
        let renegotiated = Self.named(r.peer, "renegotiated")
        let sent = Self.stats(r.peer, "outbound-rtp", "video")?["framesSent"] as? Int ?? 0
        let written = Self.stats(r.peer, "inbound-rtp", "video")?["framesWritten"] as? Int ?? 0
        let frames = try CallRenegotiationTests.frameTimes(r.ivf)
        let gap = zip(frames.dropFirst(), frames).map { $0 - $1 }.max() ?? 99
        print("aiortc re-offers: peer \(renegotiated.map { "\($0["reason"] ?? "-") \($0["after"] ?? "-") \($0["ms"] ?? "-") ms" }), "
            + "states \(Self.states(r.peer)); peer sent \(sent) frames in \(8) s, wrote \(written) from aiortc (longest gap "
            + "\(String(format: "%.2f", gap)) s); aiortc \(Self.named(r.aiortc, "renegotiated").map { "\($0["by"] ?? "-") \($0["directions"] ?? "-")" })")
        #expect(r.peerStatus == 0 && r.aiortcStatus == 0)
        #expect(renegotiated.count == 2, "\(renegotiated)")
        #expect(renegotiated.allSatisfy { $0["offerer"] as? String == "remote" })
        #expect(renegotiated.first?["after"] as? [String: String] == ["audio": "recvonly", "video": "recvonly"])
        #expect(renegotiated.last?["after"] as? [String: String] == ["audio": "sendrecv", "video": "sendrecv"])
        let states = Self.states(r.peer)
        #expect(states.firstIndex(of: "hold").map { states[$0...].contains("established") } == true, "\(states)")
        #expect(sent < 30 * 6, "peer paused for the 3 s hold: \(sent) frames sent in 8 s")
        #expect(sent > 30 * 4, "and sent before and after it: \(sent)")
        #expect(gap < 0.5, "aiortc's video came all along")
        #expect(try await CallChecks.decodedFrames(r.ivf) == frames.count)
    }

    /// `peer` (offering) holds aiortc at 2 s and unholds at 5 s; aiortc applies and
    /// answers each re-offer: `peer` reports `hold` then `established`, aiortc's answers
    /// come back `recvonly` then `sendrecv` (from aiortc's side), and the call ends cleanly.
    @Test func peerHoldsAndUnholdsAiortc() async throws {
        let r = try await Self.call(peerOffers: true, seconds: 8, peerExtra: ["--at", "2:hold", "--at", "5:unhold"],
                                    aiortcExtra: ["--accept-reoffers"])
        defer { try? FileManager.default.removeItem(atPath: r.dir) }
        let renegotiated = Self.named(r.peer, "renegotiated")
        let aiortcSide = Self.named(r.aiortc, "renegotiated")
        let frames = try CallRenegotiationTests.frameTimes(r.ivf)
        let gap = zip(frames.dropFirst(), frames).map { $0 - $1 }.max() ?? 99
        print("peer holds aiortc: peer \(renegotiated.map { "\($0["reason"] ?? "-") \($0["after"] ?? "-") \($0["ms"] ?? "-") ms" }), "
            + "states \(Self.states(r.peer)); aiortc \(aiortcSide.map { "\($0["directions"] ?? "-")" }); "
            + "aiortc's video at peer \(frames.count) frames, longest gap \(String(format: "%.2f", gap)) s")
        #expect(r.peerStatus == 0 && r.aiortcStatus == 0)
        #expect(renegotiated.count == 2 && renegotiated.allSatisfy { $0["offerer"] as? String == "local" }, "\(renegotiated)")
        #expect(renegotiated.first?["after"] as? [String: String] == ["audio": "sendonly", "video": "sendonly"])
        #expect(renegotiated.last?["after"] as? [String: String] == ["audio": "sendrecv", "video": "sendrecv"])
        #expect(aiortcSide.count == 2)
        #expect(gap > 2.5, "aiortc, held, stopped sending for the hold: longest gap \(gap) s")
        #expect((aiortcSide.first?["directions"] as? [String]) == ["recvonly", "recvonly"])
        let states = Self.states(r.peer)
        #expect(states.firstIndex(of: "hold").map { states[$0...].contains("established") } == true, "\(states)")
        #expect(try await CallChecks.decodedFrames(r.ivf) == frames.count)
    }

    /// `peer` offers; aiortc answers, then holds `peer` (re-offers `sendonly` 2 s after
    /// connecting) and unholds it (`sendrecv` at 5 s). aiortc 1.16's re-offers renumber the
    /// payload types (Opus 111 → 96, VP8 96 → 97: VP8's old number is now Opus's) while
    /// its running sender keeps the old ones; on main `peer` followed the new numbers and
    /// dropped everything aiortc sent from 2 s on, uncounted (its recording ended there:
    /// 62 of 301 frames). Now each m-section keeps taking its previous numbers:
    /// `peer`'s recording of aiortc's video goes on through the hold and after the unhold
    /// (decodable), each section reports the old number once (`previousPayloadType`,
    /// matching what `remapped` renumbered) and its `inbound-rtp` names it, and nothing
    /// aiortc sent was dropped.
    @Test func aiortcAnsweringHoldsAndUnholdsWithRenumberedPayloadTypes() async throws {
        let r = try await Self.call(peerOffers: true, seconds: 10, peerExtra: [],
                                    aiortcExtra: ["--accept-reoffers", "--reoffer-at", "2:sendonly", "--reoffer-at", "5:sendrecv"])
        defer { try? FileManager.default.removeItem(atPath: r.dir) }
        let renegotiated = Self.named(r.peer, "renegotiated")
        let previous = Self.named(r.peer, "previousPayloadType")
        // "mid 0: payload type 111 is now 96; mid 1: payload type 96 is now 97"
        let detail = Self.named(r.peer, "remapped").compactMap { $0["detail"] as? String }.joined(separator: "; ")
        var renumbered: [String: (Int, Int)] = [:]
        for m in detail.matches(of: /mid (\S+): payload type (\d+) is now (\d+)/) {
            if let old = Int(m.2), let new = Int(m.3) { renumbered[String(m.1)] = (old, new) }
        }
        let video = Self.stats(r.peer, "inbound-rtp", "video"), audio = Self.stats(r.peer, "inbound-rtp", "audio")
        let transport = (Self.named(r.peer, "stats").last?["report"] as? [String: Any]).flatMap { ($0["stats"] as? [String: [String: Any]])?["T-bundle"] }
        let frames = try CallRenegotiationTests.frameTimes(r.ivf)
        let gap = zip(frames.dropFirst(), frames).map { $0 - $1 }.max() ?? 99
        let afterUnhold = frames.filter { $0 > 5.5 }.count
        let sent = Self.named(r.aiortc, "result").last?["videoFramesSent"] as? Int ?? 0
        print("aiortc answering holds and unholds: peer \(renegotiated.map { "\($0["reason"] ?? "-") \($0["after"] ?? "-")" }); remapped \(detail); "
            + "previousPayloadType \(previous.map { "mid \($0["mid"] ?? "-") \($0["payloadType"] ?? "-") (negotiated \($0["negotiatedPayloadType"] ?? "-"))" }); "
            + "peer wrote \(frames.count) of aiortc's \(sent) frames, \(afterUnhold) after the unhold, longest gap \(String(format: "%.2f", gap)) s; "
            + "taken with previous numbers: video \(video?["packetsWithPreviousPayloadType"] ?? "-") (\(video?["previousPayloadType"] ?? "-")), "
            + "audio \(audio?["packetsWithPreviousPayloadType"] ?? "-") (\(audio?["previousPayloadType"] ?? "-")) of \(audio?["packetsReceived"] ?? "-"); "
            + "rtpUnknownPayloadTypeDrops \(transport?["rtpUnknownPayloadTypeDrops"] ?? "-")")
        #expect(r.peerStatus == 0 && r.aiortcStatus == 0)
        #expect(renegotiated.compactMap { $0["reason"] as? String } == ["hold", "unhold"] && renegotiated.allSatisfy { $0["offerer"] as? String == "remote" },
                "\(renegotiated)")
        try #require(renumbered.count == 2, "aiortc renumbered both sections: \(detail)")
        #expect(previous.count == 2 && Set(previous.compactMap { $0["mid"] as? String }) == Set(renumbered.keys), "once per m-section: \(previous)")
        for e in previous {
            let mid = e["mid"] as? String ?? "-"
            #expect(e["payloadType"] as? Int == renumbered[mid]?.0 && e["negotiatedPayloadType"] as? Int == renumbered[mid]?.1, "\(e) vs \(detail)")
        }
        let videoMid = video?["mid"] as? String ?? "-", audioMid = audio?["mid"] as? String ?? "-"
        #expect(video?["previousPayloadType"] as? Int == renumbered[videoMid]?.0 && (video?["packetsWithPreviousPayloadType"] as? Int ?? 0) > 100)
        #expect(audio?["previousPayloadType"] as? Int == renumbered[audioMid]?.0 && (audio?["packetsWithPreviousPayloadType"] as? Int ?? 0) > 200)
        #expect(transport?["rtpUnknownPayloadTypeDrops"] as? Int == 0 && transport?["rtpUnknownSsrcDrops"] as? Int == 0)
        #expect(afterUnhold >= 30 * 3 && (frames.last ?? 0) > 8, "aiortc's video after the unhold: \(afterUnhold) frames, last at \(frames.last ?? 0) s")
        #expect(gap < 0.5, "and all along: longest gap \(gap) s")
        #expect(frames.count >= sent - 15, "\(frames.count) of \(sent)")
        #expect(try await CallChecks.decodedFrames(r.ivf) == frames.count)
    }

    /// An aiortc that ignores re-offers: `peer`'s hold re-offer gets no answer; after
    /// `--timeout 3` it is rolled back and reported, the call stays `established` and
    /// ends normally with media both ways.
    @Test func aReofferThatIsNeverAnsweredIsRolledBackAndTheCallGoesOn() async throws {
        // The second hold is taken afresh: the rollback restored the wishes from before the first.
        let r = try await Self.call(peerOffers: true, seconds: 10, peerExtra: ["--at", "1:hold", "--at", "4.5:hold"], aiortcExtra: [], timeout: 3)
        defer { try? FileManager.default.removeItem(atPath: r.dir) }
        let failed = Self.named(r.peer, "renegotiationFailed")
        let actions = Self.named(r.peer, "action")
        #expect(actions.count == 2 && actions.allSatisfy { $0["ok"] as? Bool == true }, "\(actions)")
        let busy = Self.named(r.aiortc, "busy")
        print("ignored re-offer: peer \(failed.map { $0["reason"] ?? "-" }), states \(Self.states(r.peer)); aiortc busy events \(busy.count)")
        #expect(r.peerStatus == 0 && r.aiortcStatus == 0)
        #expect(failed.count == 2)
        #expect(failed.allSatisfy { ($0["reason"] as? String ?? "").contains("no answer within --timeout 3 s") }, "\(failed)")
        #expect(!Self.states(r.peer).contains("hold"))
        #expect(Self.named(r.peer, "renegotiated").isEmpty)
        let written = Self.stats(r.peer, "inbound-rtp", "video")?["framesWritten"] as? Int ?? 0
        #expect(written > 30 * 5, "media went on: \(written) frames from aiortc")
        #expect(busy.count >= 1, "aiortc saw the re-offer and ignored it")
    }
}
