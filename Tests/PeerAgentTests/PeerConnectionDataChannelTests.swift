// Data channels between two connections in this process (RFC 8831, DCEP RFC 8832, SDP RFC 8841): data-only and bundled with media, in-band and negotiated, ordered and not, large and empty messages, closing by stream reset, a channel added mid-call, an offer in the legacy a=sctpmap form, and one whose sctpmap is malformed.
import Foundation
import Media
import SDP
import Testing
import TestSupport
@testable import PeerAgent

@Suite struct PeerConnectionDataChannelTests {
    /// The data channel events of `side`.
    static func channelEvents(_ pair: ConnectedPair, _ side: String) -> [DataChannelEvent] {
        pair.events(side).compactMap { if case .dataChannel(let e) = $0.0 { e } else { nil } }
    }

    /// The messages `side` received on the channel labelled `label`.
    static func messages(_ pair: ConnectedPair, _ side: String, _ label: String) -> [DataChannelMessage] {
        channelEvents(pair, side).compactMap { if case let .message(ch, m) = $0, ch.label == label { m } else { nil } }
    }

    /// The channel the peer opened on `side` with `label`.
    static func remoteChannel(_ pair: ConnectedPair, _ side: String, _ label: String) -> DataChannel? {
        channelEvents(pair, side).compactMap { if case let .remoteOpened(ch) = $0, ch.label == label { ch } else { nil } }.first
    }

    @Test func aDataOnlyCallCarriesTenThousandMessagesInOrderA256KiBMessageAndEmptyOnes() async throws {
        let holder = Holder()
        let pair = try ConnectedPair(tracksA: { pc in holder.channel = try pc.createDataChannel("chat") }, tracksB: { _ in })
        defer { pair.close() }
        let offer = try pair.a.createOffer()
        let parsed = try SessionDescription(parsing: offer.sdp)
        #expect(parsed.media.map(\.kind) == [.application])
        #expect(parsed.media.first?.proto == "UDP/DTLS/SCTP" && parsed.media.first?.formats == ["webrtc-datachannel"])
        #expect(parsed.media.first?.sctpPort == 5000 && parsed.media.first?.maxMessageSize == 262_144)
        try pair.negotiate()
        #expect(await pair.connected())
        let ours = try #require(holder.channel)
        #expect(await eventually(within: 5) { ours.readyState == .open && Self.remoteChannel(pair, "b", "chat")?.readyState == .open })
        let theirs = try #require(Self.remoteChannel(pair, "b", "chat"))
        #expect(ours.id == theirs.id && ours.id.map { $0 % 2 } == 1, "the answerer is the DTLS client here: odd ids for the offerer")
        for i in 0..<10_000 {
            var m = [UInt8](repeating: UInt8(truncatingIfNeeded: i), count: 1024)
            m[0] = UInt8(i >> 8); m[1] = UInt8(i & 0xFF)
            try ours.send(.binary(m))
        }
        try theirs.send(.text("héllo"))
        try theirs.send(.text(""))
        try theirs.send(.binary([]))
        let big = (0..<262_144).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        try theirs.send(.binary(big))
        #expect(await eventually(within: 20) { Self.messages(pair, "b", "chat").count == 10_000 && Self.messages(pair, "a", "chat").count == 4 })
        let got = Self.messages(pair, "b", "chat")
        let times = pair.events("b").compactMap { e -> Date? in if case .dataChannel(.message) = e.0 { e.1 } else { nil } }
        if let first = times.first, let last = times.last {
            print("data channel: 10,000 × 1 KiB received in \(Int(last.timeIntervalSince(first) * 1000)) ms")
        }
        let inOrder = got.enumerated().allSatisfy { i, m in
            if case .binary(let b) = m { b.count == 1024 && b[0] == UInt8(i >> 8) && b[1] == UInt8(i & 0xFF) } else { false }
        }
        #expect(inOrder, "10,000 messages in order, none lost or duplicated")
        #expect(Self.messages(pair, "a", "chat") == [.text("héllo"), .text(""), .binary([]), .binary(big)])
        #expect(ours.bufferedAmount == 0)
        let statsA = pair.a.getStats(), statsB = pair.b.getStats()
        print("data channel: a sent \(statsA.transports.first?.packetsReceived ?? -1) rcvd, b rcvd \(statsB.transports.first?.packetsReceived ?? -1); pairs \(statsA.candidatePairs.first?.packetsSent ?? -1) \(statsB.candidatePairs.first?.packetsReceived ?? -1)")
        #expect(statsA.dataChannel("chat")?.messagesSent == 10_000 && statsA.dataChannel("chat")?.bytesSent == 10_240_000)
        #expect(statsB.dataChannel("chat")?.messagesReceived == 10_000 && statsB.dataChannel("chat")?.bytesReceived == 10_240_000)
        #expect(statsB.dataChannel("chat")?.messagesSent == 4 && statsB.dataChannel("chat")?.bytesSent == 6 + 262_144)
        #expect(statsA.sctpTransports.first?.state == "connected" && (statsA.sctpTransports.first?.mtu ?? 0) > 1000)
        // Closing: A resets its stream, B follows, both reach closed.
        ours.close()
        #expect(await eventually(within: 5) { ours.readyState == .closed && theirs.readyState == .closed })
        #expect(Self.channelEvents(pair, "b").contains(.state(theirs, .closing)))
        #expect(throws: DataChannelError.notOpen(label: "chat", state: .closed)) { try ours.send(.text("late")) }
    }

