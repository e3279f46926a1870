import Foundation
import Testing
import TestSupport

#if canImport(Glibc)
import Glibc
#endif

/// Issue 9 acceptance against aiortc: `peer offer|answer|room` and an aiortc peer
/// (`Support/aiortc_wamp_peer.py`, aiortc + autobahn) call each other through the real
/// Crossbar.io router, speaking the profiles of `shared/PROTOCOL.md`: legacy vanilla,
/// legacy trickle and room, with `peer` as offerer and as answerer. Both sides must
/// record at least 90 % of the other's video frames. On the wire: descriptions arrive
/// as objects in legacy and JSON strings in room, candidates as JSON strings; vanilla
/// puts every candidate in the description, trickle sends it bare and the candidates
/// after (aiortc gathers everything in setLocalDescription, so its script strips them
/// from its description and trickles them: real trickle both ways). aiortc publishes
/// legacy descriptions as objects with vanilla and as JSON strings with trickle, so
/// peer accepts both forms.
///
/// Each test: a fresh topic prefix (and room). The side that must be listening first
/// starts first (legacy: the answerer; room: the member that receives `callme` and
/// offers), the other once it reports it is subscribed; then both run concurrently.
/// `peer` sends `pattern:320x240@30` and a 440 Hz tone, records to IVF/Ogg; aiortc sends
/// a 320x240 pattern at 30 fps and a 660 Hz tone, decodes and counts what it receives.
///
/// Counting window, like with like: each side starts sending when its own DTLS
/// handshake completes (within a loopback round trip of the other's), and the call
/// ends with one hang-up. When `peer` offers, aiortc hangs up after 5 s: it stops its
/// senders, publishes `close`, keeps receiving for 0.5 s and counts; `peer` gets the
/// close within milliseconds and stops. When `peer` answers, `peer` hangs up after 5 s
/// (`--duration 5`): it publishes `close` and closes its connection; aiortc stops its
/// senders on that close (or the DTLS close_notify, whichever comes first), then
/// counts 0.5 s later. Either way each sender stops within a few ms of the moment the
/// other side stops recording, so the whole-call totals compare: frames aiortc sent
/// against frames in `peer`'s IVF file, frames `peer` sent (its `outbound-rtp`
/// framesSent) against frames aiortc decoded. Both directions of `close` are exercised
/// in each profile.
@Suite(.serialized) struct AiortcWampInteropTests {
    /// The signaling variant under test.
    enum Variant: String {
        case legacyVanilla = "legacy vanilla"
        case legacyTrickle = "legacy trickle"
        case room = "room"
    }

    /// The aiortc+autobahn peer.
    static let script = TestServices.root.appendingPathComponent("Tests/PeerAgentTests/Support/aiortc_wamp_peer.py").path

    /// Seconds of media before the hang-up.
    static let seconds = 5

    @Test func legacyVanillaPeerOffers() async throws { try await call(.legacyVanilla, peerOffers: true) }
    @Test func legacyVanillaPeerAnswers() async throws { try await call(.legacyVanilla, peerOffers: false) }
    @Test func legacyTricklePeerOffers() async throws { try await call(.legacyTrickle, peerOffers: true) }
    @Test func legacyTricklePeerAnswers() async throws { try await call(.legacyTrickle, peerOffers: false) }
    /// Room: aiortc joins second, `peer` receives its `callme` and offers.
    @Test func roomPeerOffers() async throws { try await call(.room, peerOffers: true) }
    /// Room: `peer` joins second, aiortc receives its `callme` and offers.
    @Test func roomPeerAnswers() async throws { try await call(.room, peerOffers: false) }
    /// Legacy trickle, the answer joining late: aiortc subscribes only after peer published
    /// its first offer (and trickled its candidates to nobody), so it answers the offer
    /// peer republishes 3 s later, which must carry peer's candidates by then.
    @Test func legacyTricklePeerOffersToALateAnswerer() async throws {
        try await call(.legacyTrickle, peerOffers: true, answererLate: true)
    }
    /// Candidates before the offer (aiortc publishes them first): peer holds them for the
    /// connection the offer makes instead of dropping them (each topic's events reach the
    /// call on a task of their own, so a candidate can overtake the offer anyway).
    @Test func roomPeerAnswersCandidatesThatCameBeforeTheOffer() async throws {
        try await call(.room, peerOffers: false, candidatesFirst: true)
    }
    @Test func legacyTricklePeerAnswersCandidatesThatCameBeforeTheOffer() async throws {
        try await call(.legacyTrickle, peerOffers: false, candidatesFirst: true)
    }

