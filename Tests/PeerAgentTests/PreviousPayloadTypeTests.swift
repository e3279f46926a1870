// Payload types a renegotiation renumbered stay taken on their m-section (aiortc 1.16 keeps sending the old ones), routing by payload type alone prefers the section that negotiates the number now, and every RTP packet that goes nowhere says why (RFC 8843 §9.2, RFC 3550 §5.1).
import Media
import RTP
import SDP
import Synchronization
import Testing
@testable import PeerAgent

@Suite struct PreviousPayloadTypeTests {
    /// The events the receivers reported, in order.
    final class Events: Sendable {
        let list = Mutex<[PeerConnectionEvent]>([])
        var previous: [PeerConnectionEvent] {
            list.withLock { $0.filter { if case .previousPayloadType = $0 { true } else { false } } }
        }
    }

    /// Audio (mid "0") and video (mid "1") negotiated as peer offers them (Opus 111, VP8
    /// 96), then as aiortc's re-offer renumbers them (Opus 96, VP8 97): the numbers of
    /// the reproduced call (`remapped`: "mid 0: payload type 111 is now 96; mid 1: payload
    /// type 96 is now 97"). The remote's streams are announced: audio 0xA, video 0xB.
    static func renumbered(_ events: Events) -> [RtpTransceiver] {
        [(MediaKind.audio, "0", 111, 96, UInt32(0xA)), (MediaKind.video, "1", 96, 97, 0xB)].map { kind, mid, first, second, ssrc in
            let t = RtpTransceiver(kind: kind, direction: .sendrecv,
                                   sender: RtpSender(kind: kind, ssrc: 1, cname: "c", encoding: SendEncoding(), video: nil, audio: nil),
                                   receiver: RtpReceiver(kind: kind, options: ReceiveOptions(decode: false), localSSRC: 1,
                                                         onEvent: { e in events.list.withLock { $0.append(e) } }))
            t.mid = mid
            t.currentDirection = .sendrecv
            t.receiver.configure(mid: mid, payloadTypes: [first], remoteSSRC: ssrc)
            t.receiver.configure(mid: mid, payloadTypes: [second], remoteSSRC: ssrc)
            return t
        }
    }

    static func packet(ssrc: UInt32, payloadType: UInt8, mid: String? = nil, sequenceNumber: UInt16 = 1) -> RTPPacket {
        RTPPacket(payloadType: payloadType, sequenceNumber: sequenceNumber, timestamp: UInt32(sequenceNumber) * 3000, ssrc: ssrc,
                  headerExtension: mid.map { .oneByte([RTPExtensionElement(id: 1, data: Array($0.utf8))]) },
                  payload: [0x10, 0, 0])
    }

    /// After the renumbering: video's old 96 (now audio's number) is still taken on the
    /// video section by mid and by its SSRC, audio's old 111 on audio; a number from the
    /// other section's past is not; by payload type alone 96 goes to audio, which
    /// negotiates it now, and 111 to audio, which kept it. What goes nowhere says why.
    @Test func aRenumberedSectionStillTakesItsOldNumbers() {
        let list = Self.renumbered(Events())
        let (audio, video) = (list[0].receiver, list[1].receiver)
        var router = BundleRouter()
        router.midExtensionID = 1
        router.announce(ssrc: 0xA, to: audio)
        router.announce(ssrc: 0xB, to: video)
        func to(_ p: RTPPacket) -> String {
            switch router.resolve(p, among: list) {
            case let .receiver(r): return r === audio ? "audio" : r === video ? "video" : "?"
            case .unknownPayloadType: return "unknown payload type"
            case .unknownSource: return "unknown source"
            }
        }
        #expect(to(Self.packet(ssrc: 0xB, payloadType: 96, mid: "1")) == "video")
        #expect(to(Self.packet(ssrc: 0xB, payloadType: 96)) == "video", "by SSRC")
        #expect(to(Self.packet(ssrc: 0xB, payloadType: 97, mid: "1")) == "video")
        #expect(to(Self.packet(ssrc: 0xA, payloadType: 111, mid: "0")) == "audio")
        #expect(to(Self.packet(ssrc: 0xA, payloadType: 96, mid: "0")) == "audio")
        #expect(to(Self.packet(ssrc: 0xB, payloadType: 111, mid: "1")) == "unknown payload type", "111 was audio's, never video's")
        #expect(to(Self.packet(ssrc: 0xC, payloadType: 96)) == "audio", "by number alone: the section that negotiates it now")
        #expect(to(Self.packet(ssrc: 0xD, payloadType: 111)) == "audio", "nobody negotiates 111 now: the section that kept it")
        #expect(to(Self.packet(ssrc: 0xE, payloadType: 120)) == "unknown payload type")
        #expect(to(Self.packet(ssrc: 0xF, payloadType: 120, mid: "7")) == "unknown source", "a mid that is none of ours")
        #expect(video.accepts(payloadType: 96) && !video.negotiates(payloadType: 96) && video.negotiates(payloadType: 97))
    }

