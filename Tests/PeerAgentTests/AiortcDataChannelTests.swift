// Data channels between `peer` and aiortc (Support/aiortc_wamp_peer.py with aiortc_data.py) through the real router, legacy trickle, both roles, data only: numbered bursts each way, a 256 KiB message each way, an unordered maxRetransmits=0 channel, the far side's close, stats against aiortc's counts; and aiortc offering the data section in the form before RFC 8841 (a=sctpmap), 64 KiB at most.
import Foundation
import Testing
import TestSupport

@Suite struct AiortcDataChannelTests {
    typealias Child = JSONLineProcess
    static let seconds = 7

    @Test func peerOffersDataChannelsToAiortc() async throws { try await call(peerOffers: true) }

    /// Starts aiortc (`aiortcArgs` to Support/aiortc_wamp_peer.py) and waits for its
    /// `ready`, then peer (`peerArgs`); waits for peer to exit within `peerTimeout` s, then
    /// aiortc within 30 s. Returns both (their events and stderr stay readable) and their
    /// exit statuses; either still running on the way out (a wait that threw) is killed.
    static func run(peer peerArgs: [String], aiortc aiortcArgs: [String],
                    peerTimeout: Double) async throws -> (peer: Child, aiortc: Child, peerStatus: Int32, aiortcStatus: Int32) {
        var peer: Child?, aiortc: Child?
        defer { peer?.kill(); aiortc?.kill() }
        let a = try Child("aiortc", AiortcInteropTests.python, aiortcArgs)
        aiortc = a
        _ = try await a.next(timeout: 15, "ready") { $0["event"] as? String == "ready" }
        let p = try Child("peer", PeerConnectionTests.peer, peerArgs)
        peer = p
        let peerStatus = try await p.exitStatus(timeout: peerTimeout)
        let aiortcStatus = try await a.exitStatus(timeout: 30)
        return (p, a, peerStatus, aiortcStatus)
    }
    @Test func aiortcOffersDataChannelsToPeer() async throws { try await call(peerOffers: false) }