    // MARK: The call

    func call(_ variant: Variant, peerOffers: Bool, answererLate: Bool = false, candidatesFirst: Bool = false) async throws {
        let label = "\(variant.rawValue), peer \(peerOffers ? "offers" : "answers")\(answererLate ? " to a late answerer" : "")"
            + (candidatesFirst ? ", candidates before the offer" : "")
        try #require(FileManager.default.isExecutableFile(atPath: AiortcInteropTests.python),
                     "no aiortc venv at \(AiortcInteropTests.python): run scripts/bootstrap")
        let services = try await TestServices.shared()
        let router = try #require(services.router_url, "no router in services.json")
        let realm = services.realm ?? "realm1"
        // Unique per test process and test (several processes may share the router).
        let tag = "p\(getpid())\(variant == .legacyVanilla ? "v" : variant == .legacyTrickle ? "t" : "r")"
            + (peerOffers ? "o" : "a") + (answererLate ? "l" : "") + (candidatesFirst ? "c" : "")
        let prefix = "test.aiortcwamp.\(tag)"
        let room = "room\(tag)"
        let peerUser = "peer\(tag)", aiortcUser = "aio\(tag)"
        let dir = TestServices.temporaryDirectory("aiortc-wamp")
        defer { try? FileManager.default.removeItem(atPath: dir) }

        // Who hangs up: aiortc when peer offers, peer when it answers (see the suite doc).
        // The other side's --duration is only a fallback; in a room peer stays until its
        // own duration (a room outlives one member), so there it gets 2 s of margin only.
        let peerHangsUp = !peerOffers
        let peerDuration = peerHangsUp ? Self.seconds : (variant == .room ? Self.seconds + 2 : Self.seconds + 4)
        let aiortcDuration = peerHangsUp ? Self.seconds + 4 : Self.seconds
        let trickle = variant != .legacyVanilla

        var peerArgs: [String]
        var aiortcArgs = ["--router", router, "--realm", realm, "--prefix", prefix, trickle ? "--trickle" : "--vanilla",
                          "--duration", "\(aiortcDuration)", "--timeout", "10", "--width", "320", "--height", "240",
                          "--fps", "30", "--tone", "660"] + (candidatesFirst ? ["--candidates-first"] : [])
        if variant == .room {
            peerArgs = ["room", "--room", room, "--user", peerUser]
            aiortcArgs += ["--profile", "room", "--room", room, "--user", aiortcUser]
        } else {
            peerArgs = [peerOffers ? "offer" : "answer"]
            // Legacy descriptions from aiortc: JSON objects with vanilla, JSON strings (the
            // historic form peer must accept too) with trickle.
            aiortcArgs += ["--profile", "legacy", "--role", peerOffers ? "answer" : "offer",
                           "--payload", variant == .legacyTrickle ? "string" : "object"]
        }
        peerArgs += ["--router", router, "--realm", realm, "--prefix", prefix, trickle ? "--trickle" : "--vanilla",
                     "--video", "pattern:320x240@30", "--audio", "tone:440",
                     "--video-out", dir + "/from-aiortc.ivf", "--audio-out", dir + "/from-aiortc.ogg",
                     "--duration", "\(peerDuration)", "--timeout", "10", "--local-address", "127.0.0.1", "--json"]

