import Foundation
import Testing
import TestSupport

/// Renegotiation against headless Chromium (Debian's `chromium`, driven over WebDriver by
/// `Support/chromium_peer.py`, which loads the project's page `Support/browser/peer-test.html`:
/// a `legacy`-profile peer speaking WAMP to the real router, perfect negotiation, fake
/// camera and microphone). Chromium sets its transceivers `sendonly` and back, calls
/// `restartIce()` and adds a second video track mid-call, and `peer` follows each, the
/// second track recorded to a file of its own; `peer` holds Chromium and unholds, and
/// Chromium's `getStats` shows the pause.
@Suite(.serialized) struct ChromiumRenegotiationTests {
    static let script = TestServices.root.appendingPathComponent("Tests/PeerAgentTests/Support/chromium_peer.py").path

    static func named(_ events: [[String: Any]], _ name: String) -> [[String: Any]] {
        events.filter { $0["event"] as? String == name }
    }

    /// (The window of a hold is taken from 600 ms after its event to 400 ms before the
    /// unhold's: the driver notes the page's events when it polls, up to a loop later.)
    ///
    /// `field` of the first video stats object of `type` in each per-second stats line,
    /// with the line's time (ms); nil where there is no such object (Chromium drops a
    /// receiver's `inbound-rtp` while its transceiver does not receive).
    static func videoSamples(_ events: [[String: Any]], _ type: String, _ field: String) -> [(t: Double, value: Int?)] {
        samples(events, type, field, kind: "video")
    }

    /// `field` of the first stats object of `type` (and `kind`, when given) in each
    /// per-second stats line, with the line's time (ms).
    static func samples(_ events: [[String: Any]], _ type: String, _ field: String, kind: String? = nil) -> [(t: Double, value: Int?)] {
        named(events, "stats").compactMap { e in
            guard let t = e["t"] as? Double, let stats = e["stats"] as? [[String: Any]] else { return nil }
            let video = stats.first { $0["type"] as? String == type && (kind == nil || $0["kind"] as? String == kind) }
            return (t, video?[field] as? Int)
        }
    }

    /// Bytes per second between the first and the last sample that has a value, by the
    /// samples' own times (ms); -1 with fewer than two such samples.
    static func rate(_ samples: [(t: Double, value: Int?)]) -> Double {
        let known = samples.compactMap { s in s.value.map { (t: s.t, value: $0) } }
        guard let first = known.first, let last = known.last, last.t > first.t else { return -1 }
        return Double(last.value - first.value) * 1000 / (last.t - first.t)
    }

    /// `peer SUBCOMMAND` and the Chromium page in the other role; the answerer first.
    /// `chromiumExtra` goes to chromium_peer.py (its data channel options).
    static func call(peerOffers: Bool, peerExtra: [String], chromiumActions: [String], seconds: Double, chromiumExtra: [String] = [])
        async throws -> (peer: PeerRun, chromium: [[String: Any]], chromiumStatus: Int32, h: CallHarness) {
        try #require(FileManager.default.isExecutableFile(atPath: "/usr/bin/chromium"), "no chromium: run scripts/bootstrap")
        let services = try await TestServices.shared()
        let router = try #require(services.router_url)
        let h = CallHarness("chromium-\(peerOffers ? "o" : "a")")
        let args = ["--router", router, "--local-address", "127.0.0.1", "--video", "pattern:320x240@30",
                    "--duration", String(seconds), "--timeout", "20", "--json"] + peerExtra
        let chromiumArgs = [Self.script, "--router", router, "--prefix", h.prefix, "--role", peerOffers ? "answer" : "offer",
                            "--duration", String(seconds + 2), "--timeout", "30"] + chromiumActions.flatMap { ["--at", $0] } + chromiumExtra
        var chromium: JSONLineProcess?
        defer { chromium?.kill() }
        let peer: PeerRun
        if peerOffers {
            let c = try JSONLineProcess("chromium", "/usr/bin/python3", chromiumArgs)
            chromium = c
            _ = try await c.next(timeout: 30, "ready", failOnErrorEvent: true) { $0["event"] as? String == "ready" }
            peer = try await h.run("peer", "offer", args, timeout: seconds + 40)
        } else {
            async let run = h.run("peer", "answer", args, timeout: seconds + 40)
            #expect(await h.waitForState("peer", "ringing"))
            chromium = try JSONLineProcess("chromium", "/usr/bin/python3", chromiumArgs)
            peer = try await run
        }
        let c = try #require(chromium)
        let status = try await c.exitStatus(timeout: 30)
        if status != 0 { print("chromium driver stderr: \(c.stderr)\nevents: \(c.events().suffix(10))") }
        return (peer, c.events(), status, h)
    }

