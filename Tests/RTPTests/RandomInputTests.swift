import Testing
import TestSupport
@testable import RTP

@Suite struct RandomInputTests {
    /// 20 000 random buffers (0–80 bytes, first byte forced to version 2 half the
    /// time) through every parser: each either parses or throws a typed error, and
    /// whatever parses re-parses from its own serialization to the same value.
    @Test func randomBytesNeverTrap() {
        var g = SplitMix64(state: 42)
        var parsedRTP = 0, parsedRTCP = 0
        for i in 0..<20_000 {
            var b = (0..<Int.random(in: 0...80, using: &g)).map { _ in UInt8.random(in: 0...255, using: &g) }
            if i % 2 == 0, !b.isEmpty { b[0] = 0x80 | (b[0] & 0x3F) }
            if let p = try? RTPPacket(parsing: b) {
                parsedRTP += 1
                #expect((try? RTPPacket(parsing: p.serialized())) == p)
            }
            if let ps = try? RTCPCompound.parse(b) {
                parsedRTCP += 1
                _ = RTCPCompound.serialize(ps)
            }
            _ = try? SenderReport(parsing: b)
            _ = try? ReceiverReport(parsing: b)
            _ = try? SourceDescription(parsing: b)
            _ = try? Goodbye(parsing: b)
            _ = try? TransportLayerNack(parsing: b)
            _ = try? PictureLossIndication(parsing: b)
            _ = try? FullIntraRequest(parsing: b)
            _ = try? ReceiverEstimatedMaxBitrate(parsing: b)
        }
        // Half the inputs start with version 2 and RTP needs only 12 bytes, so many parse.
        #expect(parsedRTP > 1000)
    }

    /// Random well-formed packets built from fields round-trip byte for byte.
    @Test func randomPacketsRoundTrip() throws {
        var g = SplitMix64(state: 7)
        for _ in 0..<2000 {
            let ext: RTPHeaderExtension? = switch UInt8.random(in: 0...3, using: &g) {
            case 0: nil
            case 1: .oneByte((0..<Int.random(in: 0...4, using: &g)).map { _ in
                RTPExtensionElement(id: .random(in: 1...14, using: &g),
                                    data: (0..<Int.random(in: 1...16, using: &g)).map { _ in .random(in: 0...255, using: &g) }) })
            case 2: .twoByte(appBits: .random(in: 0...15, using: &g), (0..<Int.random(in: 0...4, using: &g)).map { _ in
                RTPExtensionElement(id: .random(in: 1...255, using: &g),
                                    data: (0..<Int.random(in: 0...40, using: &g)).map { _ in .random(in: 0...255, using: &g) }) })
            default: .raw(profile: .random(in: 0...0x0FFF, using: &g), data: (0..<4 * Int.random(in: 0...3, using: &g)).map { _ in 1 })
            }
            let p = RTPPacket(marker: .random(using: &g), payloadType: .random(in: 0...127, using: &g),
                              sequenceNumber: .random(in: 0...65535, using: &g), timestamp: .random(in: 0...UInt32.max, using: &g),
                              ssrc: .random(in: 0...UInt32.max, using: &g),
                              csrcs: (0..<Int.random(in: 0...15, using: &g)).map { _ in .random(in: 0...UInt32.max, using: &g) },
                              headerExtension: ext,
                              payload: (0..<Int.random(in: 0...300, using: &g)).map { _ in .random(in: 0...255, using: &g) },
                              paddingLength: .random(in: 0...255, using: &g))
            let bytes = p.serialized()
            let q = try RTPPacket(parsing: bytes)
            #expect(q == p)
            #expect(q.serialized() == bytes)
        }
    }
}
