// Tests of StreamVerdict: the data channel stream rules (RFC 8832 §4–§6, RFC 8831 §6) for each kind of message, DTLS role and stream holder — what is opened, acknowledged, delivered, refused with a reset, or dropped.
import SCTP
import Testing

@Suite struct StreamVerdictTests {
    static let open = DCEPMessage.open(type: DCEPChannelType(ordered: true, reliability: .reliable), priority: 256,
                                       label: "chat", protocol: "").serialized
    static let opened = StreamVerdict.open(type: DCEPChannelType(ordered: true, reliability: .reliable), priority: 256,
                                           label: "chat", protocol: "")

    /// The DTLS client opens even stream ids, the server odd ones (RFC 8832 §6): the peer's
    /// OPEN is taken on its parity and refused on ours, whichever role we have.
    @Test func anOpenIsTakenOnThePeersParityAndRefusedOnOurs() {
        func judge(_ sid: UInt16, client: Bool?) -> StreamVerdict {
            StreamVerdict.judge(ppid: 50, data: Self.open, streamId: sid, weAreDTLSClient: client, holder: .none)
        }
        #expect(judge(1, client: true) == Self.opened && judge(1023, client: true) == Self.opened)
        #expect(judge(0, client: true) == .refuse(.wrongParity(weAreDTLSClient: true)))
        #expect(judge(2, client: false) == Self.opened && judge(0, client: false) == Self.opened)
        #expect(judge(3, client: false) == .refuse(.wrongParity(weAreDTLSClient: false)))
        #expect(judge(4, client: nil) == Self.opened && judge(5, client: nil) == Self.opened, "no role known: no parity")
        #expect(StreamRefusal.wrongParity(weAreDTLSClient: true).description
            == "DATA_CHANNEL_OPEN on an even stream id, which is ours to open: the peer is the DTLS server and opens odd ids (RFC 8832 §6)")
    }

    /// An OPEN on a stream a channel holds is refused, its channel named; so is one that does
    /// not parse on a free stream (the peer's channel is open on its side already).
    @Test func anOpenOnAStreamInUseOrUnreadableIsRefused() {
        for awaiting in [false, true] {
            #expect(StreamVerdict.judge(ppid: 50, data: Self.open, streamId: 1, weAreDTLSClient: true,
                                        holder: .channel(label: "old\u{1B}[2J", awaitingAck: awaiting))
                == .refuse(.streamInUse(label: "old\u{1B}[2J")))
        }
        #expect(StreamRefusal.streamInUse(label: "old\u{1B}[2J").description
            == "DATA_CHANNEL_OPEN on the stream of channel \"old\\u001B[2J\", which is in use (RFC 8832 §6)")
        let badType: [UInt8] = [0x03, 0x05, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
        #expect(StreamVerdict.judge(ppid: 50, data: badType, streamId: 1, weAreDTLSClient: true, holder: .none)
            == .refuse(.malformedOpen(.unknownChannelType(0x05))))
        if case .refuse(.malformedOpen)? = Optional(StreamVerdict.judge(ppid: 50, data: [0x03, 0], streamId: 1, weAreDTLSClient: true, holder: .none)) {} else {
            Issue.record("a truncated OPEN is not refused as malformed")
        }
    }

    /// A label of the peer's is shown escaped and cut at 64 Unicode scalars (FuzzDCEP found
    /// 1,000 NULs made a 6,000-character reason through `Untrusted` alone).
    @Test func aLongLabelIsShownCut() {
        let label = String(repeating: "\u{0}", count: 1000)
        let text = StreamRefusal.streamInUse(label: label).description
        #expect(text.count < 600 && text.contains(String(repeating: "\\u0000", count: 64) + "… (1000 bytes)\""), "\(text.count)")
        #expect(StreamVerdict.shown("chat") == "chat" && StreamVerdict.shown(String(repeating: "é", count: 65)).hasSuffix("é… (130 bytes)"))
    }

    /// DCEP types other than OPEN (0x03) and ACK (0x02) are refused on any stream; an ACK
    /// opens only our channel that waits for one; an ACK with bytes after it or an empty DCEP
    /// message is dropped without a reset.
    @Test func unknownTypesAreRefusedAndAcksOpenOnlyAWaitingChannel() {
        for holder in [StreamVerdict.Holder.none, .channel(label: "x", awaitingAck: false)] {
            #expect(StreamVerdict.judge(ppid: 50, data: [0x07, 1, 2], streamId: 4, weAreDTLSClient: true, holder: holder)
                == .refuse(.unknownMessageType(0x07)))
            #expect(StreamVerdict.judge(ppid: 50, data: [0x00], streamId: 4, weAreDTLSClient: true, holder: holder)
                == .refuse(.unknownMessageType(0x00)))
        }
        #expect(StreamRefusal.unknownMessageType(0x07).description
            == "DCEP message of unknown type 0x7 (expected 0x03 DATA_CHANNEL_OPEN or 0x02 DATA_CHANNEL_ACK, RFC 8832 §5)")
        #expect(StreamVerdict.judge(ppid: 50, data: [0x02], streamId: 0, weAreDTLSClient: true, holder: .channel(label: "x", awaitingAck: true))
            == .acknowledged)
        #expect(StreamVerdict.judge(ppid: 50, data: [0x02], streamId: 0, weAreDTLSClient: true, holder: .channel(label: "x", awaitingAck: false))
            == .drop(.unexpectedAck))
        #expect(StreamVerdict.judge(ppid: 50, data: [0x02], streamId: 0, weAreDTLSClient: true, holder: .none) == .drop(.unexpectedAck))
        #expect(StreamVerdict.judge(ppid: 50, data: [0x02, 0], streamId: 0, weAreDTLSClient: true, holder: .channel(label: "x", awaitingAck: true))
            == .drop(.malformed(.trailing(offset: 1, count: 1))))
        if case .drop(.malformed)? = Optional(StreamVerdict.judge(ppid: 50, data: [], streamId: 0, weAreDTLSClient: true, holder: .none)) {} else {
            Issue.record("an empty DCEP message is not dropped as malformed")
        }
    }

    /// User data (and any other PPID) goes to the channel on its stream, and on a stream
    /// with no channel is refused (RFC 8831 §6: data needs a channel).
    @Test func userDataNeedsAChannel() {
        for ppid: UInt32 in [51, 52, 53, 54, 56, 57, 99] {
            #expect(StreamVerdict.judge(ppid: ppid, data: [1, 2, 3], streamId: 9, weAreDTLSClient: false, holder: .none)
                == .refuse(.noChannel(ppid: ppid, bytes: 3)))
            #expect(StreamVerdict.judge(ppid: ppid, data: [1], streamId: 9, weAreDTLSClient: false,
                                        holder: .channel(label: "x", awaitingAck: true)) == .deliver)
        }
        #expect(StreamRefusal.noChannel(ppid: 53, bytes: 3).description == "a message (PPID 53, 3 bytes) on a stream which has no open channel")
    }
}