    /// Chromium offers; 3 s after connecting it sets its transceivers `sendonly` (it holds
    /// `peer`), at 6 s `sendrecv`, at 8 s calls `restartIce()`, at 10 s adds a second
    /// camera track and at 13 s stops it. `peer` answers each: `recvonly` (its video to
    /// Chromium stops: Chromium drops the inbound-rtp), `sendrecv`, new ICE credentials, a
    /// `recvonly` second video section recorded to `peer-mid2.ivf`, and that section
    /// stopped (port 0, `inactive`), its file closed and decodable.
    @Test func chromiumRenegotiatesAndPeerFollows() async throws {
        try await CallSlots.with(peers: 3) {
            let r = try await Self.call(peerOffers: false, peerExtra: [],
                                        chromiumActions: ["3:sendonly", "6:sendrecv", "8:restart-ice", "10:add-video", "13:stop-video"], seconds: 15)
            defer { r.h.remove() }
            let renegotiated = r.peer.events("renegotiated")
            let reasons = renegotiated.compactMap { $0["reason"] as? String }
            let actions = Self.named(r.chromium, "action")
            let result = Self.named(r.chromium, "result").last
            let ufrags = result?["ufrags"] as? [String] ?? []
            let inbound = Self.videoSamples(r.chromium, "inbound-rtp", "framesReceived")
            let holdAt = actions.first { $0["action"] as? String == "sendonly" }?["t"] as? Double ?? 0
            let unholdAt = actions.first { $0["action"] as? String == "sendrecv" }?["t"] as? Double ?? 0
            let during = inbound.filter { $0.t > holdAt + 600 && $0.t < unholdAt - 400 }
            // What reached Chromium while it held peer: its transport's bytes (the inbound-rtp
            // is gone then), RTCP only — peer's video and audio toward it stopped.
            let bytes = Self.samples(r.chromium, "transport", "bytesReceived")
            let heldRate = Self.rate(bytes.filter { $0.t > holdAt + 600 && $0.t < unholdAt - 400 })
            // From the connection to the hold (3 s, so two or three samples even when a
            // loaded machine stretches the driver's one-second loop).
            let beforeRate = Self.rate(bytes.filter { $0.t < holdAt })
            let after = inbound.filter { $0.t > unholdAt + 1500 && $0.t < unholdAt + 4000 }.compactMap(\.value)
            let second = r.h.path("peer-mid2.ivf")
            print("chromium renegotiates: peer \(renegotiated.map { "\($0["reason"] ?? "-") \($0["after"] ?? "-") \($0["ms"] ?? "-") ms" }); "
                + "states \(CallRenegotiationTests.states(r.peer)); Chromium framesReceived during its hold \(during.map { $0.value.map(String.init) ?? "no inbound-rtp" }), "
                + "after \(after); ufrags \(ufrags)")
            #expect(r.peer.status == 0 && r.chromiumStatus == 0, "\(r.peer.log)")
            #expect(reasons == ["hold", "unhold", "ice-restart", "update", "update"], "\(renegotiated)")
            #expect(renegotiated.allSatisfy { $0["offerer"] as? String == "remote" })
            #expect(renegotiated.first?["after"] as? [String: String] == ["audio": "recvonly", "video": "recvonly"])
            #expect(renegotiated.dropLast().last?["after"] as? [String: String] == ["audio": "sendrecv", "video": "sendrecv", "video:2": "recvonly"])
            #expect(renegotiated.last?["after"] as? [String: String] == ["audio": "sendrecv", "video": "sendrecv", "video:2": "inactive"])
            let states = CallRenegotiationTests.states(r.peer)
            #expect(states.firstIndex(of: "hold").map { states[$0...].contains("established") } == true, "\(states)")
            print("chromium renegotiates: Chromium's transport received \(Int(beforeRate)) bytes/s before its hold, \(Int(heldRate)) during it")
            #expect(during.count >= 2 && Set(during.compactMap(\.value)).count <= 1, "no frames reached Chromium while held: \(during)")
            #expect(heldRate >= 0 && heldRate < 2_000 && beforeRate > 5 * max(heldRate, 400), "peer stopped sending while held: \(heldRate) vs \(beforeRate) bytes/s")
            #expect(after.count >= 2 && after.last ?? 0 > after.first ?? Int.max, "and sent again: \(after)")
            #expect(ufrags.count == 2 && ufrags[0] != ufrags[1], "Chromium restarted ICE: \(ufrags)")
            #expect(r.peer.events("track").contains { $0["mid"] as? String == "2" && $0["kind"] as? String == "video" })
            #expect(try await CallChecks.decodedFrames(second) >= 30, "the second track's own file")
            #expect(try await CallChecks.decodedFrames(r.h.path("peer.ivf")) >= 100)
        }
    }

