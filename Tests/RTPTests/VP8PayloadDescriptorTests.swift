import Testing
import TestSupport
import Bytes
@testable import RTP

/// The VP8 payload descriptor (RFC 7741 §4.2) and payload header (RFC 6386 §9.1),
/// from hand-built bytes following the RFC's bit layouts, checked field by field.
@Suite struct VP8PayloadDescriptorTests {
    /// |X=0|R|N=0|S=1|R|PID=0| then VP8 bytes: the one-byte form.
    @Test func minimalDescriptor() throws {
        let (d, n) = try VP8PayloadDescriptor.parse([0x10, 0xAB, 0xCD])
        #expect(n == 1)
        #expect(d.startOfPartition && d.partitionIndex == 0 && d.isFrameStart)
        #expect(!d.nonReference)
        #expect(d.pictureID == nil && d.tl0PicIdx == nil && d.tid == nil && d.keyIdx == nil)
        #expect(d.serialized() == [0x10])
    }

    /// X=1, S=1; I=1; M=1 with PictureID 0x0123 = 291: the form Chromium and the packetizer send.
    @Test func fifteenBitPictureID() throws {
        let (d, n) = try VP8PayloadDescriptor.parse([0x90, 0x80, 0x81, 0x23, 0x9D])
        #expect(n == 4)
        #expect(d.isFrameStart)
        #expect(d.pictureID == .fifteenBit(291))
        #expect(d.pictureID?.value == 291)
        #expect(d.serialized() == [0x90, 0x80, 0x81, 0x23])
    }

    /// Every field: X=1 N=1 S=1 PID=5; I L T K; M=0 PictureID 0x45 = 69 (7-bit);
    /// TL0PICIDX 200; TID=2, Y=1, KEYIDX=0b10011 = 19 → byte 10 1 10011 = 0xB3.
    @Test func everyFieldWithSevenBitPictureID() throws {
        let bytes: [UInt8] = [0xB5, 0xF0, 0x45, 0xC8, 0xB3, 0x00]
        let (d, n) = try VP8PayloadDescriptor.parse(bytes)
        #expect(n == 5)
        #expect(d.nonReference)
        #expect(d.startOfPartition)
        #expect(d.partitionIndex == 5)
        #expect(!d.isFrameStart)
        #expect(d.pictureID == .sevenBit(69))
        #expect(d.pictureID?.isFifteenBit == false)
        #expect(d.tl0PicIdx == 200)
        #expect(d.tid == 2)
        #expect(d.layerSync)
        #expect(d.keyIdx == 19)
        #expect(d.length == 5)
        #expect(d.serialized() == Array(bytes.prefix(5)))
    }

    /// X=1, S=0, PID=7; I L; M=1 PictureID 0x7FFF = 32767; TL0PICIDX 7. No T/K byte.
    @Test func largestPictureIDWithTL0PICIDX() throws {
        let (d, n) = try VP8PayloadDescriptor.parse([0x87, 0xC0, 0xFF, 0xFF, 0x07, 0x01])
        #expect(n == 5)
        #expect(!d.startOfPartition && d.partitionIndex == 7)
        #expect(d.pictureID == .fifteenBit(32767))
        #expect(d.tl0PicIdx == 7)
        #expect(d.tid == nil && d.keyIdx == nil && !d.layerSync)
    }

    /// K=1, T=0: the T/K byte is present but TID and Y are not meaningful and are ignored.
    @Test func keyIndexWithoutTemporalLayer() throws {
        let (d, n) = try VP8PayloadDescriptor.parse([0x80, 0x10, 0xDF, 0x01])
        #expect(n == 3)
        #expect(d.keyIdx == 31)
        #expect(d.tid == nil && !d.layerSync)
        #expect(d.serialized() == [0x80, 0x10, 0x1F])
    }

