// RTCPCompound.parseSkipping: one bad packet in a compound never costs the rest (RFC 3550 §6.1, RFC 4585, RFC 5506), and REMB values past 64 bits saturate (draft-alvestrand-rmcat-remb-03).
import Testing
@testable import RTP

@Suite struct RTCPCompoundSkippingTests {
    /// RFC 3550 §6.1's regular compound: SR (one report block), SDES CNAME, BYE.
    static let sr = SenderReport(ssrc: 0x1122_3344, ntpTimestamp: 0xE5F3_A2B1_8000_0000, rtpTimestamp: 90_000,
                                 packetCount: 100, octetCount: 120_000, reports: [ReceptionReport(ssrc: 7, fractionLost: 16)])
    static let sdes = SourceDescription(ssrc: 0x1122_3344, cname: "peer@example")
    static let bye = Goodbye(sources: [0x1122_3344])

    /// An SDES packet of the right length whose CNAME item claims 200 bytes: its body
    /// does not parse, its header places the next packet.
    static var brokenSDES: [UInt8] {
        var b = sdes.serialized()
        b[9] = 200  // item length
        return b
    }

    /// SR, a malformed SDES, BYE: the SR and the BYE are handled, the SDES skipped and
    /// counted with its own error (offset in the compound).
    @Test func aMalformedItemIsSkippedByItsLength() {
        let srBytes = Self.sr.serialized()
        let bytes = srBytes + Self.brokenSDES + Self.bye.serialized()
        #expect(throws: RTCPError.self) { _ = try RTCPCompound.parse(bytes) }
        let r = RTCPCompound.parseSkipping(bytes)
        #expect(r.packets == [.senderReport(Self.sr), .goodbye(Self.bye)])
        #expect(r.skipped == 1 && r.rest == nil && r.malformed == 1)
        #expect(r.firstSkipped == .truncated(.truncated(offset: srBytes.count + 10, wanted: 200, available: 14, field: "SDES item text")))
    }

    /// RFC 4585 §3.1's feedback compound: RR, SDES, then a PLI too short for its media SSRC
    /// (length 1: 8 bytes), then a NACK for 0x0A0B0C0D (PID 1000, BLP 0b101): the NACK is
    /// handled after the bad PLI; an APP packet (type 204) and an XR (207) among them are
    /// unknown types, kept as such.
    @Test func feedbackAfterABadPLIIsHandled() {
        let rr = ReceiverReport(ssrc: 5, reports: [])
        let badPLI: [UInt8] = [0x81, 0xCE, 0x00, 0x01, 0, 0, 0, 5]
        let nack = TransportLayerNack(senderSSRC: 5, mediaSSRC: 0x0A0B_0C0D, lost: [1000, 1001, 1003])
        let app: [UInt8] = [0x80, 0xCC, 0x00, 0x02, 0, 0, 0, 5, 0x6E, 0x61, 0x6D, 0x65]
        let xr: [UInt8] = [0x80, 0xCF, 0x00, 0x01, 0, 0, 0, 5]
        let bytes = rr.serialized() + SourceDescription(ssrc: 5, cname: "c").serialized() + app + badPLI + xr + nack.serialized()
        let r = RTCPCompound.parseSkipping(bytes)
        #expect(r.skipped == 1 && r.rest == nil)
        #expect(r.packets.count == 5)
        #expect(r.packets.first == .receiverReport(rr))
        #expect(r.packets.last == .nack(nack))
        if case let .nack(n) = r.packets.last { #expect(n.lostSequenceNumbers == [1000, 1001, 1003]) }
        let unknown = r.packets.compactMap { p -> UInt8? in if case let .unknown(h, _) = p { h.packetType } else { nil } }
        #expect(unknown == [204, 207])
    }

    /// A length field that runs past the end (or a header that is not version 2, or 1–3
    /// trailing bytes) leaves nothing to split the rest by: what came before it is kept,
    /// the rest counted as one malformed.
    @Test func aBrokenLengthKeepsWhatCameBefore() {
        let head = Self.sr.serialized() + Self.sdes.serialized()
        let bye = Self.bye.serialized()
        let cases: [([UInt8], RTCPError)] = [
            ([0x81, 0xCB, 0x00, 0x09, 0, 0, 0, 1] + bye, .lengthBeyondBuffer(offset: head.count + 2, length: 40, available: 8 + bye.count)),
            ([0x41, 0xCB, 0x00, 0x01, 0, 0, 0, 1] + bye, .badVersion(offset: head.count, version: 1)),
            ([0x81, 0xCB], .trailingBytes(offset: head.count, count: 2)),
        ]
        for (tail, error) in cases {
            let r = RTCPCompound.parseSkipping(head + tail)
            #expect(r.packets == [.senderReport(Self.sr), .sourceDescription(Self.sdes)], "\(error)")
            #expect(r.rest == error, "\(String(describing: r.rest))")
            #expect(r.skipped == 0 && r.malformed == 1)
        }
        #expect(RTCPCompound.parseSkipping([]).rest == .empty)
        #expect(RTCPCompound.parseSkipping([0x81, 0xCB, 0x00, 0x09]).packets.isEmpty)
    }

    /// A reduced-size packet (RFC 5506 §3: a lone PLI) parses alone; broken, it is the one
    /// malformed packet and nothing else is lost.
    @Test func reducedSizePackets() {
        let pli = PictureLossIndication(senderSSRC: 1, mediaSSRC: 2)
        #expect(RTCPCompound.parseSkipping(pli.serialized()).packets == [.pictureLossIndication(pli)])
        let r = RTCPCompound.parseSkipping([0x81, 0xCE, 0x00, 0x01, 0, 0, 0, 1])
        #expect(r.packets.isEmpty && r.skipped == 1 && r.malformed == 1)
    }

    /// On every well-formed compound the skipping parser and the strict one agree, with
    /// nothing skipped: the RFC 3550 compound and every prefix of it that ends on a packet.
    @Test func wellFormedCompoundsParseTheSameEitherWay() throws {
        let parts = [Self.sr.serialized(), Self.sdes.serialized(), Self.bye.serialized(),
                     ReceiverEstimatedMaxBitrate(senderSSRC: 1, bitrate: 2_500_000, ssrcs: [9]).serialized()]
        var bytes: [UInt8] = []
        for part in parts {
            bytes += part
            let r = RTCPCompound.parseSkipping(bytes)
            #expect(r.packets == (try RTCPCompound.parse(bytes)))
            #expect(r.malformed == 0 && r.firstSkipped == nil)
        }
    }
}

/// REMB's bitrate is an 18-bit mantissa shifted by a 6-bit exponent (up to 63): values
/// past 64 bits saturate to UInt64.max instead of failing the packet
/// (draft-alvestrand-rmcat-remb-03 §2.2).
@Suite struct REMBSaturationTests {
    /// A REMB from sender SSRC 1 for SSRC 9 with `exponent` and `mantissa`.
    static func remb(exponent: UInt32, mantissa: UInt32) -> [UInt8] {
        let word = exponent << 18 | mantissa
        return [0x8F, 0xCE, 0x00, 0x05, 0, 0, 0, 1, 0, 0, 0, 0, 0x52, 0x45, 0x4D, 0x42,
                0x01, UInt8(word >> 16), UInt8((word >> 8) & 0xFF), UInt8(word & 0xFF), 0, 0, 0, 9]
    }

