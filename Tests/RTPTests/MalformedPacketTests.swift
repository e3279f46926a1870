import Testing
@testable import RTP

/// One malformed packet and the exact error its parser must throw.
struct Malformed: Sendable, CustomTestStringConvertible {
    enum Expected: Sendable { case rtp(RTPError), rtcp(RTCPError) }
    let name: String
    let bytes: [UInt8]
    let expected: Expected
    var testDescription: String { name }
}

/// A 12-byte RTP fixed header with the given first byte (V/P/X/CC), PT 96, seq 1, ts 0, SSRC 9.
private func rtpHeader(_ b0: UInt8) -> [UInt8] { [b0, 0x60, 0, 1, 0, 0, 0, 0, 0, 0, 0, 9] }
/// An RR with RC=0 from SSRC 5 (8 bytes).
private let rr0: [UInt8] = [0x80, 0xC9, 0x00, 0x01, 0, 0, 0, 5]

let malformedCases: [Malformed] = [
    // RTP (RFC 3550 §5.1, RFC 8285)
    .init(name: "RTP empty", bytes: [],
          expected: .rtp(.truncated(.truncated(offset: 0, wanted: 1, available: 0, field: "RTP header byte 0")))),
    .init(name: "RTP header truncated at SSRC", bytes: Array(rtpHeader(0x80).prefix(11)),
          expected: .rtp(.truncated(.truncated(offset: 8, wanted: 4, available: 3, field: "SSRC")))),
    .init(name: "RTP header truncated at sequence number", bytes: [0x80, 0x60, 0x00],
          expected: .rtp(.truncated(.truncated(offset: 2, wanted: 2, available: 1, field: "sequence number")))),
    .init(name: "RTP version 1", bytes: rtpHeader(0x40), expected: .rtp(.badVersion(offset: 0, version: 1))),
    .init(name: "RTP version 0 (STUN-like)", bytes: rtpHeader(0x00), expected: .rtp(.badVersion(offset: 0, version: 0))),
    .init(name: "CSRC count beyond length", bytes: rtpHeader(0x82) + [0, 0, 0, 1],
          expected: .rtp(.csrcCountBeyondLength(offset: 12, count: 2, available: 4))),
    .init(name: "CSRC count 15 with no CSRCs", bytes: rtpHeader(0x8F),
          expected: .rtp(.csrcCountBeyondLength(offset: 12, count: 15, available: 0))),
    .init(name: "X bit without extension header", bytes: rtpHeader(0x90),
          expected: .rtp(.truncated(.truncated(offset: 12, wanted: 2, available: 0, field: "extension profile")))),
    .init(name: "extension length beyond packet", bytes: rtpHeader(0x90) + [0xBE, 0xDE, 0x00, 0x02, 0x10, 0x01, 0, 0],
          expected: .rtp(.extensionLengthBeyondPacket(offset: 12, wanted: 8, available: 4))),
    .init(name: "one-byte element beyond block", bytes: rtpHeader(0x90) + [0xBE, 0xDE, 0x00, 0x01, 0x10, 0x01, 0x23, 0xAA],
          expected: .rtp(.extensionElementBeyondBlock(offset: 18, id: 2, wanted: 4, available: 1))),
    .init(name: "two-byte element beyond block", bytes: rtpHeader(0x90) + [0x10, 0x00, 0x00, 0x01, 0x03, 0x05, 0xAA, 0xBB],
          expected: .rtp(.extensionElementBeyondBlock(offset: 16, id: 3, wanted: 5, available: 2))),
    .init(name: "two-byte element missing length", bytes: rtpHeader(0x90) + [0x10, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x04],
          expected: .rtp(.extensionElementBeyondBlock(offset: 19, id: 4, wanted: 1, available: 0))),
    .init(name: "zero padding count", bytes: rtpHeader(0xA0) + [1, 2, 0],
          expected: .rtp(.zeroPaddingCount(offset: 14))),
    .init(name: "padding longer than payload", bytes: rtpHeader(0xA0) + [1, 2, 20],
          expected: .rtp(.paddingLongerThanPayload(offset: 14, padding: 20, available: 3))),
    .init(name: "padding bit with no bytes after header", bytes: rtpHeader(0xA0),
          expected: .rtp(.paddingLongerThanPayload(offset: 12, padding: 1, available: 0))),

    // RTCP (RFC 3550 §6, RFC 4585, RFC 5104, REMB)
    .init(name: "RTCP empty", bytes: [], expected: .rtcp(.empty)),
    .init(name: "RTCP 3 bytes", bytes: [0x80, 0xC9, 0x00], expected: .rtcp(.trailingBytes(offset: 0, count: 3))),
    .init(name: "RTCP version 3", bytes: [0xC0, 0xC9, 0x00, 0x01, 0, 0, 0, 5],
          expected: .rtcp(.badVersion(offset: 0, version: 3))),
    .init(name: "RTCP length field lies", bytes: [0x80, 0xC9, 0x00, 0x07, 0, 0, 0, 5],
          expected: .rtcp(.lengthBeyondBuffer(offset: 2, length: 32, available: 8))),
    .init(name: "second packet's length lies", bytes: rr0 + [0x81, 0xCE, 0x00, 0x09, 0, 0, 0, 1],
          expected: .rtcp(.lengthBeyondBuffer(offset: 10, length: 40, available: 8))),
    .init(name: "compound with 2 trailing garbage bytes", bytes: rr0 + [0xDE, 0xAD],
          expected: .rtcp(.trailingBytes(offset: 8, count: 2))),
    .init(name: "compound with 4 trailing zero bytes", bytes: rr0 + [0, 0, 0, 0],
          expected: .rtcp(.badVersion(offset: 8, version: 0))),
    .init(name: "RR count inconsistent with length", bytes: [0x81, 0xC9, 0x00, 0x01, 0, 0, 0, 5],
          expected: .rtcp(.countInconsistentWithLength(offset: 0, count: 1, length: 8))),
    .init(name: "SR count inconsistent with length", bytes: [0x81, 0xC8, 0x00, 0x06] + [UInt8](repeating: 0, count: 24),
          expected: .rtcp(.countInconsistentWithLength(offset: 0, count: 1, length: 28))),
    .init(name: "SR shorter than sender info", bytes: [0x80, 0xC8, 0x00, 0x01, 0, 0, 0, 1],
          expected: .rtcp(.countInconsistentWithLength(offset: 0, count: 0, length: 8))),
    .init(name: "RTCP zero padding count", bytes: [0xA0, 0xC9, 0x00, 0x01, 0, 0, 0, 0],
          expected: .rtcp(.badPadding(offset: 7, padding: 0))),
    .init(name: "RTCP padding longer than packet", bytes: [0xA0, 0xC9, 0x00, 0x01, 0, 0, 0, 9],
          expected: .rtcp(.badPadding(offset: 7, padding: 9))),
    .init(name: "BYE count inconsistent with length", bytes: [0x82, 0xCB, 0x00, 0x01, 0, 0, 0, 5],
          expected: .rtcp(.countInconsistentWithLength(offset: 0, count: 2, length: 8))),
    .init(name: "BYE reason beyond packet", bytes: [0x81, 0xCB, 0x00, 0x02, 0, 0, 0, 5, 0x09, 0x61, 0x62, 0x63],
          expected: .rtcp(.truncated(.truncated(offset: 9, wanted: 9, available: 3, field: "BYE reason")))),
    .init(name: "SDES item beyond packet", bytes: [0x81, 0xCA, 0x00, 0x02, 0, 0, 0, 5, 0x01, 0x10, 0x61, 0x62],
          expected: .rtcp(.truncated(.truncated(offset: 10, wanted: 16, available: 2, field: "SDES item text")))),
    .init(name: "SDES chunk without terminator", bytes: [0x81, 0xCA, 0x00, 0x02, 0, 0, 0, 5, 0x01, 0x02, 0x61, 0x62],
          expected: .rtcp(.truncated(.truncated(offset: 12, wanted: 1, available: 0, field: "SDES item type")))),
    .init(name: "NACK without media SSRC", bytes: [0x81, 0xCD, 0x00, 0x01, 0, 0, 0, 1],
          expected: .rtcp(.truncated(.truncated(offset: 8, wanted: 4, available: 0, field: "media SSRC")))),
    .init(name: "PLI without media SSRC, second in compound", bytes: rr0 + [0x81, 0xCE, 0x00, 0x01, 0, 0, 0, 1],
          expected: .rtcp(.truncated(.truncated(offset: 16, wanted: 4, available: 0, field: "media SSRC")))),
    .init(name: "REMB SSRC count inconsistent with length",
          bytes: [0x8F, 0xCE, 0x00, 0x05, 0, 0, 0, 1, 0, 0, 0, 0, 0x52, 0x45, 0x4D, 0x42, 0x02, 0x00, 0x00, 0x01, 0, 0, 0, 7],
          expected: .rtcp(.countInconsistentWithLength(offset: 16, count: 2, length: 24))),
]