        // The listener first (legacy: the answerer, unless it is to join late; room: the
        // member that gets callme).
        let peerFirst = variant == .room ? peerOffers : (answererLate ? peerOffers : !peerOffers)
        let started = Date()
        var peer: Child?, aiortc: Child?
        defer { peer?.kill(); aiortc?.kill() }
        if peerFirst {
            let p = try Child("peer", PeerConnectionTests.peer, peerArgs)
            peer = p
            _ = try await p.next(timeout: 10, "subscribed (state ringing)") { $0["event"] as? String == "state" && $0["state"] as? String == "ringing" }
            aiortc = try Child("aiortc", AiortcInteropTests.python, [Self.script] + aiortcArgs)
        } else {
            let a = try Child("aiortc", AiortcInteropTests.python, [Self.script] + aiortcArgs)
            aiortc = a
            _ = try await a.next(timeout: 15, "ready") { $0["event"] as? String == "ready" }
            peer = try Child("peer", PeerConnectionTests.peer, peerArgs)
        }
        let peerProcess = try #require(peer), aiortcProcess = try #require(aiortc)
        let peerStatus = try await peerProcess.exitStatus(timeout: 30)
        let aiortcStatus = try await aiortcProcess.exitStatus(timeout: 30)
        let wall = Date().timeIntervalSince(started)