    /// `peer` offers; Chromium answers, then holds `peer` (its transceivers `sendonly` 3 s
    /// after connecting) and unholds it (`sendrecv` at 6 s), re-offering each time. Unlike
    /// aiortc, Chromium's re-offers keep the payload types agreed (RFC 8829 §5.2.2), so
    /// nothing is renumbered: no `remapped` and no `previousPayloadType` event, no packet
    /// taken with a previous number or dropped for its payload type — and `peer`'s
    /// recording of Chromium goes on through the hold and after the unhold.
    @Test func chromiumAnsweringHoldsAndUnholdsWithoutRenumbering() async throws {
        try await CallSlots.with(peers: 3) {
            let r = try await Self.call(peerOffers: true, peerExtra: [], chromiumActions: ["3:sendonly", "6:sendrecv"], seconds: 10)
            defer { r.h.remove() }
            let renegotiated = r.peer.events("renegotiated")
            let report = (r.peer.events("stats").last?["report"] as? [String: Any])?["stats"] as? [String: [String: Any]] ?? [:]
            let video = report.values.first { $0["type"] as? String == "inbound-rtp" && $0["kind"] as? String == "video" }
            let transport = report["T-bundle"]
            let frames = try CallRenegotiationTests.frameTimes(r.h.path("peer.ivf"))
            let afterUnhold = frames.filter { $0 > 6.5 }.count
            print("chromium answering holds and unholds: peer \(renegotiated.map { "\($0["reason"] ?? "-") \($0["offerer"] ?? "-")" }); "
                + "remapped \(r.peer.events("remapped").count), previousPayloadType \(r.peer.events("previousPayloadType").count); "
                + "Chromium's video at peer: \(frames.count) frames, \(afterUnhold) after the unhold; "
                + "packetsWithPreviousPayloadType \(video?["packetsWithPreviousPayloadType"] ?? "-"), "
                + "rtpUnknownPayloadTypeDrops \(transport?["rtpUnknownPayloadTypeDrops"] ?? "-")")
            #expect(r.peer.status == 0 && r.chromiumStatus == 0, "\(r.peer.log)")
            #expect(renegotiated.compactMap { $0["reason"] as? String } == ["hold", "unhold"] && renegotiated.allSatisfy { $0["offerer"] as? String == "remote" },
                    "\(renegotiated)")
            #expect(r.peer.events("previousPayloadType").isEmpty && r.peer.events("remapped").isEmpty)
            #expect(video?["packetsWithPreviousPayloadType"] as? Int == 0 && video?["previousPayloadType"] == nil)
            #expect(transport?["rtpUnknownPayloadTypeDrops"] as? Int == 0)
            #expect(afterUnhold >= 20 * 2, "Chromium's video after the unhold: \(afterUnhold) frames")
            #expect(try await CallChecks.decodedFrames(r.h.path("peer.ivf")) == frames.count)
        }
    }

    /// `peer` offers and holds Chromium from 3 s to 9 s: Chromium answers `recvonly` and
    /// back; its `getStats` shows the pause — the held side stops sending (RFC 3264 §8.4):
    /// Chromium's outbound video `framesSent` stands still, and sent again after the
    /// unhold — while `peer`'s video, the holder's, goes on reaching it (`framesReceived`
    /// grows); `peer`'s recording of Chromium has the gap; `peer` reports `hold` then
    /// `established`.
    @Test func peerHoldsChromiumAndGetStatsShowsThePause() async throws {
        try await CallSlots.with(peers: 3) {
            let r = try await Self.call(peerOffers: true, peerExtra: ["--at", "3:hold", "--at", "9:unhold"], chromiumActions: [], seconds: 13)
            defer { r.h.remove() }
            let renegotiated = r.peer.events("renegotiated")
            let page = Self.named(r.chromium, "page").filter { $0["what"] as? String == "renegotiated" }
            let holdAt = page.first?["t"] as? Double ?? 0, unholdAt = page.dropFirst().first?["t"] as? Double ?? 0
            let sent = Self.videoSamples(r.chromium, "outbound-rtp", "framesSent")
            let received = Self.videoSamples(r.chromium, "inbound-rtp", "framesReceived")
            let during = sent.filter { $0.t > holdAt + 600 && $0.t < unholdAt - 400 }.compactMap(\.value)
            let after = sent.filter { $0.t > unholdAt + 1500 }.compactMap(\.value)
            let receivedDuring = received.filter { $0.t > holdAt + 600 && $0.t < unholdAt - 400 }.compactMap(\.value)
            let frames = try CallRenegotiationTests.frameTimes(r.h.path("peer.ivf"))
            let gap = zip(frames.dropFirst(), frames).map { $0 - $1 }.max() ?? 0
            print("peer holds chromium: peer \(renegotiated.map { "\($0["reason"] ?? "-") \($0["ms"] ?? "-") ms" }); Chromium \(page.map { $0["directions"] ?? "-" }); "
                + "framesSent during the hold \(during), after \(after.prefix(3)); framesReceived during the hold \(receivedDuring); "
                + "Chromium's video at peer: longest gap \(String(format: "%.2f", gap)) s")
            #expect(r.peer.status == 0 && r.chromiumStatus == 0, "\(r.peer.log)")
            #expect(renegotiated.compactMap { $0["reason"] as? String } == ["hold", "unhold"])
            #expect(page.count == 2 && (page.first?["directions"] as? [String]) == ["recvonly", "recvonly"], "\(page)")
            #expect(during.count >= 3 && Set(during).count == 1, "Chromium's framesSent stood still: \(during)")
            #expect(after.count >= 2 && after.last ?? 0 > (during.last ?? Int.max), "and grew after the unhold: \(after)")
            #expect(receivedDuring.count >= 3 && receivedDuring.last ?? 0 > receivedDuring.first ?? Int.max, "the holder's video went on: \(receivedDuring)")
            #expect(gap > 4.5, "Chromium, held, stopped sending: longest gap \(gap) s")
            let states = CallRenegotiationTests.states(r.peer)
            #expect(states.firstIndex(of: "hold").map { states[$0...].contains("established") } == true, "\(states)")
        }
    }
}
