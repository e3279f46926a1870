// SharedPayloadHistoryTests: a stream's retransmission history over shared frames — sized by time, references not copies, NACKs answered as first sent (RFC 4585 §6.2.1, RFC 4588 §1).
import DTLS
import Testing
@testable import RTP

@Suite struct SharedPayloadHistoryTests {
    /// A frame of `packets` packets of 1,000 bytes each.
    static func frame(_ packets: Int, sequence: UInt64 = 0) throws -> PacketizedFrame {
        var p = try SharedVP8Packetizer(pictureID: UInt16(sequence & 0x7FFF), maximumPayloadSize: 1_004)
        return try p.packetize([UInt8](repeating: 0x10, count: 1_000 * packets), timestamp: Int64(sequence) * 3_000, isKeyframe: false)
    }

    /// NACKed packets come back byte for byte as first sent, from a reference to the shared
    /// frame; older than 1 s they are neither resent nor kept, and the frame is freed.
    @Test func answersAsFirstSentAndLetsGoAfterOneSecond() throws {
        var stream = SharedFrameStream(header: RTPStreamHeader(ssrc: 7, payloadType: 96, sequenceNumber: 65_534, timestampOffset: 11),
                                       trailer: SRTPProfile.maxTrailerLength)
        var sent: [[UInt8]] = []
        weak var released: PacketizedFrame?
        do {
            let f = try Self.frame(3)
            released = f
            stream.send(f, nowMs: 1_000) { sent.append($0); return true }
            #expect(stream.history.frame(of: 65_535) === f)
        }
        #expect(released != nil, "the history holds the frame")
        #expect(sent.count == 3)
        #expect(try sent.map { try RTPPacket(parsing: $0).sequenceNumber } == [65_534, 65_535, 0])
        var again: [[UInt8]] = []
        let resent = stream.resend([0, 65_534, 5], nowMs: 1_900) { again.append($0); return true }
        #expect(resent == 2)
        #expect(again == [sent[2], sent[0]])
        #expect(stream.counts.retransmittedPacketsSent == 2 && stream.counts.retransmittedBytesSent == 2_008)
        #expect(stream.counts.packetsSent == 5)
        let late = stream.resend([0], nowMs: 2_001) { _ in true }
        #expect(late == 0, "older than 1 s: not resent")
        stream.prune(nowMs: 2_001)
        #expect(stream.history.count == 0)
        #expect(released == nil, "the frame is freed once no history holds it")
    }

    /// The history is sized by time: at 1 ms a packet it holds the last 1,001 ms of
    /// packets, growing past 1,024 as needed, and lets go of older ones as it records.
    @Test func sizedByTimeNotByCount() throws {
        var history = SharedPayloadHistory()
        let header = RTPStreamHeader(ssrc: 1, payloadType: 96, sequenceNumber: 0, timestampOffset: 0)
        let f = try Self.frame(1)
        for i in 0..<3_000 {
            history.record(f, packet: 0, sequenceNumber: UInt16(i), timestamp: 0, header: header, nowMs: Int64(i))
        }
        #expect(history.count == 1_001)
        #expect(history.payloadBytesReferenced == 1_001 * 1_004)
        var buffer: [UInt8] = []
        let held = history.writePacket(sequenceNumber: 1_999, nowMs: 2_999, into: &buffer, reserving: 0)
        let gone = history.writePacket(sequenceNumber: 1_998, nowMs: 2_999, into: &buffer, reserving: 0)
        #expect(held && !gone)
        // A burst beyond maximumPackets: the oldest go first.
        var small = SharedPayloadHistory(maximumAgeMs: 1_000, maximumPackets: 100)
        for i in 0..<250 { small.record(f, packet: 0, sequenceNumber: UInt16(i), timestamp: 0, header: header, nowMs: 0) }
        #expect(small.count == 100)
        #expect(small.frame(of: 149) == nil && small.frame(of: 150) === f && small.frame(of: 249) === f)
    }

    /// A sequence number that does not follow the last starts the history afresh; numbers
    /// never recorded are not found.
    @Test func newNumberingStartsAfresh() throws {
        var history = SharedPayloadHistory()
        let header = RTPStreamHeader(ssrc: 1, payloadType: 96, sequenceNumber: 0, timestampOffset: 0)
        let f = try Self.frame(2)
        history.record(f, packet: 0, sequenceNumber: 10, timestamp: 0, header: header, nowMs: 0)
        history.record(f, packet: 1, sequenceNumber: 11, timestamp: 0, header: header, nowMs: 0)
        history.record(f, packet: 0, sequenceNumber: 500, timestamp: 0, header: header, nowMs: 0)
        #expect(history.count == 1)
        #expect(history.frame(of: 10) == nil && history.frame(of: 500) === f)
        #expect(history.frame(of: 501) == nil && history.frame(of: 499) == nil)
        history.record(f, packet: 5, sequenceNumber: 501, timestamp: 0, header: header, nowMs: 0)
        #expect(history.count == 1, "a packet index outside the frame is not recorded")
    }

    /// A packet `transmit` refused is counted, still recorded (the receiver NACKs it).
    @Test func refusedPacketsAreCountedAndKept() throws {
        var stream = SharedFrameStream(header: RTPStreamHeader(ssrc: 7, payloadType: 96, sequenceNumber: 0, timestampOffset: 0),
                                       trailer: 0)
        stream.send(try Self.frame(2), nowMs: 0) { _ in false }
        #expect(stream.counts.packetsNotSent == 2 && stream.counts.packetsSent == 0)
        let resent = stream.resend([0, 1], nowMs: 10) { _ in true }
        #expect(resent == 2)
    }

    /// The whole-packet ring answers through the same protocol.
    @Test func retransmissionHistoryIsAStoreToo() throws {
        var ring = RetransmissionHistory(capacity: 16)
        let packet = RTPPacket(marker: true, payloadType: 96, sequenceNumber: 3, timestamp: 9, ssrc: 5, payload: [1, 2, 3])
        ring.record(packet, nowMs: 0)
        let store: any RetransmissionStore = ring
        var buffer: [UInt8] = []
        let held = store.writePacket(sequenceNumber: 3, nowMs: 500, into: &buffer, reserving: 144)
        #expect(held && buffer == packet.serialized())
        let unknown = store.writePacket(sequenceNumber: 4, nowMs: 500, into: &buffer, reserving: 144)
        let old = store.writePacket(sequenceNumber: 3, nowMs: 1_001, into: &buffer, reserving: 144)
        #expect(!unknown && !old)
    }
}
