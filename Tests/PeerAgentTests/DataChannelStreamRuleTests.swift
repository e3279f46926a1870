// The data channel stream rules (RFC 8832 §4–§6, RFC 8831 §6) through real libusrsctp associations: our SctpTransport wired in memory to a bare SCTPAssociation that plays the peer and sends what a test crafts — a DATA_CHANNEL_OPEN of the wrong parity or on a stream in use, an unknown DCEP type, data on a stream with no channel, an ACK held back — with the DATA chunks on the wire, the resets the peer sees, our events and counts checked.
import DTLS
import EventLoop
import SCTP
import SDP
import Synchronization
import Testing
import TestSupport
@testable import PeerAgent

/// Our ``SctpTransport`` (negotiated as the answerer, in DTLS role `role`) and a bare
/// ``SCTPAssociation`` as the peer, their packets carried on the event loop: what the peer
/// receives and the events both report are recorded, and every DATA chunk we send.
final class RawPeerHarness: Sendable {
    let loop = EventLoop.shared
    let transport: SctpTransport
    /// Our transport's events, in order.
    let events: ChannelEventLog
    let peerEvents = Mutex<[SCTPAssociationEvent]>([])
    /// The DATA chunks of every packet we sent: stream, PPID, payload (RFC 9260 §3.3.1).
    let wire = Mutex<[(stream: UInt16, ppid: UInt32, payload: [UInt8])]>([])
    private let sides = Mutex<(ours: SCTPAssociation?, peer: SCTPAssociation?)>((nil, nil))

    init(role: DTLSRole = .client) throws {
        let log = ChannelEventLog()
        events = log
        transport = SctpTransport(loop: loop) { event in log.withLock { $0.append(event) } }
        let options = LocalDescriptionOptions(sessionId: 7, iceUfrag: "rawp", icePwd: "rawpeerrawpeerrawpeer1",
                                              fingerprints: [Fingerprint(algorithm: "sha-256", value: (0..<32).map { _ in "AB" }.joined(separator: ":"))],
                                              tracks: [LocalTrack(kind: .application, ssrc: 0, cname: "c", streamId: "", trackId: "")])
        let offer = JSEP.createOffer(options)
        transport.remoteOffered(offer)
        #expect(transport.negotiated(answer: try JSEP.createAnswer(to: offer, options), remote: offer, role: role))
        try loop.sync { () throws in
            transport.startOnLoop(output: { [weak self] packet in self?.carry(packet, toPeer: true) },
                                  attach: { [weak self] association in self?.sides.withLock { $0.ours = association } })
            let peer = try SCTPAssociation(loop: loop, output: { [weak self] packet in self?.carry(packet, toPeer: false) },
                                           onEvent: { [weak self] event in self?.peerEvents.withLock { $0.append(event) } })
            sides.withLock { $0.peer = peer }
            try peer.connect()
        }
    }

    private func carry(_ packet: [UInt8], toPeer: Bool) {
        if toPeer { wire.withLock { $0 += Self.dataChunks(packet) } }
        loop.async { [weak self] in
            guard let self else { return }
            let (ours, peer) = self.sides.withLock { ($0.ours, $0.peer) }
            (toPeer ? peer : ours)?.receive(packet)
        }
    }

    /// The DATA chunks of an SCTP packet: stream id, PPID (host order) and payload.
    static func dataChunks(_ packet: [UInt8]) -> [(stream: UInt16, ppid: UInt32, payload: [UInt8])] {
        var found: [(UInt16, UInt32, [UInt8])] = []
        var at = 12
        while at + 4 <= packet.count {
            let length = Int(packet[at + 2]) << 8 | Int(packet[at + 3])
            guard length >= 4, at + length <= packet.count else { break }
            if packet[at] == 0, length >= 16 {
                let ppid = packet[(at + 12)..<(at + 16)].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
                found.append((UInt16(packet[at + 8]) << 8 | UInt16(packet[at + 9]), ppid, Array(packet[(at + 16)..<(at + length)])))
            }
            at += (length + 3) & ~3
        }
        return found
    }

    /// Both ends are up.
    func up() async -> Bool {
        await eventually(within: 5) {
            transport.state == .connected && peerEvents.withLock { $0.contains { if case .up = $0 { true } else { false } } }
        }
    }

    /// The peer sends `data` on `stream` with `ppid`, each message of `messages` in turn.
    func peerSends(_ messages: [(data: [UInt8], stream: UInt16, ppid: UInt32)]) throws {
        try loop.sync { () throws in
            guard let peer = sides.withLock({ $0.peer }) else { return }
            for m in messages {
                _ = try peer.send(m.data[...], streamId: m.stream, ppid: m.ppid, unordered: false, reliability: .reliable)
            }
        }
    }

