import Testing
@testable import RTP

@Suite struct RTPPacketTests {
    /// V=2 P=0 X=0 CC=0, M=1 PT=96, seq 0x1234, ts 0x00015F90 (90000 = 1 s at 90 kHz), SSRC 0xCAFEBABE, payload DE AD.
    let simple: [UInt8] = [0x80, 0xE0, 0x12, 0x34, 0x00, 0x01, 0x5F, 0x90, 0xCA, 0xFE, 0xBA, 0xBE, 0xDE, 0xAD]

    @Test func parsesFixedHeader() throws {
        let p = try RTPPacket(parsing: simple)
        #expect(p.version == 2)
        #expect(p.marker)
        #expect(p.payloadType == 96)
        #expect(p.sequenceNumber == 0x1234)
        #expect(p.timestamp == 90_000)
        #expect(p.ssrc == 0xCAFE_BABE)
        #expect(p.csrcs.isEmpty)
        #expect(p.headerExtension == nil)
        #expect(!p.padding && !p.extension)
        #expect(p.payload == [0xDE, 0xAD])
        #expect(p.serialized() == simple)
    }

    @Test func csrcsAndPaddingRoundTrip() throws {
        // CC=2, P=1: two CSRCs, payload 01 02 03, then 3 padding bytes 00 00 03.
        let bytes: [UInt8] = [0xA2, 0x6F, 0x00, 0x01, 0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x01,
                              0x00, 0x00, 0x00, 0x0A, 0x00, 0x00, 0x00, 0x0B,
                              0x01, 0x02, 0x03, 0x00, 0x00, 0x03]
        let p = try RTPPacket(parsing: bytes)
        #expect(p.csrcs == [10, 11])
        #expect(p.payloadType == 111 && !p.marker)
        #expect(p.paddingLength == 3)
        #expect(p.padding)
        #expect(p.payload == [1, 2, 3])
        #expect(p.serialized() == bytes)
    }