    /// Channels take turns: a text sent on `control` after 8 MiB were queued on `bulk`
    /// arrives while most of the bulk is still on its way (one queue for all channels made
    /// it wait for all of it), and each channel keeps its own order.
    @Test func aMessageOnAnotherChannelDoesNotWaitBehindABulkTransfer() async throws {
        final class Channels: @unchecked Sendable { var bulk: DataChannel?; var control: DataChannel? }
        let made = Channels()
        let pair = try ConnectedPair(tracksA: { pc in
            made.bulk = try pc.createDataChannel("bulk")
            made.control = try pc.createDataChannel("control")
        }, tracksB: { _ in })
        defer { pair.close() }
        try pair.negotiate()
        #expect(await pair.connected())
        let bulk = try #require(made.bulk), control = try #require(made.control)
        #expect(await eventually(within: 5) { Self.remoteChannel(pair, "b", "bulk") != nil && Self.remoteChannel(pair, "b", "control") != nil })
        for i in 0..<128 { try bulk.send(.binary([UInt8](repeating: UInt8(i), count: 65_536))) }
        try control.send(.text("hold"))
        try control.send(.text("unhold"))
        #expect(await eventually(within: 20) { Self.messages(pair, "b", "control").count == 2 })
        let bulkBefore = Self.messages(pair, "b", "bulk").count
        #expect(await eventually(within: 30) { Self.messages(pair, "b", "bulk").count == 128 })
        print("data channel turns: control's 2 texts arrived after \(bulkBefore) of 128 bulk messages (64 KiB each)")
        #expect(bulkBefore < 64, "control waited behind \(bulkBefore) of 128 bulk messages")
        #expect(Self.messages(pair, "b", "control") == [.text("hold"), .text("unhold")])
        let order = Self.messages(pair, "b", "bulk").map { if case .binary(let b) = $0 { Int(b[0]) } else { -1 } }
        #expect(order == Array(0..<128))
    }