    /// The peer resets its outgoing side of `streams` (as a peer does once ours is reset).
    func peerResets(_ streams: [UInt16]) throws {
        try loop.sync { () throws in try sides.withLock { $0.peer }?.resetOutgoing(streams) }
    }

    /// A DATA_CHANNEL_OPEN for a reliable ordered channel `label`.
    static func open(_ label: String) -> [UInt8] {
        DCEPMessage.open(type: DCEPChannelType(ordered: true, reliability: .reliable), priority: 256, label: label, protocol: "").serialized
    }

    /// How often the peer saw our reset of `stream` (its incoming reset).
    func resetsSeen(_ stream: UInt16) -> Int {
        peerEvents.withLock { $0.count { $0 == .incomingStreamsReset([stream]) } }
    }

    /// Messages the peer received on `stream`: PPID and bytes.
    func peerMessages(_ stream: UInt16) -> [(UInt32, [UInt8])] {
        peerEvents.withLock { $0.compactMap { if case let .message(s, p, d) = $0, s == stream { (p, d) } else { nil } } }
    }

    /// DATA chunks we put on the wire on `stream` with PPID 50 (DCEP).
    func dcepOnWire(_ stream: UInt16) -> [[UInt8]] { wire.withLock { $0.filter { $0.stream == stream && $0.ppid == 50 }.map(\.payload) } }

    var errors: [String] { events.withLock { $0.compactMap { if case let .error(_, r) = $0 { r } else { nil } } } }
    var remoteOpened: [DataChannel] { events.withLock { $0.compactMap { if case let .remoteOpened(ch) = $0 { ch } else { nil } } } }

    func close() {
        transport.close()
        loop.sync { sides.withLock { $0.peer }?.close() }
    }
}

/// Data channel events recorded as they come (any thread).
final class ChannelEventLog: Sendable {
    private let list = Mutex<[DataChannelEvent]>([])
    func withLock<T>(_ body: (inout [DataChannelEvent]) -> T) -> T { list.withLock { body(&$0) } }
}

@Suite struct DataChannelStreamRuleTests {
    /// We are the DTLS client: the peer (server) opens odd ids. Its OPEN on even stream 2 gets
    /// no ACK (none on the wire) and our reset of stream 2 reaches it, with one error event
    /// and the counts; its OPEN on odd stream 3 is taken and acknowledged (the control).
    @Test func anOpenOfTheWrongParityIsNotAcknowledgedAndItsStreamIsReset() async throws {
        let h = try RawPeerHarness(role: .client)
        defer { h.close() }
        #expect(await h.up())
        try h.peerSends([(RawPeerHarness.open("intruder"), 2, 50)])
        #expect(await eventually(within: 5) { h.resetsSeen(2) == 1 })
        try h.peerSends([(RawPeerHarness.open("fine"), 3, 50)])
        #expect(await eventually(within: 5) { h.peerMessages(3).count == 1 })
        print("wrong parity: errors \(h.errors); discards \(h.transport.discards)")
        #expect(h.dcepOnWire(2).isEmpty, "no ACK (nor anything) for stream 2 on the wire: \(h.dcepOnWire(2))")
        #expect(h.peerMessages(2).isEmpty)
        #expect(h.dcepOnWire(3) == [[0x02]] && h.peerMessages(3).first?.1 == [0x02], "the ACK of the OPEN on stream 3")
        #expect(h.remoteOpened.map(\.label) == ["fine"] && h.remoteOpened.first?.id == 3)
        #expect(h.errors == ["stream 2: DATA_CHANNEL_OPEN on an even stream id, which is ours to open: the peer is the DTLS server and opens odd ids (RFC 8832 §6) (its label \"intruder\"): not acknowledged; the stream is reset"])
        var expected = DataChannelDiscards()
        expected.openWrongParity = 1
        expected.streamsReset = 1
        #expect(h.transport.discards == expected)
    }

    /// As the DTLS server we open odd ids: the peer's OPEN on odd stream 5 is refused.
    @Test func asTheServerAnOddOpenIsRefused() async throws {
        let h = try RawPeerHarness(role: .server)
        defer { h.close() }
        #expect(await h.up())
        try h.peerSends([(RawPeerHarness.open("odd"), 5, 50), (RawPeerHarness.open("even"), 4, 50)])
        #expect(await eventually(within: 5) { h.resetsSeen(5) == 1 && h.peerMessages(4).count == 1 })
        #expect(h.dcepOnWire(5).isEmpty && h.dcepOnWire(4) == [[0x02]])
        #expect(h.remoteOpened.map(\.label) == ["even"] && h.transport.discards.openWrongParity == 1)
        #expect(h.errors.first?.hasPrefix("stream 5: DATA_CHANNEL_OPEN on an odd stream id, which is ours to open: the peer is the DTLS client") == true, "\(h.errors)")
    }

