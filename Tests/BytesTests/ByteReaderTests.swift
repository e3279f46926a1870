import Testing
import Bytes

@Suite struct ByteReaderTests {
    /// A 12-byte RTP header (RFC 3550 §5.1): V=2, PT=111, seq=0x1234, ts=0xDEADBEEF, ssrc=0x01020304.
    let header: [UInt8] = [0x80, 0x6F, 0x12, 0x34, 0xDE, 0xAD, 0xBE, 0xEF, 0x01, 0x02, 0x03, 0x04]

    @Test func readsAnRTPFixedHeaderInNetworkOrder() throws {
        var r = ByteReader(header)
        let b0 = try r.u8()
        #expect(b0 >> 6 == 2)
        #expect(try r.u8() & 0x7F == 111)
        #expect(try r.u16() == 0x1234)
        #expect(try r.u32() == 0xDEAD_BEEF)
        #expect(try r.u32("ssrc") == 0x0102_0304)
        #expect(r.remaining == 0)
    }

    @Test func wideAndOddWidths() throws {
        var r = ByteReader([0x00, 0x00, 0x01, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0xAA, 0xBB])
        #expect(try r.u24() == 1)
        #expect(try r.u64() == 0x0102_0304_0506_0708)
        #expect(try r.take(2) == [0xAA, 0xBB])
    }

    /// Little-endian reads (the IVF header of a 640x480 VP8 file, then a frame timestamp).
    @Test func littleEndianReads() throws {
        var r = ByteReader([0x80, 0x02, 0xE0, 0x01, 0x90, 0x5F, 0x01, 0x00, 0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01, 0xFF])
        #expect(try r.u16le() == 640)
        #expect(try r.u16le() == 480)
        #expect(try r.u32le() == 90_000)
        #expect(try r.u64le() == 0x0102_0304_0506_0708)
        #expect(throws: ByteReaderError.truncated(offset: 16, wanted: 2, available: 1, field: "gain")) { try r.u16le("gain") }
        #expect(throws: ByteReaderError.truncated(offset: 16, wanted: 4, available: 1, field: "u32le")) { try r.u32le() }
        #expect(throws: ByteReaderError.truncated(offset: 16, wanted: 8, available: 1, field: "u64le")) { try r.u64le() }
    }

    @Test func truncatedReadNamesOffsetAndField() {
        var r = ByteReader(header, offset: 10)
        #expect(throws: ByteReaderError.truncated(offset: 10, wanted: 4, available: 2, field: "ssrc")) {
            try r.u32("ssrc")
        }
        #expect(r.offset == 10)
        #expect(throws: ByteReaderError.self) { try r.take(-1) }
    }

    @Test func writerIsTheInverse() throws {
        var w = ByteWriter()
        w.u8(0x80); w.u8(0x6F); w.u16(0x1234); w.u32(0xDEAD_BEEF); w.u32(0x0102_0304)
        #expect(w.bytes == header)
        w.u24(0xABCDEF); w.u64(42)
        var r = ByteReader(w.bytes, offset: 12)
        #expect(try r.u24() == 0xABCDEF)
        #expect(try r.u64() == 42)
    }
}