    /// RFC 8285 §4.2 figure: one-byte form, length=3 words; ID=1 L=0 (1 byte),
    /// ID=2 L=1 (2 bytes), two padding bytes, ID=3 L=3 (4 bytes).
    @Test func oneByteExtensionFromRFC8285Section4_2() throws {
        let ext: [UInt8] = [0xBE, 0xDE, 0x00, 0x03,
                            0x10, 0xAA, 0x21, 0xBB,
                            0xBB, 0x00, 0x00, 0x33,
                            0xCC, 0xCC, 0xCC, 0xCC]
        let bytes = [0x90, 0x60, 0x00, 0x07, 0, 0, 0, 0, 0, 0, 0, 9] + ext + [0x42]
        let p = try RTPPacket(parsing: bytes)
        #expect(p.headerExtension == .oneByte([
            RTPExtensionElement(id: 1, data: [0xAA]),
            RTPExtensionElement(id: 2, data: [0xBB, 0xBB]),
            RTPExtensionElement(id: 3, data: [0xCC, 0xCC, 0xCC, 0xCC]),
        ]))
        #expect(p.headerExtension?.element(2) == [0xBB, 0xBB])
        #expect(p.payload == [0x42])
        // Serialization packs elements and pads at the end: 2+3+5 = 10 → 12 bytes (3 words).
        let out = p.serialized()
        #expect(Array(out[12..<28]) == [0xBE, 0xDE, 0x00, 0x03, 0x10, 0xAA, 0x21, 0xBB, 0xBB, 0x33, 0xCC, 0xCC, 0xCC, 0xCC, 0x00, 0x00])
        #expect(try RTPPacket(parsing: out) == p)
    }

    /// RFC 8285 §4.3 figure: two-byte form 0x1000, length=3; ID L=0, ID L=1 + 1 byte,
    /// one padding byte, ID L=4 + 4 bytes.
    @Test func twoByteExtensionFromRFC8285Section4_3() throws {
        let ext: [UInt8] = [0x10, 0x00, 0x00, 0x03,
                            0x05, 0x00, 0x06, 0x01,
                            0xDD, 0x00, 0x07, 0x04,
                            0x01, 0x02, 0x03, 0x04]
        let bytes = [0x90, 0x60, 0x00, 0x07, 0, 0, 0, 0, 0, 0, 0, 9] + ext
        let p = try RTPPacket(parsing: bytes)
        #expect(p.headerExtension == .twoByte(appBits: 0, [
            RTPExtensionElement(id: 5, data: []),
            RTPExtensionElement(id: 6, data: [0xDD]),
            RTPExtensionElement(id: 7, data: [1, 2, 3, 4]),
        ]))
        #expect(p.payload.isEmpty)
        #expect(try RTPPacket(parsing: p.serialized()) == p)
    }

    @Test func oneByteId15StopsParsing() throws {
        // RFC 8285 §4.2: ID 15 ends processing; the rest of the block is ignored.
        let bytes: [UInt8] = [0x90, 0x60, 0, 1, 0, 0, 0, 0, 0, 0, 0, 9,
                              0xBE, 0xDE, 0x00, 0x01, 0x10, 0x77, 0xF0, 0x55]
        let p = try RTPPacket(parsing: bytes)
        #expect(p.headerExtension == .oneByte([RTPExtensionElement(id: 1, data: [0x77])]))
    }

    @Test func otherProfileKeptRaw() throws {
        let bytes: [UInt8] = [0x90, 0x60, 0, 1, 0, 0, 0, 0, 0, 0, 0, 9,
                              0x12, 0x34, 0x00, 0x01, 0xA, 0xB, 0xC, 0xD, 0xFF]
        let p = try RTPPacket(parsing: bytes)
        #expect(p.headerExtension == .raw(profile: 0x1234, data: [0xA, 0xB, 0xC, 0xD]))
        #expect(p.payload == [0xFF])
        #expect(p.serialized() == bytes)
    }

    @Test func builtPacketRoundTrips() throws {
        let p = RTPPacket(marker: true, payloadType: 111, sequenceNumber: 65535, timestamp: 0xFFFF_FFFF,
                          ssrc: 1, csrcs: [2, 3, 4],
                          headerExtension: .twoByte(appBits: 5, [RTPExtensionElement(id: 200, data: Array(repeating: 7, count: 20))]),
                          payload: Array(0..<200), paddingLength: 4)
        let bytes = p.serialized()
        #expect(bytes[0] == 0xB3)            // V=2 P=1 X=1 CC=3
        #expect(bytes[1] == 0x80 | 111)
        #expect(Array(bytes[24..<26]) == [0x10, 0x05])
        #expect(bytes.last == 4)
        #expect(try RTPPacket(parsing: bytes) == p)
    }
}

@Suite struct SequenceUnwrapperTests {
    @Test func unwrapsAcrossWrapWithReordering() {
        var u = SequenceUnwrapper()
        #expect(u.unwrap(65534) == 65534)
        #expect(u.unwrap(65535) == 65535)
        #expect(u.unwrap(0) == 65536)
        #expect(u.unwrap(65533) == 65533)   // late packet from before the wrap
        #expect(u.unwrap(1) == 65537)
        #expect(u.unwrap(2) == 65538)
    }

    @Test func backwardsBeforeStartIsNegative() {
        var u = SequenceUnwrapper()
        #expect(u.unwrap(0) == 0)
        #expect(u.unwrap(65535) == -1)
        #expect(u.unwrap(1) == 1)
    }

    @Test func manyCycles() {
        var u = SequenceUnwrapper()
        var last: Int64 = 0
        for i in 0..<(3 * 65536 + 5) { last = u.unwrap(UInt16(truncatingIfNeeded: i)) }
        #expect(last == 3 * 65536 + 4)
    }
}