@Suite struct MalformedPacketTests {
    @Test(arguments: malformedCases)
    func givesItsSpecificError(_ c: Malformed) {
        switch c.expected {
        case let .rtp(e):
            #expect(throws: e) { _ = try RTPPacket(parsing: c.bytes) }
        case let .rtcp(e):
            #expect(throws: e) { _ = try RTCPCompound.parse(c.bytes) }
        }
    }

    @Test func rembParserRejectsOtherApplicationFeedback() {
        let bytes: [UInt8] = [0x8F, 0xCE, 0x00, 0x03, 0, 0, 0, 1, 0, 0, 0, 0, 0x52, 0x45, 0x4D, 0x58]
        #expect(throws: RTCPError.missingREMBIdentifier(offset: 12)) { _ = try ReceiverEstimatedMaxBitrate(parsing: bytes) }
        // Through the compound parser the same packet is kept raw, not rejected.
        #expect((try? RTCPCompound.parse(bytes))?.count == 1)
    }

    @Test func typeParsersRejectOtherTypes() {
        let pli: [UInt8] = [0x81, 0xCE, 0x00, 0x02, 0, 0, 0, 1, 0, 0, 0, 2]
        #expect(throws: RTCPError.wrongPacketType(offset: 1, packetType: 206, format: 1)) { _ = try TransportLayerNack(parsing: pli) }
        #expect(throws: RTCPError.wrongPacketType(offset: 1, packetType: 206, format: 1)) { _ = try FullIntraRequest(parsing: pli) }
        #expect(throws: RTCPError.wrongPacketType(offset: 1, packetType: 206, format: 1)) { _ = try SenderReport(parsing: pli) }
    }

    /// Every prefix of valid packets must throw or parse, never trap.
    @Test func everyTruncationIsHandled() {
        let rtp = RTPPacket(marker: true, payloadType: 96, sequenceNumber: 1, timestamp: 2, ssrc: 3, csrcs: [4],
                            headerExtension: .oneByte([RTPExtensionElement(id: 1, data: [1, 2, 3])]),
                            payload: [9, 9, 9], paddingLength: 2).serialized()
        for n in 0..<rtp.count { #expect(throws: RTPError.self) { _ = try RTPPacket(parsing: Array(rtp.prefix(n))) } }
        let compound = ReceiverReport(ssrc: 1, reports: [ReceptionReport(ssrc: 2)]).serialized()
            + SourceDescription(ssrc: 1, cname: "c").serialized()
        for n in 0..<compound.count where n != 32 {
            #expect(throws: RTCPError.self) { _ = try RTCPCompound.parse(Array(compound.prefix(n))) }
        }
    }
}