    /// The video receiver takes its old 96: each such packet is counted
    /// (`packetsWithPreviousPayloadType`, `previousPayloadType` 96), reported once
    /// (`previousPayloadType` mid 1, 96, negotiated 97); a packet of the new number is not
    /// counted; one from another SSRC is dropped and counted (`unknownSSRCDrops`).
    @Test func theReceiverCountsAndReportsOncePerSection() {
        let events = Events()
        let video = Self.renumbered(events)[1].receiver
        for seq in UInt16(1)...5 {
            let p = Self.packet(ssrc: 0xB, payloadType: seq == 4 ? 97 : 96, sequenceNumber: seq)
            _ = video.handle(p, payloadBytes: 3, headerBytes: 12)
        }
        _ = video.handle(Self.packet(ssrc: 0xCC, payloadType: 96, sequenceNumber: 6), payloadBytes: 3, headerBytes: 12)
        let s = video.snapshot()
        video.close()
        #expect(events.previous == [.previousPayloadType(mid: "1", payloadType: 96, negotiated: 97)])
        #expect(s.packetsWithPreviousPayloadType == 4 && s.previousPayloadType == 96)
        #expect(s.packetsReceived == 5 && s.codecId == "CO-97")
        #expect(video.unknownSSRCDrops == 1)
    }

    /// Kept across negotiations (aiortc's unhold re-offer renumbers the same way again),
    /// until a negotiation gives the number to the section again; a new mid starts afresh.
    @Test func keptUntilNegotiatedAgain() {
        let video = Self.renumbered(Events())[1].receiver
        video.configure(mid: "1", payloadTypes: [97], remoteSSRC: 0xB)
        #expect(video.accepts(payloadType: 96) && video.accepts(payloadType: 97))
        video.configure(mid: "1", payloadTypes: [96], remoteSSRC: 0xB)
        #expect(video.negotiates(payloadType: 96) && video.accepts(payloadType: 97) && !video.negotiates(payloadType: 97))
        video.configure(mid: "3", payloadTypes: [100], remoteSSRC: 0xB)
        #expect(!video.accepts(payloadType: 96) && !video.accepts(payloadType: 97))
        video.close()
    }
}

/// RTCPSession.receive: one bad packet in a received compound never costs the rest
/// (RFC 3550 §6.1); the malformed ones are counted.
@Suite struct RTCPSessionReceiveTests {
    /// A sender report from the remote video stream with a report block about our stream
    /// (SSRC 1), an SDES whose CNAME item claims 200 bytes, and a BYE for the remote
    /// stream: the report block makes our `remote-inbound-rtp` (5 lost), the BYE is
    /// counted; then a compound whose second header's length runs past its end keeps its RR.
    @Test func aCompoundWithABadItemIsHandledAroundIt() {
        let list = PreviousPayloadTypeTests.renumbered(PreviousPayloadTypeTests.Events())
        let session = RTCPSession(cname: "us")
        let sr = SenderReport(ssrc: 0xB, ntpTimestamp: 1 << 32, rtpTimestamp: 0, packetCount: 1, octetCount: 1,
                              reports: [ReceptionReport(ssrc: 1, cumulativeLost: 5)])
        var sdes = SourceDescription(ssrc: 0xB, cname: "them").serialized()
        sdes[9] = 200
        session.receive(sr.serialized() + sdes + Goodbye(sources: [0xB]).serialized(), transceivers: list)
        var counts = session.receivedCounts
        #expect(counts.senderReports == 1 && counts.goodbyesBySSRC == [0xB: 1] && counts.malformed == 1)
        #expect(counts.sourceDescriptions == 0 && counts.compounds == 1)
        #expect(session.remoteInboundStats.map(\.packetsLost) == [5])
        session.receive(ReceiverReport(ssrc: 0xB, reports: []).serialized() + [0x81, 0xCB, 0x00, 0x09, 0, 0, 0, 0xB], transceivers: list)
        counts = session.receivedCounts
        #expect(counts.receiverReports == 1 && counts.goodbyes == 1 && counts.malformed == 2 && counts.compounds == 2)
        for t in list { t.receiver.close() }
    }
}