    @Test func channelsBundledWithMediaUnorderedUnreliableNegotiatedAndAddedMidCall() async throws {
        let holder = Holder()
        let pair = try ConnectedPair(tracksA: { pc in
            pc.addTransceiver(.audio, audio: try ToneSource(frequency: 440), receive: ReceiveOptions(decode: false))
            holder.channel = try pc.createDataChannel("fast", options: DataChannelInit(ordered: false, maxRetransmits: 0))
            holder.negotiatedA = try pc.createDataChannel("fixed", options: DataChannelInit(negotiated: true, id: 7))
        }, tracksB: { pc in
            pc.addTransceiver(.audio, audio: try ToneSource(frequency: 660), receive: ReceiveOptions(decode: false))
            holder.negotiatedB = try pc.createDataChannel("fixed", options: DataChannelInit(negotiated: true, id: 7))
        })
        defer { pair.close() }
        try pair.negotiate()
        #expect(await pair.connected())
        let fast = try #require(holder.channel), fixedA = try #require(holder.negotiatedA), fixedB = try #require(holder.negotiatedB)
        #expect(await eventually(within: 5) { fast.readyState == .open && fixedA.readyState == .open && fixedB.readyState == .open })
        let remoteFast = try #require(await eventuallyValue(within: 5) { Self.remoteChannel(pair, "b", "fast") })
        #expect(remoteFast.ordered == false && remoteFast.maxRetransmits == 0)
        #expect(Self.remoteChannel(pair, "b", "fixed") == nil, "a negotiated channel runs no DCEP")
        for i in 0..<500 { try fast.send(.text("\(i)")) }
        try fixedB.send(.text("on seven"))
        #expect(await eventually(within: 5) { Self.messages(pair, "b", "fast").count == 500 && Self.messages(pair, "a", "fixed").count == 1 })
        #expect(Set(Self.messages(pair, "b", "fast").compactMap { if case .text(let t) = $0 { t } else { nil } }).count == 500)
        #expect(Self.messages(pair, "a", "fixed") == [.text("on seven")])
        // A channel on a connection that has one already needs no renegotiation.
        let later = try pair.a.createDataChannel("later")
        #expect(await eventually(within: 5) { later.readyState == .open && Self.remoteChannel(pair, "b", "later") != nil })
        #expect(!pair.a.isNegotiationNeeded)
    }

