// Data channels between `peer` and headless Chromium (the project's page, Support/browser/peer-test.html) through the real router, both roles, bundled with audio and video: numbered bursts each way, 256 KiB each way, an unordered maxRetransmits=0 channel, the far side's close, counts against Chromium's getStats, and the control channel driven from Chromium.
import Foundation
import Testing
import TestSupport

@Suite struct ChromiumDataChannelTests {
    static let channels = ["chat", "big", "fast,unordered,retransmits=0", "bulk"]
    static let bursts = ["chat:10000:1024", "big:1:262144", "fast:300:100"]
    /// Texts sent once each on `fast` (maxRetransmits 0) from 1 s, 0.2 s apart: five, so that
    /// loopback loss under the bursts (seen: both of two lost) leaves at least one.
    static let texts = ["one", "two", "three", "four", "five"]
    static let textActions = zip(["1", "1.2", "1.4", "1.6", "1.8"], texts).map { "\($0):send:fast:\($1)" }

    /// The page's data counts in its result line.
    static func pageData(_ events: [[String: Any]]) -> [String: [String: Any]] {
        ChromiumRenegotiationTests.named(events, "result").last?["data"] as? [String: [String: Any]] ?? [:]
    }

    /// The offerer makes the channels; each side sends its bursts; the offerer sends two
    /// texts on `fast`; the answerer closes `bulk` at 4 s. Then: 10,000 each way in order,
    /// none missing or repeated; 256 KiB each way whole; `fast` unordered with
    /// maxRetransmits 0 on the answering side; `bulk` closed on the offering side; peer's
    /// `data-channel` stats against the page's counts and Chromium's `data-channel` stats.
    @Test(arguments: [true, false])
    func dataChannelsWithChromium(peerOffers: Bool) async throws {
        try await CallSlots.with(peers: 3) {
            var peerExtra = Self.bursts.flatMap { ["--data-burst", $0] }
            var chromiumExtra = Self.bursts.flatMap { ["--data-burst", $0] }
            var chromiumActions: [String] = []
            if peerOffers {
                peerExtra += Self.channels.flatMap { ["--data-channel", $0] } + Self.textActions.flatMap { ["--at", $0] }
                chromiumActions = ["4:close:bulk"]
            } else {
                chromiumExtra += Self.channels.flatMap { ["--data-channel", $0] }
                chromiumActions = Self.textActions
                peerExtra += ["--at", "4:close:bulk"]
            }
            let r = try await ChromiumRenegotiationTests.call(peerOffers: peerOffers, peerExtra: peerExtra, chromiumActions: chromiumActions,
                                                               seconds: 20, chromiumExtra: chromiumExtra)
            defer { r.h.remove() }
            #expect(r.peer.status == 0 && r.chromiumStatus == 0, "\(r.peer.log)")
            let page = Self.pageData(r.chromium)
            let summary = { (l: String) in r.peer.events("dataSummary").last { $0["label"] as? String == l } ?? [:] }
            let chat = summary("chat"), pageChat = page["chat"] ?? [:]
            print("chromium data, peer \(peerOffers ? "offers" : "answers"): peer chat \(chat); page chat \(pageChat.filter { $0.key != "texts" }); "
                + "page big \(page["big"]?.filter { $0.key != "texts" } ?? [:]); peer errors \(r.peer.events("dataError"))")
            let sctp = ((r.peer.events("stats").last?["report"] as? [String: Any])?["stats"] as? [String: [String: Any]])?["SCTP"]
            print("chromium data: peer's sctp-transport \(String(describing: sctp))")
            // Chromium's own getStats `data-channel` object (its per-second samples: a closed
            // channel's object is gone by the final one).
            let received = ChromiumRenegotiationTests.samples(r.chromium, "data-channel", "messagesReceived")
            let browserChat = ChromiumRenegotiationTests.named(r.chromium, "stats").compactMap { e in
                (e["stats"] as? [[String: Any]])?.first { $0["type"] as? String == "data-channel" && $0["label"] as? String == "chat" }
            }.last
            let numbered = chat["numbered"] as? [String: Any], pageNumbered = pageChat["numbered"] as? [String: Any]
            #expect(pageNumbered?["received"] as? Int == 10_000 && pageNumbered?["missing"] as? Int == 0 && pageNumbered?["duplicates"] as? Int == 0
                    && pageNumbered?["outOfOrder"] as? Int == 0, "peer's 10,000 at Chromium: \(String(describing: pageNumbered))")
            #expect(chat["messagesSent"] as? Int == pageChat["messagesReceived"] as? Int && browserChat?["messagesReceived"] as? Int == chat["messagesSent"] as? Int,
                    "peer's sends against the page's and Chromium's counts: \(String(describing: browserChat)); samples \(received.suffix(4))")
            // Chromium → peer: every message Chromium's data channel handed to its SCTP (its
            // getStats messagesSent and bytesSent) reaches peer once, in order.
            let chromiumSent = browserChat?["messagesSent"] as? Int
            #expect(numbered?["received"] as? Int == chromiumSent && chat["bytesReceived"] as? Int == browserChat?["bytesSent"] as? Int
                    && numbered?["duplicates"] as? Int == 0 && numbered?["outOfOrder"] as? Int == 0,
                    "what Chromium sent at peer: \(String(describing: numbered)); Chromium's getStats \(String(describing: browserChat))")
            if let sent = chromiumSent, sent < 10_000, pageChat["messagesSent"] as? Int == 10_000 {
                // Seen once in CI (1 run in ~30): the page's send() took all 10,000 without an
                // error, Chromium's getStats counted 9,544 sent and peer received exactly those
                // 9,544 (456 missing in the middle, the rest in order), the page's
                // bufferedAmount having stalled twice. A loss inside Chromium, above its SCTP.
                withKnownIssue("Chromium's data channel sent \(sent) of the 10,000 its page gave it (getStats messagesSent); peer received \(String(describing: numbered))") {
                    Issue.record("Chromium lost \(10_000 - sent) messages above its SCTP")
                }
            } else {
                #expect(numbered?["received"] as? Int == 10_000 && numbered?["missing"] as? Int == 0,
                        "Chromium's 10,000 at peer: \(String(describing: numbered)); Chromium's getStats \(String(describing: browserChat))")
            }
            let peerFast = summary("fast")["numbered"] as? [String: Any], pageFast = page["fast"]?["numbered"] as? [String: Any]
            #expect((peerFast?["received"] as? Int ?? 0) >= 240 && (pageFast?["received"] as? Int ?? 0) >= 240,
                    "≥ 80 % of 300 each way on the maxRetransmits=0 channel: \(String(describing: peerFast)), \(String(describing: pageFast))")
            #expect(summary("big")["bytesReceived"] as? Int == 262_144 && page["big"]?["bytesReceived"] as? Int == 262_144, "256 KiB each way")
            let fast = peerOffers ? (page["fast"]?["texts"] as? [String] ?? [])
                : r.peer.events("message").filter { $0["label"] as? String == "fast" }.compactMap { $0["text"] as? String }
            // Sent once each (maxRetransmits=0): what a loaded loopback drops stays lost.
            #expect(!fast.isEmpty && Set(fast).isSubset(of: Self.texts), "the unordered maxRetransmits=0 channel: \(fast)")
            if peerOffers {
                let states = r.peer.events("datachannel").filter { $0["label"] as? String == "bulk" }.compactMap { $0["state"] as? String }
                #expect(states.last == "closed", "Chromium's close of bulk reached closed at peer: \(states)")
            } else {
                #expect((page["bulk"]?["states"] as? [String])?.last == "closed", "peer's close of bulk reached Chromium: \(page["bulk"] ?? [:])")
                let opened = r.peer.events("datachannel").first { $0["label"] as? String == "fast" && $0["state"] as? String == "opened" }
                #expect((opened?["detail"] as? String)?.contains("unordered, maxRetransmits 0") == true, "\(String(describing: opened))")
            }
            #expect(r.peer.events("dataError").isEmpty, "\(r.peer.events("dataError"))")
        }
    }

    /// Chromium offers a `control` channel and sends `ping`, `hold`, `keyframe`, `tone` and
    /// a malformed command on it: `peer` answers each there (`pong`; `ok` for hold once its
    /// re-offer is answered; `error` naming the malformed one), holds the call (state
    /// `hold`), and the key frame reaches Chromium (its keyFramesDecoded grows).
    @Test func chromiumDrivesPeerOverTheControlChannel() async throws {
        try await CallSlots.with(peers: 3) {
            let commands = ["1:send:control:{\"action\":\"ping\",\"id\":1}", "2:send:control:{\"action\":\"hold\",\"id\":2}",
                            "4:send:control:{\"action\":\"unhold\"}", "5:send:control:{\"action\":\"keyframe\",\"id\":3}",
                            "5.5:send:control:{\"action\":\"tone\",\"hz\":880}", "6:send:control:{\"hold\"}"]
            let r = try await ChromiumRenegotiationTests.call(peerOffers: false, peerExtra: [], chromiumActions: commands, seconds: 8,
                                                               chromiumExtra: ["--data-channel", "control"])
            defer { r.h.remove() }
            #expect(r.peer.status == 0 && r.chromiumStatus == 0, "\(r.peer.log)")
            let replies = (Self.pageData(r.chromium)["control"]?["texts"] as? [String] ?? [])
                .compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
            print("chromium control replies: \(replies)")
            #expect(replies.contains { $0["action"] as? String == "pong" && $0["id"] as? Int == 1 })
            #expect(replies.contains { $0["result"] as? String == "ok" && $0["action"] as? String == "hold" && $0["id"] as? Int == 2 })
            #expect(replies.contains { $0["result"] as? String == "ok" && $0["action"] as? String == "keyframe" && $0["id"] as? Int == 3 })
            #expect(replies.contains { $0["result"] as? String == "ok" && $0["action"] as? String == "tone" })
            #expect(replies.contains { $0["result"] as? String == "error" && ($0["reason"] as? String)?.hasPrefix("not a JSON object") == true })
            #expect(CallRenegotiationTests.states(r.peer).contains("hold"), "\(CallRenegotiationTests.states(r.peer))")
            let keyframes = ChromiumRenegotiationTests.videoSamples(r.chromium, "inbound-rtp", "keyFramesDecoded").compactMap(\.value)
            #expect((keyframes.last ?? 0) >= 2, "the first key frame and the one asked for: \(keyframes.suffix(3))")
        }
    }
}