    /// aiortc offers its data section in the form before RFC 8841 (`DTLS/SCTP 5000`,
    /// `a=sctpmap:5000 webrtc-datachannel 65535`, aiortc's legacy switch): peer answers in
    /// that form (aiortc keeps it after reading the answer) and 64 KiB is the most either
    /// side sends — 2,000 numbered messages each way and one of 65,536 bytes each way
    /// arrive; peer's 65,537-byte message is refused with an error naming the limit.
    @Test func aiortcOffersALegacyDataSectionToPeer() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: AiortcInteropTests.python),
                     "no aiortc venv at \(AiortcInteropTests.python): run scripts/bootstrap")
        let services = try await TestServices.shared()
        let router = try #require(services.router_url)
        let prefix = "test.aiortcdata.p\(getpid())legacy"
        let dir = TestServices.temporaryDirectory("aiortc-data-legacy")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let peerArgs = ["answer", "--router", router, "--prefix", prefix, "--video", "none", "--audio", "none",
                        "--video-out", dir + "/in.ivf", "--audio-out", dir + "/in.ogg", "--min-frames", "0",
                        "--duration", "8", "--timeout", "10", "--local-address", "127.0.0.1", "--json",
                        "--data-burst", "chat:2000:1024", "--data-burst", "big:1:65536", "--data-burst", "over:1:65537"]
        let aiortcArgs = [AiortcWampInteropTests.script, "--router", router, "--prefix", prefix, "--profile", "legacy",
                          "--role", "offer", "--no-media", "--sctp-legacy", "--duration", "5", "--timeout", "10",
                          "--data-channel", "chat", "--data-channel", "big", "--data-channel", "over",
                          "--data-burst", "chat:2000:1024", "--data-burst", "big:1:65536", "--udp-receive-buffer", "4194304"]
        let (p, a, peerStatus, aiortcStatus) = try await Self.run(peer: peerArgs, aiortc: aiortcArgs, peerTimeout: 40)
        let peerEvents = p.events(), aiortcEvents = a.events()
        #expect(peerStatus == 0 && aiortcStatus == 0, "peer \(peerStatus), aiortc \(aiortcStatus)\n\(p.stderr.suffix(2000))\n\(a.stderr.suffix(2000))")
        let sctp = aiortcEvents.first { $0["event"] as? String == "sctp" }
        #expect(sctp?["legacySdp"] as? Bool == true && sctp?["remoteMaxMessageSize"] as? Int == 65_536,
                "aiortc after peer's answer: \(String(describing: sctp))")
        let result = try #require(aiortcEvents.last { $0["event"] as? String == "result" }, "\(a.stderr.suffix(2000))")
        let aioData = ((result["peers"] as? [String: [String: Any]])?.values.first?["data"] as? [String: [String: Any]]) ?? [:]
        func summary(_ l: String) -> [String: Any] { peerEvents.last { $0["event"] as? String == "dataSummary" && $0["label"] as? String == l } ?? [:] }
        let errors = peerEvents.filter { $0["event"] as? String == "dataError" }
        print("aiortc legacy data section: aiortc \(String(describing: sctp)); peer chat \(summary("chat")); aiortc chat "
            + "\(aioData["chat"]?.filter { $0.key != "texts" } ?? [:]); peer errors \(errors)")
        let numbered = summary("chat")["numbered"] as? [String: Any], aioNumbered = aioData["chat"]?["numbered"] as? [String: Any]
        #expect(numbered?["received"] as? Int == 2000 && numbered?["missing"] as? Int == 0 && numbered?["outOfOrder"] as? Int == 0,
                "aiortc's 2,000 at peer: \(String(describing: numbered))")
        #expect(aioNumbered?["received"] as? Int == 2000 && aioNumbered?["missing"] as? Int == 0 && aioNumbered?["outOfOrder"] as? Int == 0,
                "peer's 2,000 at aiortc: \(String(describing: aioNumbered))")
        #expect(summary("big")["bytesReceived"] as? Int == 65_536 && aioData["big"]?["bytesReceived"] as? Int == 65_536)
        #expect(aioData["over"]?["messagesReceived"] as? Int == 0)
        #expect(errors.count == 1 && (errors.first?["label"] as? String) == "over"
                && (errors.first?["reason"] as? String)?.contains("a message of 65537 bytes is over the peer's max-message-size 65536") == true,
                "\(errors)")
    }

    /// One data-only call: the offerer makes `chat`, `big`, `fast` (unordered,
    /// maxRetransmits 0) and `bulk`; both send 10,000 numbered 1 KiB messages on `chat`
    /// and one of 256 KiB on `big` (aiortc 1.16 says `a=max-message-size:262144`); the
    /// offerer sends two texts on
    /// `fast`; aiortc closes `bulk` after 4 s.
    func call(peerOffers: Bool) async throws {
        try #require(FileManager.default.isExecutableFile(atPath: AiortcInteropTests.python),
                     "no aiortc venv at \(AiortcInteropTests.python): run scripts/bootstrap")
        let services = try await TestServices.shared()
        let router = try #require(services.router_url)
        let prefix = "test.aiortcdata.p\(getpid())\(peerOffers ? "o" : "a")"
        let dir = TestServices.temporaryDirectory("aiortc-data")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let channels = ["chat", "big", "fast,unordered,retransmits=0", "bulk"]
        let bursts = ["chat:10000:1024", "big:1:262144", "fast:300:100"]
        var peerArgs = [peerOffers ? "offer" : "answer", "--router", router, "--prefix", prefix, "--video", "none", "--audio", "none",
                        "--video-out", dir + "/in.ivf", "--audio-out", dir + "/in.ogg", "--min-frames", "0",
                        "--duration", "\(Self.seconds + (peerOffers ? 0 : 4))", "--timeout", "10", "--local-address", "127.0.0.1", "--json"]
        peerArgs += bursts.flatMap { ["--data-burst", $0] }
        var aiortcArgs = [AiortcWampInteropTests.script, "--router", router, "--prefix", prefix, "--profile", "legacy",
                          "--role", peerOffers ? "answer" : "offer", "--no-media", "--duration", "\(Self.seconds + (peerOffers ? 4 : 0))",
                          "--timeout", "10", "--data-close", "4:bulk",
                          // Its socket would drop thousands of datagrams of the 10 MB bursts
                          // (Udp RcvbufErrors), and what the unordered maxRetransmits=0 channel
                          // then delivers depends on the timing, not on peer.
                          "--udp-receive-buffer", "4194304"]
        aiortcArgs += bursts.flatMap { ["--data-burst", $0] }
        if peerOffers {
            peerArgs += channels.flatMap { ["--data-channel", $0] } + ["--at", "1:send:fast:one", "--at", "1.2:send:fast:two"]
        } else {
            aiortcArgs += channels.flatMap { ["--data-channel", $0] } + ["--data-send", "1:fast:one", "--data-send", "1.2:fast:two"]
        }
        let (p, a, peerStatus, aiortcStatus) = try await Self.run(peer: peerArgs, aiortc: aiortcArgs, peerTimeout: Double(Self.seconds + 30))
        let peerEvents = p.events(), aiortcEvents = a.events()
        let label = "peer \(peerOffers ? "offers" : "answers")"
        #expect(peerStatus == 0 && aiortcStatus == 0, "\(label): peer \(peerStatus), aiortc \(aiortcStatus)\n\(p.stderr.suffix(2000))\n\(a.stderr.suffix(2000))")
        let result = try #require(aiortcEvents.last { $0["event"] as? String == "result" }, "\(label): \(a.stderr.suffix(2000))")
        let aioData = ((result["peers"] as? [String: [String: Any]])?.values.first?["data"] as? [String: [String: Any]]) ?? [:]
        func summary(_ l: String) -> [String: Any] { peerEvents.last { $0["event"] as? String == "dataSummary" && $0["label"] as? String == l } ?? [:] }
        let peerChat = summary("chat"), aioChat = aioData["chat"] ?? [:]
        print("aiortc data, \(label): peer chat \(peerChat); aiortc chat \(aioChat.filter { $0.key != "texts" }); "
            + "aiortc big \(aioData["big"]?.filter { $0.key != "texts" } ?? [:]); errors \(peerEvents.filter { $0["event"] as? String == "dataError" })")
        let numbered = peerChat["numbered"] as? [String: Any], aioNumbered = aioChat["numbered"] as? [String: Any]
        #expect(numbered?["received"] as? Int == 10_000 && numbered?["missing"] as? Int == 0 && numbered?["duplicates"] as? Int == 0
                && numbered?["outOfOrder"] as? Int == 0, "aiortc's 10,000 at peer, in order: \(String(describing: numbered))")
        #expect(aioNumbered?["received"] as? Int == 10_000 && aioNumbered?["missing"] as? Int == 0 && aioNumbered?["duplicates"] as? Int == 0
                && aioNumbered?["outOfOrder"] as? Int == 0, "peer's 10,000 at aiortc, in order: \(String(describing: aioNumbered))")
        #expect(peerChat["messagesSent"] as? Int == aioChat["messagesReceived"] as? Int
                && peerChat["bytesReceived"] as? Int == aioChat["bytesSent"] as? Int, "the counts agree: \(peerChat) vs \(aioChat)")
        let peerFast = summary("fast")["numbered"] as? [String: Any], aioFast = aioData["fast"]?["numbered"] as? [String: Any]
        #expect((peerFast?["received"] as? Int ?? 0) >= 240 && (aioFast?["received"] as? Int ?? 0) >= 240,
                "≥ 80 % of 300 each way on the maxRetransmits=0 channel: \(String(describing: peerFast)), \(String(describing: aioFast))")
        #expect(summary("big")["bytesReceived"] as? Int == 262_144, "aiortc's 256 KiB message arrived whole at peer: \(summary("big"))")
        #expect(aioData["big"]?["bytesReceived"] as? Int == 262_144, "peer's 256 KiB message arrived whole at aiortc (its max-message-size is 262144)")
        #expect(!peerEvents.contains { $0["event"] as? String == "dataError" }, "no data channel error at peer")
        let fastTexts = peerOffers ? (aioData["fast"]?["texts"] as? [String] ?? [])
            : peerEvents.filter { $0["event"] as? String == "message" && $0["label"] as? String == "fast" }.compactMap { $0["text"] as? String }
        // Sent once each (maxRetransmits=0): what a loaded loopback drops stays lost.
        #expect(!fastTexts.isEmpty && Set(fastTexts).isSubset(of: ["one", "two"]), "the unordered maxRetransmits=0 channel: \(fastTexts)")
        if !peerOffers {
            let opened = peerEvents.first { $0["event"] as? String == "datachannel" && $0["label"] as? String == "fast" }
            #expect((opened?["detail"] as? String)?.contains("unordered, maxRetransmits 0") == true, "\(String(describing: opened))")
        }
        let bulk = peerEvents.filter { $0["event"] as? String == "datachannel" && $0["label"] as? String == "bulk" }.compactMap { $0["state"] as? String }
        #expect(bulk.last == "closed", "aiortc's close of bulk reached closed at peer: \(bulk)")
    }
}