        // What each side said.
        let peerEvents = peerProcess.events(), aiortcEvents = aiortcProcess.events()
        let result = try #require(aiortcEvents.last { $0["event"] as? String == "result" },
                                  "\(label): aiortc printed no result (exit \(aiortcStatus)); stderr: \(aiortcProcess.stderr)")
        let statsEvent = try #require(peerEvents.last { $0["event"] as? String == "stats" },
                                      "\(label): peer printed no stats (exit \(peerStatus)); stderr: \(peerProcess.stderr)")
        let report = try #require(statsEvent["report"] as? [String: Any])
        let stats = try #require(report["stats"] as? [String: [String: Any]])
        func object(_ type: String, _ kind: String) -> [String: Any]? {
            stats.values.first { $0["type"] as? String == type && $0["kind"] as? String == kind }
        }
        let outVideo = try #require(object("outbound-rtp", "video"))
        let outAudio = try #require(object("outbound-rtp", "audio"))
        let inVideo = try #require(object("inbound-rtp", "video"))
        let inAudio = try #require(object("inbound-rtp", "audio"))
        let peerFramesSent = outVideo["framesSent"] as? Int ?? 0
        let peerFramesWritten = inVideo["framesWritten"] as? Int ?? 0
        let peerFramesDecoded = inVideo["framesDecoded"] as? Int ?? 0
        let peerAudioSent = outAudio["packetsSent"] as? Int ?? 0
        let peerAudioWritten = inAudio["framesWritten"] as? Int ?? 0
        let aiortcVideoSent = result["videoFramesSent"] as? Int ?? 0
        let aiortcVideoReceived = result["videoFramesReceived"] as? Int ?? 0
        let aiortcAudioSent = result["audioFramesSent"] as? Int ?? 0
        let aiortcAudioReceived = result["audioFramesReceived"] as? Int ?? 0
        let aiortcPeers = result["peers"] as? [String: [String: Any]] ?? [:]
        let aiortcSide = aiortcPeers.values.first ?? [:]
        let heard = aiortcSide["audioFrequencyHz"] as? Double ?? 0

        // The recorded file: vpxdec decodes it, ffprobe counts what the stats say.
        let ivf = try #require(statsEvent["video"] as? String)
        let vpxdec = try await TestServices.run("/usr/bin/vpxdec", ["--md5", "--i420", ivf], timeout: 60)
        let probe = try await TestServices.run("/usr/bin/ffprobe", ["-v", "error", "-count_frames", "-select_streams", "v:0",
                                                                    "-show_entries", "stream=nb_read_frames,width,height",
                                                                    "-of", "csv=p=0", ivf], timeout: 60)
        let fields = probe.stdout.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: ",").map(String.init)
        let ivfFrames = fields.count == 3 ? Int(fields[2]) ?? -1 : -1

        // Signaling as seen on the wire.
        let peerRemoteCandidates = peerEvents.filter { $0["event"] as? String == "candidate" && $0["direction"] as? String == "remote" }.count
        let peerLocalCandidates = peerEvents.filter { $0["event"] as? String == "candidate" && $0["direction"] as? String == "local" }.count
        let aiortcTrickled = aiortcEvents.filter { $0["event"] as? String == "received" && $0["what"] as? String == "candidate" }
        let aiortcEnd = aiortcEvents.filter { $0["event"] as? String == "received" && $0["what"] as? String == "end-of-candidates" }
        let aiortcGotClose = aiortcEvents.contains { $0["event"] as? String == "received" && $0["what"] as? String == "close" }
        let aiortcDescription = aiortcEvents.first {
            $0["event"] as? String == "received" && ($0["what"] as? String == "offer" || $0["what"] as? String == "answer")
        }
        let candidatesInPeerSDP = aiortcDescription?["candidates"] as? Int ?? -1
        let signalingErrors = peerEvents.filter { $0["event"] as? String == "signalingError" }
            + aiortcEvents.filter { $0["event"] as? String == "signalingError" }
        let peerExit = peerEvents.last { $0["event"] as? String == "exit" }
        func milestone(_ name: String) -> String {
            (peerEvents.first { $0["event"] as? String == "milestone" && $0["name"] as? String == name }?["t"] as? Double)
                .map { String(format: "%.0f", $0) } ?? "-"
        }

        print("""
            aiortc over WAMP (\(label), aiortc \(result["aiortc"] as? String ?? "?"), \(String(format: "%.1f", wall)) s wall):
              exits: peer \(peerStatus) (\(peerExit?["state"] ?? "-"), \(peerExit?["reason"] ?? "-")), aiortc \(aiortcStatus) \
            (ended by \(result["endedBy"] ?? "-"), sending \(aiortcSide["sendingSeconds"] ?? "-") s)
              video aiortc→peer: aiortc sent \(aiortcVideoSent), peer wrote \(peerFramesWritten) \
            (\(Self.percent(peerFramesWritten, of: aiortcVideoSent))), decoded \(peerFramesDecoded), IVF \(fields) \
            vpxdec \(vpxdec.status), lost \(inVideo["packetsLost"] ?? "-"), nack \(inVideo["nackCount"] ?? "-"), pli \(inVideo["pliCount"] ?? "-")
              video peer→aiortc: peer sent \(peerFramesSent), aiortc decoded \(aiortcVideoReceived) \
            (\(Self.percent(aiortcVideoReceived, of: peerFramesSent))) at \(aiortcSide["videoSizesReceived"] ?? "-")
              audio: aiortc sent \(aiortcAudioSent), peer wrote \(peerAudioWritten) (\(Self.percent(peerAudioWritten, of: aiortcAudioSent))); \
            peer sent \(peerAudioSent), aiortc decoded \(aiortcAudioReceived) (\(Self.percent(aiortcAudioReceived, of: peerAudioSent))), \
            heard \(heard) Hz
              ICE: peer's description held \(candidatesInPeerSDP) candidates; peer trickled \(peerLocalCandidates) \
            (aiortc got \(aiortcTrickled.count), end-of-candidates \(aiortcEnd.count)), aiortc trickled \(peerRemoteCandidates) to peer; \
            peer t(ms): joined \(milestone("joined")), ICE \(milestone("iceConnected")), DTLS \(milestone("dtlsConnected")), \
            first frame \(milestone("firstRemoteFrame")); signaling errors \(signalingErrors.count)
            """)

        // Both end cleanly, and the hang-up went the way it was meant to.
        #expect(peerStatus == 0, "\(label): peer exited \(peerStatus): \(peerExit ?? [:]); stderr: \(peerProcess.stderr)")
        #expect(aiortcStatus == 0, "\(label): aiortc exited \(aiortcStatus); stderr: \(aiortcProcess.stderr)")
        #expect(result["endedBy"] as? String == (peerHangsUp ? "peer" : "duration"), "\(label): \(result["endedBy"] ?? "-")")
        if peerHangsUp {
            #expect(aiortcGotClose, "\(label): peer's close never reached aiortc")
        } else {
            if variant == .room {
                #expect(peerEvents.contains { $0["event"] as? String == "peerLeft" && $0["user"] as? String == aiortcUser })
            } else {
                #expect((peerExit?["reason"] as? String)?.contains("close") == true, "peer's end: \(peerExit ?? [:])")
            }
        }
        #expect(signalingErrors.isEmpty, "\(label): \(signalingErrors)")
        if variant == .room {
            #expect(statsEvent["peer"] as? String == aiortcUser)
            #expect(aiortcPeers.keys.sorted() == [peerUser])
        }

        // ICE as the profile says: vanilla carries every candidate in the description and
        // trickles nothing; trickle sends the description at once (peer's with the host
        // candidates it already has) and every candidate after, both ways.
        // Descriptions: an object in legacy (peer's default), a JSON string in room;
        // candidates always JSON strings.
        #expect(aiortcDescription?["as"] as? String == (variant == .room ? "string" : "object"),
                "peer's description came as \(aiortcDescription?["as"] ?? "nothing")")
        if answererLate {
            // The trickled candidates went out before aiortc listened: the republished
            // offer must hold them.
            #expect(candidatesInPeerSDP > 0, "peer's republished offer holds \(candidatesInPeerSDP) candidates")
            #expect(peerRemoteCandidates > 0, "aiortc's trickled candidates reached peer")
        } else if trickle {
            #expect(peerLocalCandidates > 0 && aiortcTrickled.count == peerLocalCandidates,
                    "peer trickled \(peerLocalCandidates), aiortc got \(aiortcTrickled.count)")
            #expect((aiortcTrickled + aiortcEnd).allSatisfy { $0["as"] as? String == "string" })
            #expect(aiortcEnd.count == 1, "peer's end-of-candidates reached aiortc \(aiortcEnd.count) times")
            #expect(peerRemoteCandidates > 0, "aiortc's trickled candidates reached peer")
        } else {
            #expect(candidatesInPeerSDP > 0, "peer's vanilla description has candidates")
            #expect(peerLocalCandidates == 0 && aiortcTrickled.isEmpty && peerRemoteCandidates == 0)
        }

        // The call lasted: 5 s at 30 fps each way (80 % of it, for a busy machine).
        #expect(aiortcVideoSent >= Self.seconds * 30 * 8 / 10, "aiortc sent only \(aiortcVideoSent) frames")
        #expect(peerFramesSent >= Self.seconds * 30 * 8 / 10, "peer sent only \(peerFramesSent) frames")

        // aiortc → peer: the IVF decodes, holds what the stats say, ≥ 90 % of what aiortc sent.
        #expect(vpxdec.status == 0, "vpxdec \(ivf): \(vpxdec.stderr)")
        #expect(fields.first == "320" && fields.dropFirst().first == "240", "IVF \(fields)")
        #expect(ivfFrames == peerFramesWritten, "IVF frames \(fields) vs framesWritten \(peerFramesWritten)")
        #expect(Double(ivfFrames) >= 0.9 * Double(aiortcVideoSent), "\(label): peer recorded \(ivfFrames) of \(aiortcVideoSent)")
        #expect(ivfFrames <= aiortcVideoSent)
        #expect(Double(peerFramesDecoded) >= 0.9 * Double(aiortcVideoSent))

        // peer → aiortc: ≥ 90 % of the frames peer sent decoded, at the size sent.
        #expect(Double(aiortcVideoReceived) >= 0.9 * Double(peerFramesSent),
                "\(label): aiortc decoded \(aiortcVideoReceived) of \(peerFramesSent)")
        #expect(aiortcVideoReceived <= peerFramesSent)
        #expect(aiortcSide["videoSizesReceived"] as? [String] == ["320x240"])

        // Audio both ways, and aiortc hears peer's tone.
        #expect(Double(peerAudioWritten) >= 0.9 * Double(aiortcAudioSent), "peer wrote \(peerAudioWritten) of \(aiortcAudioSent) Opus packets")
        #expect(Double(aiortcAudioReceived) >= 0.9 * Double(peerAudioSent), "aiortc decoded \(aiortcAudioReceived) of \(peerAudioSent)")
        #expect(abs(heard - 440) < 10, "aiortc heard \(heard) Hz")
    }

    static func percent(_ part: Int, of whole: Int) -> String {
        whole == 0 ? "-" : String(format: "%.1f %%", 100 * Double(part) / Double(whole))
    }

    // MARK: Child processes

    /// A child process printing JSON lines (peer --json, the aiortc peer).
    typealias Child = JSONLineProcess
}