    /// A data-only pair whose channel `chat` (made by A) is open on both sides: the pair,
    /// A's channel and its stream id.
    static func openChat() async throws -> (ConnectedPair, DataChannel, UInt16) {
        let holder = Holder()
        let pair = try ConnectedPair(tracksA: { pc in holder.channel = try pc.createDataChannel("chat") }, tracksB: { _ in })
        try pair.negotiate()
        #expect(await pair.connected())
        let ours = try #require(holder.channel)
        #expect(await eventually(within: 5) { ours.readyState == .open && Self.remoteChannel(pair, "b", "chat") != nil })
        return (pair, ours, try #require(ours.id))
    }

    /// What the peer sends that cannot be taken — a malformed DCEP open (its stream is reset,
    /// RFC 8831 §6.7), an unknown PPID, a message over our max-message-size, a message on a
    /// stream with no channel — each gives an error event naming it, and the channel goes on.
    @Test func badInputFromThePeerIsReportedAndTheChannelGoesOn() async throws {
        let (pair, ours, sid) = try await Self.openChat()
        defer { pair.close() }
        pair.a.sctp.sendRaw([0x03, 0x05, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], stream: 9, ppid: 50)
        pair.a.sctp.sendRaw([1, 2, 3], stream: sid, ppid: 99)
        pair.a.sctp.sendRaw([UInt8](repeating: 7, count: 300_000), stream: sid, ppid: 53)
        #expect(await eventually(within: 5) {
            Self.channelEvents(pair, "b").contains { if case let .error(_, r) = $0 { r.contains("300000 bytes") } else { false } }
        })
        pair.a.sctp.sendRaw([4], stream: 11, ppid: 53)
        pair.a.sctp.sendRaw([0xFF, 0xFE], stream: sid, ppid: 51)
        try ours.send(.text("still here"))
        #expect(await eventually(within: 5) { Self.messages(pair, "b", "chat") == [.text("still here")] })
        let errors = Self.channelEvents(pair, "b").compactMap { if case let .error(_, reason) = $0 { reason } else { nil } }
        print("bad input: \(errors)")
        #expect(errors.contains { $0.contains("stream 9") && $0.contains("unknown channel type 0x5") && $0.contains("the stream is reset") })
        #expect(errors.contains { $0.contains("unknown PPID 99") })
        #expect(errors.contains { $0.contains("300000 bytes") && $0.contains("max-message-size 262144") })
        #expect(errors.contains { $0.contains("stream 11") && $0.contains("no open channel") })
        #expect(errors.contains { $0.contains("not UTF-8") })
        #expect(ours.readyState == .open && pair.b.connectionState == .connected)
    }

    /// Messages sent in parts with the deprecated PPIDs 54 (text) and 52 (binary), each
    /// ended by a part with 51 or 53 (RFC 8831 §8), arrive joined as one message each; a
    /// message in parts over our max-message-size is dropped whole with an error, and the
    /// next message is whole.
    @Test func partsSentWithTheDeprecatedPartialPPIDsArriveJoined() async throws {
        let (pair, _, sid) = try await Self.openChat()
        defer { pair.close() }
        pair.a.sctp.sendRaw(Array("hel".utf8), stream: sid, ppid: 54)
        pair.a.sctp.sendRaw(Array("lo ".utf8), stream: sid, ppid: 54)
        pair.a.sctp.sendRaw(Array("world".utf8), stream: sid, ppid: 51)
        pair.a.sctp.sendRaw([1, 2], stream: sid, ppid: 52)
        pair.a.sctp.sendRaw([3], stream: sid, ppid: 53)
        for _ in 0..<3 { pair.a.sctp.sendRaw([UInt8](repeating: 9, count: 100_000), stream: sid, ppid: 52) }
        pair.a.sctp.sendRaw([9], stream: sid, ppid: 53)
        pair.a.sctp.sendRaw(Array("next".utf8), stream: sid, ppid: 51)
        #expect(await eventually(within: 5) { Self.messages(pair, "b", "chat").count >= 3 })
        #expect(Self.messages(pair, "b", "chat") == [.text("hello world"), .binary([1, 2, 3]), .text("next")])
        let errors = Self.channelEvents(pair, "b").compactMap { if case let .error(_, reason) = $0 { reason } else { nil } }
        #expect(errors.count == 1 && errors.first?.contains("in parts (PPID 52) is over our max-message-size 262144 at 300000 bytes") == true, "\(errors)")
    }

    /// `offer` with its data section rewritten to the form before RFC 8841, as Chromium
    /// before M77 wrote it: `m=application <port> DTLS/SCTP 5000`, `a=sctpmap:5000
    /// webrtc-datachannel 1024`, no `a=sctp-port` and no `a=max-message-size`.
    static func legacy(_ offer: String) -> String {
        offer.components(separatedBy: "\r\n").compactMap { line -> String? in
            if line.hasPrefix("m=application ") { return line.replacingOccurrences(of: "UDP/DTLS/SCTP webrtc-datachannel", with: "DTLS/SCTP 5000") }
            if line.hasPrefix("a=sctp-port:") { return nil }
            if line.hasPrefix("a=max-message-size:") { return "a=sctpmap:5000 webrtc-datachannel 1024" }
            return line
        }.joined(separator: "\r\n")
    }

    /// A's offer rewritten to the legacy form (RFC 8829 §5.1.2): B answers in that form, the
    /// channel carries messages both ways, 65,536 bytes at most either way — a larger send
    /// refused on both sides, a larger message from the peer dropped and counted.
    @Test func aLegacyOfferIsAnsweredInItsFormAndCarriesMessagesOf64KiBAtMost() async throws {
        let holder = Holder()
        let pair = try ConnectedPair(tracksA: { pc in holder.channel = try pc.createDataChannel("chat") }, tracksB: { _ in })
        defer { pair.close() }
        var offerText = "", answerText = ""
        try pair.negotiate(editOffer: { offerText = Self.legacy($0); return offerText }, editAnswer: { answerText = $0; return $0 })
        #expect(offerText.contains("DTLS/SCTP 5000\r\n") && !offerText.contains("webrtc-datachannel\r\n"))
        let section = try #require(try SessionDescription(parsing: answerText).media.first { $0.kind == .application })
        #expect(section.proto == "DTLS/SCTP" && section.formats == ["5000"] && section.sctpPort == nil && section.maxMessageSize == nil)
        #expect(section.sctpmaps == [SctpMap(number: 5000, app: "webrtc-datachannel", parameters: "1024")])
        #expect(answerText.contains("a=sctpmap:5000 webrtc-datachannel 1024\r\n") && !answerText.contains("a=sctp-port"))
        #expect(await pair.connected())
        let ours = try #require(holder.channel)
        #expect(await eventually(within: 5) { ours.readyState == .open && Self.remoteChannel(pair, "b", "chat")?.readyState == .open })
        let theirs = try #require(Self.remoteChannel(pair, "b", "chat"))
        #expect(pair.a.sctp.remoteMaxMessageSize == 65_536 && pair.b.sctp.remoteMaxMessageSize == 65_536)
        let most = (0..<65_536).map { UInt8(truncatingIfNeeded: $0 &* 13) }
        for i in 0..<100 { try ours.send(.binary([UInt8](repeating: UInt8(i), count: 1024))) }
        try ours.send(.binary(most))
        try theirs.send(.text("from b"))
        try theirs.send(.binary(most))
        #expect(throws: DataChannelError.tooLarge(label: "chat", bytes: 65_537, limit: 65_536)) { try ours.send(.binary(most + [0])) }
        #expect(throws: DataChannelError.tooLarge(label: "chat", bytes: 65_537, limit: 65_536)) { try theirs.send(.binary(most + [0])) }
        #expect(await eventually(within: 10) { Self.messages(pair, "b", "chat").count == 101 && Self.messages(pair, "a", "chat").count == 2 })
        #expect(Self.messages(pair, "b", "chat").last == .binary(most))
        #expect(Self.messages(pair, "b", "chat").dropLast().enumerated().allSatisfy { i, m in m == .binary([UInt8](repeating: UInt8(i), count: 1024)) })
        #expect(Self.messages(pair, "a", "chat") == [.text("from b"), .binary(most)])
        // What we take: a message over 64 KiB from the peer is dropped, counted, reported.
        let sid = try #require(ours.id)
        pair.a.sctp.sendRaw(most + [0], stream: sid, ppid: 53)
        try ours.send(.text("after"))
        #expect(await eventually(within: 5) { Self.messages(pair, "b", "chat").last == .text("after") })
        let errors = Self.channelEvents(pair, "b").compactMap { if case let .error(_, r) = $0 { r } else { nil } }
        print("legacy data section: b's errors \(errors); discards \(pair.b.sctp.discards)")
        #expect(errors == ["a message of 65537 bytes (PPID 53) on stream \(sid) is over our max-message-size 65536: dropped"])
        #expect(pair.b.sctp.discards.tooLarge == 1 && pair.b.getStats().sctpTransports.first?.discarded?.tooLarge == 1)
        // Either side's next offer keeps the form the peer used.
        for pc in [pair.a, pair.b] {
            let data = try SessionDescription(parsing: pc.createOffer().sdp).media.first { $0.kind == .application }
            #expect(data.flatMap(JSEP.legacyForm(of:)) == LegacyDataForm(proto: "DTLS/SCTP", advertisesMaxMessageSize: false)
                    && data?.formats == ["5000"] && data?.sctpPort == nil)
        }
    }

    /// A's offer with a malformed `a=sctpmap` in its data section: B takes the rest — its
    /// answer accepts the audio and rejects the data section (port 0) — and says why (an
    /// error event naming the line); A's channel closes, the call connects and audio flows
    /// both ways.
    @Test func aMalformedSctpmapCostsTheDataSectionAloneNotTheCall() async throws {
        let holder = Holder()
        let pair = try ConnectedPair(tracksA: { pc in
            pc.addTransceiver(.audio, audio: try ToneSource(frequency: 440), receive: ReceiveOptions(decode: false))
            holder.channel = try pc.createDataChannel("chat")
        }, tracksB: { pc in
            pc.addTransceiver(.audio, audio: try ToneSource(frequency: 660), receive: ReceiveOptions(decode: false))
        })
        defer { pair.close() }
        var answerText = ""
        try pair.negotiate(editOffer: { $0.replacingOccurrences(of: "a=sctp-port:5000\r\n", with: "a=sctp-port:5000\r\na=sctpmap:x webrtc-datachannel\r\n") },
                           editAnswer: { answerText = $0; return $0 })
        let answer = try SessionDescription(parsing: answerText)
        #expect(answer.media.map(\.kind) == [.audio, .application] && answer.media.map(\.port) == [9, 0])
        #expect(await pair.connected())
        let reasons = { Self.channelEvents(pair, "b").compactMap { if case let .error(nil, r) = $0 { r } else { nil } } }
        #expect(await eventually(within: 2) { !reasons().isEmpty })
        #expect(reasons() == ["the data section (mid 1) cannot be used, our answer rejects it: a=sctpmap:x webrtc-datachannel is malformed "
            + "(expected a=sctpmap:<SCTP port 0-65535> <application> [<streams>])"], "\(reasons())")
        let chat = try #require(holder.channel)
        #expect(await eventually(within: 2) { chat.readyState == .closed })
        let (audioA, audioB) = (try #require(pair.a.allTransceivers.first), try #require(pair.b.allTransceivers.first))
        #expect(await PeerConnectionRenegotiationTests.grows({ audioA.receiver.snapshot().packetsReceived }))
        #expect(await PeerConnectionRenegotiationTests.grows({ audioB.receiver.snapshot().packetsReceived }))
    }

    /// A pair with one audio track each (440 and 660 Hz, not decoded), negotiated and
    /// connected: a call to add a data channel to.
    static func connectedAudioPair() async throws -> ConnectedPair {
        let pair = try ConnectedPair(tracksA: { pc in
            pc.addTransceiver(.audio, audio: try ToneSource(frequency: 440), receive: ReceiveOptions(decode: false))
        }, tracksB: { pc in
            pc.addTransceiver(.audio, audio: try ToneSource(frequency: 660), receive: ReceiveOptions(decode: false))
        })
        try pair.negotiate()
        #expect(await pair.connected())
        return pair
    }

    /// Rollback (RFC 8829 §5.7) undoes what an offer with a new data section did: the
    /// answerer that rolls back the peer's offer no longer offers a data section of its
    /// own; the offerer that rolls back its own still wants one, and its next offer opens
    /// the channel.
    @Test func rollingBackAnOfferWithANewDataSectionUndoesIt() async throws {
        let pair = try await Self.connectedAudioPair()
        defer { pair.close() }
        let channel = try pair.a.createDataChannel("later")
        let offer = try pair.a.createOffer()
        try pair.a.setLocalDescription(offer)
        try pair.b.setRemoteDescription(SessionDescriptionInit(type: .offer, sdp: offer.sdp))
        try pair.b.rollback()
        let bOffer = try SessionDescription(parsing: pair.b.createOffer().sdp)
        #expect(bOffer.media.map(\.kind) == [.audio], "B's own offer after the rollback: \(bOffer.media.map(\.kind))")
        try pair.a.rollback()
        #expect(pair.a.signalingState == .stable && pair.a.isNegotiationNeeded)
        let (again, _) = try PeerConnectionRenegotiationTests.renegotiate(pair.a, pair.b)
        #expect(again.media.map(\.kind) == [.audio, .application])
        #expect(await eventually(within: 5) { channel.readyState == .open && Self.remoteChannel(pair, "b", "later") != nil })
    }

    @Test func aChannelAddedMidCallRenegotiatesAndOpens() async throws {
        let pair = try await Self.connectedAudioPair()
        defer { pair.close() }
        let channel = try pair.a.createDataChannel("added")
        #expect(pair.a.isNegotiationNeeded)
        let (offer, answer) = try PeerConnectionRenegotiationTests.renegotiate(pair.a, pair.b)
        #expect(offer.media.map(\.kind) == [.audio, .application] && answer.media.last?.port == 9)
        #expect(await eventually(within: 5) { channel.readyState == .open && Self.remoteChannel(pair, "b", "added") != nil })
        try channel.send(.text("after the re-offer"))
        #expect(await eventually(within: 5) { Self.messages(pair, "b", "added") == [.text("after the re-offer")] })
    }
}

/// Channels made inside the pair's set-up closures.
final class Holder: @unchecked Sendable {
    var channel: DataChannel?
    var negotiatedA: DataChannel?
    var negotiatedB: DataChannel?
}