    /// A second OPEN on the stream of the peer's open channel is not acknowledged: one ACK
    /// on the wire for stream 1, our reset of it, the channel closing and, once the peer
    /// resets its side as well, closed.
    @Test func aSecondOpenOnAStreamInUseIsNotAcknowledgedAndClosesTheChannel() async throws {
        let h = try RawPeerHarness()
        defer { h.close() }
        #expect(await h.up())
        try h.peerSends([(RawPeerHarness.open("first"), 1, 50)])
        let first = try #require(await eventuallyValue(within: 5) { h.remoteOpened.first })
        #expect(await eventually(within: 5) { h.peerMessages(1).count == 1 })
        try h.peerSends([(RawPeerHarness.open("second"), 1, 50)])
        #expect(await eventually(within: 5) { h.resetsSeen(1) == 1 })
        #expect(first.readyState == .closing)
        try h.peerResets([1])
        #expect(await eventually(within: 5) { first.readyState == .closed })
        print("stream in use: errors \(h.errors); discards \(h.transport.discards)")
        #expect(h.dcepOnWire(1) == [[0x02]], "one ACK, for the first OPEN")
        #expect(h.remoteOpened.map(\.label) == ["first"])
        #expect(h.errors == ["stream 1: DATA_CHANNEL_OPEN on the stream of channel \"first\", which is in use (RFC 8832 §6) (its label \"second\"): not acknowledged; the stream is reset, closing data channel \"first\""])
        #expect(h.transport.discards.openStreamInUse == 1 && h.transport.discards.streamsReset == 1 && h.transport.discards.total == 1)
    }

