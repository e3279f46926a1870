// SharedPacketTests: frames packetized once (RFC 7741, RFC 7587) and written per stream — header fields only differ, one payload copy, SRTP in place.
import Bytes
import DTLS
import Testing
@testable import RTP

@Suite struct SharedPacketTests {
    /// A fake VP8 frame of `count` bytes (a key frame's tag: P bit 0).
    static func frameBytes(_ count: Int) -> [UInt8] { (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 1) & 0xFE } }

    /// The shared payloads are byte for byte those VP8Packetizer puts in its RTP packets
    /// (descriptor with the 15-bit PictureID, even split, marker on the last).
    @Test func sharedPayloadsAreThoseOfTheVP8Packetizer() throws {
        let frame = Self.frameBytes(3_000)
        var shared = try SharedVP8Packetizer(pictureID: 0x1234)
        var plain = try VP8Packetizer(ssrc: 1, payloadType: 96, sequenceNumber: 10, pictureID: 0x1234)
        for _ in 0..<3 {
            let packetized = try shared.packetize(frame, timestamp: 9_000, isKeyframe: true)
            let packets = try plain.packetize(frame, timestamp: 9_000)
            #expect(packetized.packets.count == 3)
            #expect(packetized.packets.map(\.marker) == packets.map(\.marker))
            #expect((0..<3).map { Array(packetized.payload($0)) } == packets.map(\.payload))
            #expect(packetized.payloadByteCount == packets.map(\.payload.count).reduce(0, +))
        }
        #expect(shared.nextPictureID == 0x1237)
        #expect(shared.nextSequence == 3)
    }

    /// Two streams write the same shared packet: the bytes differ only in the sequence
    /// number, timestamp, SSRC and the mid extension's value; the payload is identical.
    @Test func twoStreamsDifferOnlyInTheirHeaderFields() throws {
        var packetizer = try SharedVP8Packetizer(pictureID: 77)
        let frame = try packetizer.packetize(Self.frameBytes(2_500), timestamp: 3_000, isKeyframe: true)
        let midA = RTPHeaderExtension.oneByte([RTPExtensionElement(id: 1, data: Array("0".utf8))])
        let midB = RTPHeaderExtension.oneByte([RTPExtensionElement(id: 1, data: Array("1".utf8))])
        var a = RTPStreamHeader(ssrc: 0x1111_1111, payloadType: 96, sequenceNumber: 100, timestampOffset: 5, headerExtension: midA)
        var b = RTPStreamHeader(ssrc: 0x2222_2222, payloadType: 96, sequenceNumber: 40_000, timestampOffset: 0xFFFF_FFF0,
                                headerExtension: midB)
        for index in frame.packets.indices {
            var bytesA: [UInt8] = [], bytesB: [UInt8] = []
            let seqA = a.write(frame, packet: index, into: &bytesA, reserving: SRTPProfile.maxTrailerLength)
            let seqB = b.write(frame, packet: index, into: &bytesB, reserving: SRTPProfile.maxTrailerLength)
            #expect(seqA == UInt16(100 + index) && seqB == UInt16(40_000 + index))
            #expect(bytesA.count == bytesB.count)
            let differing = Set(zip(bytesA, bytesB).enumerated().filter { $0.element.0 != $0.element.1 }.map(\.offset))
            // 2–3 sequence number, 4–7 timestamp, 8–11 SSRC, 17 the mid's one byte.
            #expect(differing.isSubset(of: Set(2...11).union([17])), "differing bytes \(differing.sorted())")
            #expect(differing.contains(17))
            #expect(bytesA[20...] == bytesB[20...])
            #expect(Array(bytesA[20...]) == Array(frame.payload(index)))
            let parsedA = try RTPPacket(parsing: bytesA), parsedB = try RTPPacket(parsing: bytesB)
            #expect(parsedA.timestamp == 3_005 && parsedB.timestamp == 3_000 &- 16)
            #expect(parsedA.ssrc == 0x1111_1111 && parsedB.ssrc == 0x2222_2222)
            #expect(parsedA.marker == (index == frame.packets.count - 1))
            #expect(parsedA.headerExtension == midA && parsedB.headerExtension == midB)
            #expect(parsedA.payload == parsedB.payload)
            // Room was reserved for SRTP's trailer: protecting in place needs no new storage.
            #expect(bytesA.capacity >= bytesA.count + SRTPProfile.maxTrailerLength)
        }
    }

    /// A packet is built with one header write and one payload copy into the stream's
    /// buffer, and SRTP protects it there: the buffer's storage does not move, and the
    /// result is what protecting a copy gives.
    @Test func srtpProtectsTheStreamBufferInPlace() throws {
        var packetizer = try SharedVP8Packetizer(pictureID: 5)
        let frame = try packetizer.packetize(Self.frameBytes(1_100), timestamp: 0, isKeyframe: false)
        var header = RTPStreamHeader(ssrc: 9, payloadType: 100, sequenceNumber: 1, timestampOffset: 0)
        var buffer: [UInt8] = []
        header.write(frame, packet: 0, into: &buffer, reserving: SRTPProfile.maxTrailerLength)
        let key = [UInt8](repeating: 3, count: 16), salt = [UInt8](repeating: 4, count: 14)
        let inPlace = try SRTPSession(profile: .aes128CmSha1_80, key: key, salt: salt, direction: .outbound)
        let copying = try SRTPSession(profile: .aes128CmSha1_80, key: key, salt: salt, direction: .outbound)
        let expected = try copying.protect(rtp: buffer)
        let before = buffer.withUnsafeBufferPointer { UInt(bitPattern: $0.baseAddress) }
        try inPlace.protect(rtpInPlace: &buffer)
        let after = buffer.withUnsafeBufferPointer { UInt(bitPattern: $0.baseAddress) }
        #expect(before == after)
        #expect(buffer == expected)
        #expect(inPlace.counters.protected == 1)
        let receiver = try SRTPSession(profile: .aes128CmSha1_80, key: key, salt: salt, direction: .inbound)
        #expect(try RTPPacket(parsing: try receiver.unprotect(srtp: buffer)).payload == Array(frame.payload(0)))
    }

    /// An Opus packet is one payload of one packet (RFC 7587 §4.2), audio frames stand alone.
    @Test func opusFrameIsOnePacket() throws {
        let frame = try PacketizedFrame(opusPacket: [0xFC, 1, 2, 3], timestamp: 960, sequence: 4)
        #expect(frame.packets == [PacketizedFrame.Packet(offset: 0, length: 4, marker: false)])
        #expect(frame.isKeyframe && frame.clockRate == 48_000 && frame.pictureID == nil)
        #expect(throws: OpusPayloadError.emptyPacket) { try PacketizedFrame(opusPacket: [], timestamp: 0, sequence: 0) }
        var header = RTPStreamHeader(ssrc: 1, payloadType: 111, sequenceNumber: 65_535, timestampOffset: 10)
        var buffer: [UInt8] = []
        let first = header.write(frame, packet: 0, into: &buffer)
        #expect(first == 65_535 && header.nextSequenceNumber == 0)
        let outside = header.write(frame, packet: 1, into: &buffer)
        #expect(outside == nil)
        #expect(header.nextSequenceNumber == 0)
        let parsed = try RTPPacket(parsing: { var b: [UInt8] = []; var h = header; h.write(frame, packet: 0, into: &b); return b }())
        #expect(parsed.payload == [0xFC, 1, 2, 3] && parsed.timestamp == 970 && parsed.sequenceNumber == 0 && !parsed.marker)
    }

    /// Refusals: an empty frame, a payload size without room after the descriptor.
    @Test func badInputIsRefused() {
        #expect(throws: VP8PayloadError.payloadSizeTooSmall(maximumPayloadSize: 4, descriptorLength: 4)) {
            try SharedVP8Packetizer(pictureID: 0, maximumPayloadSize: 4)
        }
        #expect(throws: VP8PayloadError.emptyFrame) {
            var p = try SharedVP8Packetizer(pictureID: 0)
            _ = try p.packetize([], timestamp: 0, isKeyframe: false)
        }
    }
}