    @Test(arguments: [
        (UInt32(46), UInt32(0x3_FFFF), UInt64(0x3_FFFF) << 46),  // the largest exact 18-bit value
        (47, 0x3_FFFF, UInt64.max),                              // one place more: 65 bits
        (50, 1, UInt64(1) << 50),                                // a small mantissa fits further
        (63, 1, UInt64(1) << 63),
        (63, 2, UInt64.max),
        (63, 0x3_FFFF, UInt64.max),                              // the largest code
        (63, 0, 0),
    ])
    func bitrate(exponent: UInt32, mantissa: UInt32, expected: UInt64) throws {
        let bytes = Self.remb(exponent: exponent, mantissa: mantissa)
        let remb = try ReceiverEstimatedMaxBitrate(parsing: bytes)
        #expect(remb.bitrate == expected)
        #expect(remb.ssrcs == [9])
        // Whatever was parsed writes back to bytes that parse to the same value.
        #expect(try ReceiverEstimatedMaxBitrate(parsing: remb.serialized()) == remb)
    }

    /// Inside a compound the saturated REMB is handled like any other, and the packets
    /// around it too.
    @Test func aSaturatedREMBInACompound() throws {
        let rr = ReceiverReport(ssrc: 1, reports: [])
        let packets = try RTCPCompound.parse(rr.serialized() + Self.remb(exponent: 60, mantissa: 0x2_0000) + rr.serialized())
        #expect(packets == [.receiverReport(rr), .receiverEstimatedMaxBitrate(ReceiverEstimatedMaxBitrate(senderSSRC: 1, bitrate: .max, ssrcs: [9])),
                            .receiverReport(rr)])
        // UInt64.max goes out as the largest code, exponent 63 and mantissa 0x3FFFF.
        #expect(Array(ReceiverEstimatedMaxBitrate(senderSSRC: 1, bitrate: .max, ssrcs: [9]).serialized()[17..<20]) == [0xFF, 0xFF, 0xFF])
    }
}