    /// T=1, K=0: TID=1, Y=0; KEYIDX bits ignored.
    @Test func temporalLayerWithoutKeyIndex() throws {
        let (d, n) = try VP8PayloadDescriptor.parse([0x80, 0x20, 0x4F, 0x01])
        #expect(n == 3)
        #expect(d.tid == 1 && !d.layerSync && d.keyIdx == nil)
        #expect(d.serialized() == [0x80, 0x20, 0x40])
    }

    /// An X byte with I, L, T, K all clear is accepted (2-byte descriptor).
    @Test func emptyExtensionByte() throws {
        let (d, n) = try VP8PayloadDescriptor.parse([0x90, 0x00, 0x42])
        #expect(n == 2)
        #expect(d == VP8PayloadDescriptor(startOfPartition: true))
    }

    /// Truncated extension fields name the byte offset and the field; an empty payload
    /// after the descriptor names the offset where the VP8 bytes should start.
    @Test func malformedDescriptors() {
        func offsetOfTruncation(_ b: [UInt8]) -> Int? {
            do {
                _ = try VP8PayloadDescriptor.parse(b)
                return nil
            } catch {
                if case let .truncated(.truncated(offset, _, _, _)) = error { return offset }
                return nil
            }
        }
        #expect(offsetOfTruncation([]) == 0)
        #expect(offsetOfTruncation([0x80]) == 1)                  // X byte missing
        #expect(offsetOfTruncation([0x80, 0x80]) == 2)            // PictureID missing
        #expect(offsetOfTruncation([0x80, 0x80, 0x80]) == 3)      // second PictureID byte (M=1)
        #expect(offsetOfTruncation([0x80, 0xC0, 0x05]) == 3)      // TL0PICIDX after 7-bit PictureID
        #expect(offsetOfTruncation([0x80, 0x20]) == 2)            // TID/Y/KEYIDX
        #expect(offsetOfTruncation([0x80, 0xF0, 0x81, 0x02, 0x03]) == 5)
        #expect(throws: VP8PayloadError.emptyPayload(offset: 1)) { try VP8PayloadDescriptor.parse([0x10]) }
        #expect(throws: VP8PayloadError.emptyPayload(offset: 4)) { try VP8PayloadDescriptor.parse([0x90, 0x80, 0x81, 0x23]) }
        #expect(throws: VP8PayloadError.emptyPayload(offset: 6)) {
            try VP8PayloadDescriptor.parse([0x80, 0xF0, 0x81, 0x02, 0x03, 0x04])
        }
        #expect(VP8PayloadError.emptyPayload(offset: 4).description.contains("byte 4"))
    }

    /// Random descriptors: serialize → parse gives the same value and the stated length.
    @Test func randomRoundTrips() throws {
        var g = SplitMix64(state: 7741)
        for _ in 0..<5000 {
            let pid: VP8PictureID? = switch Int.random(in: 0...2, using: &g) {
            case 0: nil
            case 1: .sevenBit(.random(in: 0...127, using: &g))
            default: .fifteenBit(.random(in: 0...32767, using: &g))
            }
            let tid: UInt8? = Bool.random(using: &g) ? .random(in: 0...3, using: &g) : nil
            let d = VP8PayloadDescriptor(nonReference: .random(using: &g), startOfPartition: .random(using: &g),
                                         partitionIndex: .random(in: 0...7, using: &g), pictureID: pid,
                                         tl0PicIdx: Bool.random(using: &g) ? .random(in: 0...255, using: &g) : nil,
                                         tid: tid, layerSync: .random(using: &g),
                                         keyIdx: Bool.random(using: &g) ? .random(in: 0...31, using: &g) : nil)
            let bytes = d.serialized()
            #expect(bytes.count == d.length)
            let (back, n) = try VP8PayloadDescriptor.parse(bytes + [0x00])
            #expect(back == d)
            #expect(n == bytes.count)
        }
    }

    /// Random bytes never trap: each parse either succeeds with a length inside the
    /// payload or throws a typed error.
    @Test func randomBytesNeverTrap() {
        var g = SplitMix64(state: 99)
        var parsed = 0
        for _ in 0..<20_000 {
            let b = (0..<Int.random(in: 0...8, using: &g)).map { _ in UInt8.random(in: 0...255, using: &g) }
            if let (_, n) = try? VP8PayloadDescriptor.parse(b) {
                parsed += 1
                #expect(n >= 1 && n < b.count)
            }
            _ = try? VP8FrameHeader(parsing: b)
        }
        #expect(parsed > 5000)
    }

    /// Key frame tag (P=0, version 0, show_frame=1, first partition 16 bytes), start code,
    /// width 640 (scale bits 01 set: 0x4280 → low 14 bits 0x280), height 480.
    @Test func keyFrameHeader() throws {
        let h = try VP8FrameHeader(parsing: [0x10, 0x02, 0x00, 0x9D, 0x01, 0x2A, 0x80, 0x42, 0xE0, 0x01, 0x00])
        #expect(h.isKeyframe)
        #expect(h.version == 0)
        #expect(h.showFrame)
        #expect(h.firstPartitionSize == 16)
        #expect(h.width == 640)
        #expect(h.height == 480)
    }

    /// Inter frame: P=1; size0 = 1 (bits 5–7 of byte 0), size1 = 1, size2 = 1 → 1 + 8 + 2048.
    @Test func interFrameHeader() throws {
        let h = try VP8FrameHeader(parsing: [0x31, 0x01, 0x01])
        #expect(!h.isKeyframe)
        #expect(h.showFrame)
        #expect(h.firstPartitionSize == 2057)
        #expect(h.width == nil && h.height == nil)
        // The one-bit check the decoder uses before any full parse.
        #expect(!VP8FrameHeader.isKeyframe([0x31]) && VP8FrameHeader.isKeyframe([0x10]) && !VP8FrameHeader.isKeyframe([]))
    }

    @Test func malformedFrameHeaders() {
        #expect(throws: VP8PayloadError.badStartCode(offset: 3, value: 0x9D012B)) {
            try VP8FrameHeader(parsing: [0x10, 0x02, 0x00, 0x9D, 0x01, 0x2B, 0x80, 0x02, 0xE0, 0x01])
        }
        #expect(throws: VP8PayloadError.self) { try VP8FrameHeader(parsing: [0x10, 0x02]) }
        #expect(throws: VP8PayloadError.self) { try VP8FrameHeader(parsing: [0x10, 0x02, 0x00, 0x9D, 0x01, 0x2A, 0x80]) }
    }

    /// Chromium's VP8 packets from a real call: every descriptor parses to the form
    /// Chromium sends (X=1, I=1, M=1, 4 bytes), PictureIDs count up by one per frame,
    /// and the key frame's header gives the fake camera's 640×480.
    @Test func chromiumDescriptors() throws {
        let capture = try CaptureFile(named: "chromium-rtp.txt")
        let vp8 = try #require(capture.encodingOfPayloadType.first { $0.value.hasPrefix("VP8/") }?.key)
        let packets = try capture.packets.map { try RTPPacket(parsing: $0) }.filter { $0.payloadType == vp8 }
        #expect(packets.count == 9)
        var starts: [UInt16] = []
        for p in packets {
            let (d, n) = try VP8PayloadDescriptor.parse(p.payload)
            #expect(n == 4)
            #expect(d.partitionIndex == 0)
            let pid = try #require(d.pictureID)
            #expect(pid.isFifteenBit)
            #expect(d.serialized() == Array(p.payload.prefix(4)))
            if d.isFrameStart {
                starts.append(pid.value)
                let h = try VP8FrameHeader(parsing: Array(p.payload[n...]))
                if h.isKeyframe {
                    #expect(h.width == 640)
                    #expect(h.height == 480)
                }
            }
        }
        #expect(starts.count == 5)
        #expect(zip(starts, starts.dropFirst()).allSatisfy { $1 == ($0 + 1) & 0x7FFF })
    }
}