    /// A DCEP message of unknown type on a free stream, and on the stream of an open channel:
    /// dropped, counted, each stream reset (the channel closing), an error event each.
    @Test func aDCEPMessageOfUnknownTypeIsRefusedWithAReset() async throws {
        let h = try RawPeerHarness()
        defer { h.close() }
        #expect(await h.up())
        try h.peerSends([([0x07, 0xAA], 5, 50), (RawPeerHarness.open("open"), 3, 50)])
        #expect(await eventually(within: 5) { h.resetsSeen(5) == 1 && h.remoteOpened.count == 1 })
        try h.peerSends([([0x09], 3, 50)])
        #expect(await eventually(within: 5) { h.resetsSeen(3) == 1 })
        print("unknown DCEP type: errors \(h.errors); discards \(h.transport.discards)")
        #expect(h.dcepOnWire(5).isEmpty)
        #expect(h.errors == ["stream 5: DCEP message of unknown type 0x7 (expected 0x03 DATA_CHANNEL_OPEN or 0x02 DATA_CHANNEL_ACK, RFC 8832 §5): dropped; the stream is reset",
                             "stream 3: DCEP message of unknown type 0x9 (expected 0x03 DATA_CHANNEL_OPEN or 0x02 DATA_CHANNEL_ACK, RFC 8832 §5): dropped; the stream is reset, closing data channel \"open\""])
        #expect(h.remoteOpened.first?.readyState == .closing)
        #expect(h.transport.discards.dcepUnknownType == 2 && h.transport.discards.streamsReset == 2)
    }

    /// User data of every data channel PPID on a stream with no channel: all dropped and
    /// counted, one reset and one error event while that reset is under way; once it is
    /// done (and the peer reset its side), more data there is refused again.
    @Test func dataOnAStreamWithNoChannelIsDroppedCountedAndItsStreamResetOnce() async throws {
        let h = try RawPeerHarness()
        defer { h.close() }
        #expect(await h.up())
        try h.peerSends([51, 53, 56, 57, 52, 54].map { (Array("x".utf8), 7, UInt32($0)) })
        #expect(await eventually(within: 5) { h.resetsSeen(7) == 1 && h.transport.discards.noChannel == 6 })
        try await Task.sleep(for: .milliseconds(200))
        #expect(h.resetsSeen(7) == 1 && h.errors.count == 1, "one reset and one event for the six: \(h.errors)")
        #expect(h.errors.first == "stream 7: a message (PPID 51, 1 bytes) on a stream which has no open channel: dropped; the stream is reset")
        try h.peerResets([7])
        #expect(await eventually(within: 5) { h.loop.sync { h.transport.confined.value.refusing.isEmpty } }, "our reset of 7 done")
        try h.peerSends([([1, 2], 7, 53)])
        #expect(await eventually(within: 5) { h.resetsSeen(7) == 2 })
        print("no channel: errors \(h.errors); discards \(h.transport.discards)")
        #expect(h.transport.discards.noChannel == 7 && h.transport.discards.streamsReset == 2 && h.errors.count == 2)
        #expect(!h.events.withLock { $0.contains { if case .message = $0 { true } else { false } } })
        #expect(h.wire.withLock { $0.filter { $0.stream == 7 } }.isEmpty, "nothing sent on stream 7")
    }

    /// A channel we open sends its DATA_CHANNEL_OPEN on our parity (even: we are the client)
    /// and stays `connecting` — send refused — until the peer's ACK, held back 300 ms here;
    /// a negotiated channel opens with the association and puts no DCEP on the wire.
    @Test func aChannelWeOpenStaysConnectingUntilTheAck() async throws {
        let h = try RawPeerHarness()
        defer { h.close() }
        let mine = try h.transport.createChannel(label: "mine", options: DataChannelInit())
        let fixed = try h.transport.createChannel(label: "fixed", options: DataChannelInit(negotiated: true, id: 9))
        #expect(await h.up())
        #expect(await eventually(within: 5) { h.peerMessages(0).count == 1 })
        #expect(try DCEPMessage(parsing: h.peerMessages(0)[0].1) == .open(type: DCEPChannelType(ordered: true, reliability: .reliable),
                                                                           priority: 256, label: "mine", protocol: ""))
        #expect(await eventually(within: 2) { fixed.readyState == .open })
        try await Task.sleep(for: .milliseconds(300))
        #expect(mine.id == 0 && mine.readyState == .connecting, "\(mine.readyState) without the ACK")
        #expect(throws: DataChannelError.notOpen(label: "mine", state: .connecting)) { try mine.send(.text("early")) }
        try h.peerSends([([0x02], 0, 50)])
        #expect(await eventually(within: 5) { mine.readyState == .open })
        try mine.send(.text("after the ack"))
        #expect(await eventually(within: 5) { h.peerMessages(0).count == 2 })
        #expect(h.peerMessages(0).last?.0 == 51 && h.peerMessages(0).last?.1 == Array("after the ack".utf8))
        #expect(h.dcepOnWire(9).isEmpty && h.errors.isEmpty && h.transport.discards == DataChannelDiscards())
    }

    /// No ACK comes, but the peer's first message on the stream does (RFC 8832 §6): the
    /// channel opens, and `open` is reported before that message; an ACK coming late is
    /// dropped and counted, the channel stays open.
    @Test func aChannelWeOpenOpensOnThePeersFirstMessageWhenTheAckIsLost() async throws {
        let h = try RawPeerHarness()
        defer { h.close() }
        let mine = try h.transport.createChannel(label: "mine", options: DataChannelInit(ordered: false))
        #expect(await h.up())
        #expect(await eventually(within: 5) { h.peerMessages(0).count == 1 })
        try h.peerSends([(Array("first".utf8), 0, 51)])
        #expect(await eventually(within: 5) { mine.readyState == .open })
        let order = h.events.withLock { events in
            events.compactMap { e -> String? in
                switch e {
                case .state(let ch, let s) where ch === mine: "state \(s.rawValue)"
                case .message(let ch, let m) where ch === mine: "message \(m)"
                default: nil
                }
            }
        }
        #expect(order == ["state open", "message text(\"first\")"])
        try h.peerSends([([0x02], 0, 50)])
        #expect(await eventually(within: 5) { h.transport.discards.unexpectedAck == 1 })
        #expect(mine.readyState == .open && h.errors == ["stream 0: DATA_CHANNEL_ACK with no channel of ours waiting for one: dropped"])
    }

    /// Closing a channel whose ACK has not come: `closing`, its stream reset after the OPEN
    /// (the peer has the channel), `closed` once the peer resets its side too.
    @Test func closingAChannelWaitingForItsAckResetsItsStream() async throws {
        let h = try RawPeerHarness()
        defer { h.close() }
        let mine = try h.transport.createChannel(label: "mine", options: DataChannelInit())
        #expect(await h.up())
        #expect(await eventually(within: 5) { h.peerMessages(0).count == 1 })
        mine.close()
        #expect(await eventually(within: 5) { h.resetsSeen(0) == 1 })
        #expect(mine.readyState == .closing)
        try h.peerSends([([0x02], 0, 50)])  // the ACK crossed our reset: it opens nothing
        try h.peerResets([0])
        #expect(await eventually(within: 5) { mine.readyState == .closed })
        let states = h.events.withLock { $0.compactMap { if case let .state(ch, s) = $0, ch === mine { s } else { nil } } }
        #expect(states == [.closing, .closed])
    }
}
