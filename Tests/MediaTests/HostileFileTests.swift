import Bytes
import Foundation
import Testing
import TestSupport
@testable import Media

/// Each broken or unsupported file gives its specific error, never a crash.
@Suite struct HostileFileTests {
    static func write(_ bytes: [UInt8], _ path: String) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    /// A 12-byte IVF frame header: `size` (bytes) and `timestamp` (file ticks), little-endian.
    static func ivfFrameHeader(size: Int, timestamp: Int64) -> [UInt8] {
        var w = ByteWriter(capacity: IVFHeader.frameHeaderSize)
        w.u32le(UInt32(truncatingIfNeeded: size))
        w.u64le(UInt64(bitPattern: timestamp))
        return w.bytes
    }

    /// A valid VP8 IVF header (320x240, 1/90000, 1 frame).
    static let ivfHeader = IVFHeader(width: 320, height: 240, frameCount: 1).bytes

    @Test func brokenIVFFiles() async throws {
        let dir = TestServices.temporaryDirectory("hostile-ivf")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let p = "\(dir)/f.ivf"

        try Self.write(Array(Self.ivfHeader.prefix(20)), p)
        #expect(throws: IVFError.truncatedHeader(bytesFound: 20)) { try IVFReader(path: p) }
        try Self.write([], p)
        #expect(throws: IVFError.truncatedHeader(bytesFound: 0)) { try IVFReader(path: p) }

        try Self.write(Array("RIFF".utf8) + Self.ivfHeader.dropFirst(4), p)
        #expect(throws: IVFError.badSignature(found: Array("RIFF".utf8))) { try IVFReader(path: p) }

        // A frame header declaring 1000 bytes with 10 present.
        let frame = Self.ivfFrameHeader(size: 1000, timestamp: 0)
        try Self.write(Self.ivfHeader + frame + [UInt8](repeating: 0x10, count: 10), p)
        let r = try IVFReader(path: p)
        #expect(throws: IVFError.frameBeyondEnd(index: 0, offset: 32, size: 1000, bytesLeft: 10)) { try r.next() }
        #expect(throws: IVFError.frameBeyondEnd(index: 0, offset: 32, size: 1000, bytesLeft: 10)) { try r.countFrames() }

        // A whole first frame, then 5 bytes of the next frame header.
        let key: [UInt8] = [0x10, 0x02, 0x00, 0x9d, 0x01, 0x2a, 0x40, 0x01, 0xf0, 0x00]
        let good = Self.ivfFrameHeader(size: key.count, timestamp: 0)
        try Self.write(Self.ivfHeader + good + key + [1, 2, 3, 4, 5], p)
        let r2 = try IVFReader(path: p)
        #expect(try r2.next()?.width == 320)
        #expect(throws: IVFError.truncatedFrameHeader(index: 1, offset: 54, bytesLeft: 5)) { try r2.next() }

        // A key frame (P bit 0) without the start code.
        var bad = key
        bad[3] = 0
        try Self.write(Self.ivfHeader + good + bad, p)
        #expect(throws: IVFError.badFrame(index: 0, offset: 32, size: 10)) { try IVFReader(path: p).next() }

        // A real VP9 file from vpxenc: refused, naming the FourCC.
        let y4m = try await MediaFileTool.makeY4M(dir, size: "64x48", frames: 2)
        let vp9 = "\(dir)/vp9.ivf"
        try await MediaFileTool.check("vpxenc", ["--codec=vp9", "--ivf", "-q", "--cpu-used=8", "-o", vp9, y4m])
        #expect(throws: IVFError.unsupportedFourCC("VP90")) { try IVFReader(path: vp9) }
        #expect(IVFError.unsupportedFourCC("VP90").description.contains("VP90"))

        // The header's frame count disagreeing with the file is tolerated.
        var stale = IVFHeader(width: 320, height: 240, frameCount: 7).bytes
        try Self.write(stale + good + key + good + key, p)
        let r3 = try IVFReader(path: p)
        let counted = try r3.countFrames(), all = try IVFReader.readAll(path: p)
        #expect(r3.header.frameCount == 7 && counted == 2 && all.count == 2)
        stale[24] = 0
        try Self.write(stale, p)
        #expect(try IVFReader.readAll(path: p).isEmpty)
    }

    /// An IVF file of key frames with the given timestamps (file ticks) and time base.
    static func ivf(_ timestamps: [Int64], rate: UInt32 = 90_000, scale: UInt32 = 1) -> [UInt8] {
        let key: [UInt8] = [0x10, 0x02, 0x00, 0x9d, 0x01, 0x2a, 0x40, 0x01, 0xf0, 0x00]
        var b = IVFHeader(width: 320, height: 240, timeBaseRate: rate, timeBaseScale: scale, frameCount: UInt32(timestamps.count)).bytes
        for t in timestamps {
            b += Self.ivfFrameHeader(size: key.count, timestamp: t)
            b += key
        }
        return b
    }

    /// Issue 7 A1: hostile IVF timestamps are a typed error naming frame, offset and value,
    /// never an arithmetic overflow trap (before the fix: time base 1/1 with pts Int64.min then
    /// Int64.max trapped in IVFSource's `frame.timestamp - lastTimestamp`, and a looping file
    /// with huge timestamps trapped in `lastTimestamp + interval`).
    @Test func hostileIVFTimestampsAreTypedErrors() throws {
        let dir = TestServices.temporaryDirectory("hostile-ivf-ts")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let p = "\(dir)/t.ivf"
        let limit: Int64 = 1 << 53

        try Self.write(Self.ivf([.min, .max], rate: 1, scale: 1), p)
        #expect(throws: IVFError.badTimestamp(index: 0, offset: 32, value: .min)) { try IVFReader.readAll(path: p) }
        #expect(throws: IVFError.badTimestamp(index: 0, offset: 32, value: .min)) { try IVFSource(path: p).nextFrame() }
        try Self.write(Self.ivf([0, .max], rate: 1, scale: 1), p)
        let source = try IVFSource(path: p)
        #expect(try source.nextFrame()?.timestamp == 0)
        #expect(throws: IVFError.badTimestamp(index: 1, offset: 54, value: .max)) { try source.nextFrame() }

        // ±2^53 ticks at 1/90000 are accepted; one more is not; 2^40 s at 1/1 is 2^40 × 90000 ticks at 90 kHz.
        try Self.write(Self.ivf([-limit, limit]), p)
        #expect(try IVFReader.readAll(path: p).map(\.timestamp) == [-limit, limit])
        try Self.write(Self.ivf([0, limit + 1]), p)
        #expect(throws: IVFError.badTimestamp(index: 1, offset: 54, value: limit + 1)) { try IVFReader.readAll(path: p) }
        try Self.write(Self.ivf([1 << 40], rate: 1, scale: 1), p)
        #expect(throws: IVFError.badTimestamp(index: 0, offset: 32, value: 1 << 40)) { try IVFReader.readAll(path: p) }
        #expect(IVFError.badTimestamp(index: 1, offset: 54, value: 7).description == "IVF: frame 1 at byte 54 has timestamp 7, beyond ±2^53 ticks")

        // A looping file spanning 2^54 ticks: each loop adds 2^55, so after about 250 loops the
        // timestamps would pass Int64.max; the source ends with the typed error instead.
        try Self.write(Self.ivf([-limit, limit]), p)
        let looping = try IVFSource(path: p, loop: true)
        var timestamps: [Int64] = []
        var failure: Error?
        do {
            while timestamps.count < 2_000, let f = try looping.nextFrame() { timestamps.append(f.timestamp) }
        } catch { failure = error }
        #expect(timestamps.count > 400 && timestamps.count < 600)
        #expect(zip(timestamps, timestamps.dropFirst()).allSatisfy { $0 < $1 })
        guard case .badTimestamp(index: 0, offset: 32, value: -limit)? = failure as? IVFError else {
            Issue.record("looping ended with \(String(describing: failure)) after \(timestamps.count) frames")
            return
        }
    }

    @Test func unsupportedAndBrokenY4MFiles() async throws {
        let dir = TestServices.temporaryDirectory("hostile-y4m")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // Real 4:4:4 and 4:2:2 files from ffmpeg.
        for (pixfmt, name) in [("yuv444p", "444"), ("yuv422p", "422"), ("gray", "mono")] {
            let p = "\(dir)/\(pixfmt).y4m"
            try await MediaFileTool.check("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc=size=32x32:rate=10",
                                                 "-frames:v", "1", "-pix_fmt", pixfmt, "-strict", "-1", p])
            #expect(throws: Y4MError.unsupportedColorspace(name)) { try Y4MReader(path: p) }
        }
        let p = "\(dir)/h.y4m"
        func header(_ text: String) throws { try Self.write(Array(text.utf8), p) }
        try header("YUV4MPEG2 W16 H16 F25:1 It C420jpeg\n")
        #expect(throws: Y4MError.unsupportedInterlacing("t")) { try Y4MReader(path: p) }
        try header("YUV4MPEG2 W16 H16 F25:1 Im\n")
        #expect(throws: Y4MError.unsupportedInterlacing("m")) { try Y4MReader(path: p) }
        try header("YUV4MPEG2 W16 H16 C420p10\n")
        #expect(throws: Y4MError.unsupportedColorspace("420p10")) { try Y4MReader(path: p) }
        try header("YUV4MPEG2 H16 F25:1\n")
        #expect(throws: Y4MError.missingToken("W")) { try Y4MReader(path: p) }
        try header("YUV4MPEG2 W0 H16\n")
        #expect(throws: Y4MError.badDimensions(width: 0, height: 16)) { try Y4MReader(path: p) }
        try header("YUV4MPEG2 Wx H16\n")
        #expect(throws: Y4MError.badToken("Wx")) { try Y4MReader(path: p) }
        // Issue 7 A3: before the fix F1:9223372036854775807 was accepted and the first frame's
        // timestamp trapped computing 90 000 × denominator; rate terms are now bounded to 2^31.
        try Self.write(Array("YUV4MPEG2 W2 H2 F1:9223372036854775807\nFRAME\n".utf8) + [UInt8](repeating: 1, count: 6), p)
        #expect(throws: Y4MError.badToken("F1:9223372036854775807")) { try Y4MReader(path: p).next() }
        #expect(throws: Y4MError.badToken("F1:9223372036854775807")) { try Y4MSource(path: p).nextFrame() }
        try header("YUV4MPEG2 W2 H2 F2147483649:1\n")
        #expect(throws: Y4MError.badToken("F2147483649:1")) { try Y4MReader(path: p) }
        try Self.write(Array("YUV4MPEG2 W2 H2 F1:2147483648\nFRAME\n".utf8) + [UInt8](repeating: 1, count: 6)
                       + Array("FRAME\n".utf8) + [UInt8](repeating: 2, count: 6), p)
        let slow = try Y4MReader(path: p)
        #expect(try [slow.next()?.timestamp, slow.next()?.timestamp] == [0, 90_000 * 2_147_483_648])
        try header("YUV4MPEG W16 H16\n")
        #expect(throws: Y4MError.badSignature(found: "YUV4MPEG W")) { try Y4MReader(path: p) }
        try header("YUV4MPEG2 W16 H16" + String(repeating: " XPAD", count: 1000))
        #expect(throws: Y4MError.headerTooLong) { try Y4MReader(path: p) }

        // A truncated last frame is an error naming the frame; a missing FRAME marker too.
        let frame = [UInt8](repeating: 9, count: 6)
        try Self.write(Array("YUV4MPEG2 W2 H2 F25:1\n".utf8) + Array("FRAME\n".utf8) + frame + Array("FRAME\n".utf8) + [1, 2, 3], p)
        let r = try Y4MReader(path: p)
        #expect(try r.next()?.data == frame)
        #expect(throws: Y4MError.truncatedFrame(index: 1, offset: 34, bytesFound: 3, expected: 6)) { try r.next() }
        // The largest size with 10 bytes of frame: refused before reading (no 400 MB buffer).
        try Self.write(Array("YUV4MPEG2 W16384 H16384\nFRAME\n".utf8) + frame + frame, p)
        #expect(throws: Y4MError.truncatedFrame(index: 0, offset: 24, bytesFound: 12, expected: 16384 * 16384 * 3 / 2)) {
            try Y4MReader(path: p).next()
        }
        // Issue 7 B: a FRAME line longer than the first 256-byte read (before: badFrameHeader).
        let params = " " + String(repeating: "XCOMMENT=0123456789 ", count: 20)
        try Self.write(Array("YUV4MPEG2 W2 H2\n".utf8) + Array("FRAME\(params)\n".utf8) + frame
                       + Array("FRAME\n".utf8) + frame, p)
        let long = try Y4MReader(path: p)
        #expect(try long.next()?.data == frame)
        #expect(try long.next()?.data == frame)
        #expect(try long.next() == nil)
        // No newline within 64 KiB: its own error, not a scan of the whole file.
        try Self.write(Array("YUV4MPEG2 W2 H2\n".utf8) + Array("FRAME ".utf8) + [UInt8](repeating: 0x41, count: 70_000), p)
        #expect(throws: Y4MError.frameHeaderTooLong(index: 0, offset: 16, limit: 65_536)) { try Y4MReader(path: p).next() }
        try Self.write(Array("YUV4MPEG2 W2 H2\n".utf8) + Array("FRAMX\n".utf8) + frame, p)
        #expect(throws: Y4MError.badFrameHeader(index: 0, offset: 16)) { try Y4MReader(path: p).next() }
    }

    @Test func unsupportedAndBrokenWAVFiles() async throws {
        let dir = TestServices.temporaryDirectory("hostile-wav")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        func ffmpeg(_ name: String, _ args: [String]) async throws -> String {
            let p = "\(dir)/\(name)"
            try await MediaFileTool.check("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "sine=duration=0.05"] + args + [p])
            return p
        }
        let hz44 = try await ffmpeg("44k.wav", ["-ar", "44100", "-c:a", "pcm_s16le"])
        #expect(throws: WAVError.unsupportedSampleRate(44_100, offset: 12)) { try WAVReader(path: hz44) }
        let u8 = try await ffmpeg("u8.wav", ["-ar", "48000", "-c:a", "pcm_u8"])
        #expect(throws: WAVError.unsupportedBitDepth(8, offset: 12)) { try WAVReader(path: u8) }
        let float = try await ffmpeg("f32.wav", ["-ar", "48000", "-c:a", "pcm_f32le"])
        #expect(throws: WAVError.unsupportedFormatTag(3, offset: 12)) { try WAVReader(path: float) }
        let six = try await ffmpeg("6ch.wav", ["-ar", "48000", "-ac", "6", "-c:a", "pcm_s16le"])
        #expect(throws: WAVError.unsupportedChannelCount(6, offset: 12)) { try WAVReader(path: six) }
        let ogg = try await ffmpeg("not.ogg", ["-ar", "48000", "-c:a", "libopus", "-f", "ogg"])
        #expect(throws: WAVError.notRIFF(found: "OggS")) { try WAVReader(path: ogg) }

        let p = "\(dir)/h.wav"
        try Self.write(Array("RIFF\0\0\0\0AVI LIST".utf8), p)
        #expect(throws: WAVError.notWAVE(found: "AVI ")) { try WAVReader(path: p) }
        try Self.write(Array("RI".utf8), p)
        #expect(throws: WAVError.notRIFF(found: "RI")) { try WAVReader(path: p) }
        let h = WAVWriter.header(channels: 1, dataBytes: 0)
        try Self.write(Array(h.prefix(12)) + Array("data".utf8) + [4, 0, 0, 0, 1, 0, 2, 0], p)
        #expect(throws: WAVError.missingFormatChunk) { try WAVReader(path: p) }
        try Self.write(Array(h.prefix(36)), p)
        #expect(throws: WAVError.missingDataChunk) { try WAVReader(path: p) }
        try Self.write(Array(h.prefix(12)) + Array("junk".utf8) + [0xff, 0, 0, 0, 1], p)
        #expect(throws: WAVError.chunkBeyondEnd(id: "junk", offset: 12, size: 255, bytesLeft: 1)) { try WAVReader(path: p) }
        // A fmt chunk declaring 4 bytes: named with its offset.
        try Self.write(Array(h.prefix(12)) + Array("fmt ".utf8) + [4, 0, 0, 0, 1, 0, 1, 0] + Array(h.suffix(8)), p)
        #expect(throws: WAVError.shortFormatChunk(offset: 12, size: 4)) { try WAVReader(path: p) }
        // Issue 7 A5: the fmt parser itself bounds-checks its body (before, 15 bytes indexed
        // byte 14 and 15 unchecked: a trap if the file shrank between fstat and pread).
        #expect(throws: WAVError.shortFormatChunk(offset: 36, size: 15)) {
            try WAVFormat(parsing: Array(h[20..<35]), offset: 36)
        }
        let fmt = try WAVFormat(parsing: Array(h[20..<36]), offset: 12)
        #expect(fmt.tag == 1 && fmt.channels == 1 && fmt.sampleRate == 48_000 && fmt.bitsPerSample == 16)
        #expect(WAVError.unsupportedSampleRate(44_100, offset: 12).description == "WAV: fmt chunk at byte 12: sample rate 44100 Hz not supported, only 48000")
    }

    /// 300 seeded mutations (byte flips, truncations) of valid IVF, Y4M and WAV files:
    /// every read ends in frames or a typed error, never a crash — through the readers and
    /// through the looping IVFSource and Y4MSource.
    @Test func mutatedFilesNeverCrashTheReaders() throws {
        let dir = TestServices.temporaryDirectory("hostile-fuzz")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let key: [UInt8] = [0x10, 0x02, 0x00, 0x9d, 0x01, 0x2a, 0x40, 0x01, 0xf0, 0x00, 1, 2]
        let frameHeader = Self.ivfFrameHeader(size: key.count, timestamp: 3000)
        let ivf = Self.ivfHeader + frameHeader + key + frameHeader + key
        let y4m = Array("YUV4MPEG2 W4 H2 F30:1 Ip C420\nFRAME\n".utf8) + [UInt8](repeating: 5, count: 8)
            + Array("FRAME\n".utf8) + [UInt8](repeating: 6, count: 8)
        let wav = WAVWriter.header(channels: 2, dataBytes: 16) + [UInt8](repeating: 3, count: 16)
        var g = SplitMix64(state: 7)
        var outcomes = [String: Int]()
        for i in 0..<300 {
            var b = [ivf, y4m, wav][i % 3]
            for _ in 0..<Int.random(in: 1...4, using: &g) {
                b[Int.random(in: 0..<b.count, using: &g)] = UInt8.random(in: 0...255, using: &g)
            }
            if Bool.random(using: &g) { b.removeLast(Int.random(in: 0..<b.count, using: &g)) }
            let p = "\(dir)/m\(i)"
            try Self.write(b, p)
            let outcome: String
            switch i % 3 {
            case 0:
                outcome = (try? IVFReader.readAll(path: p)).map { "ivf \($0.count) frames" } ?? "ivf error"
                // The same file through the looping source (timestamps shifted per loop).
                let viaSource = (try? { () throws -> Int in
                    let s = try IVFSource(path: p, loop: true)
                    var n = 0
                    while n < 7, try s.nextFrame() != nil { n += 1 }
                    return n
                }()).map { "ivf source \($0) frames" } ?? "ivf source error"
                outcomes[viaSource, default: 0] += 1
            case 1:
                outcome = (try? { () throws -> Int in
                    let r = try Y4MReader(path: p, loop: true)
                    var n = 0
                    while n < 5, try r.next() != nil { n += 1 }
                    return n
                }()).map { "y4m \($0) frames" } ?? "y4m error"
                let viaSource = (try? { () throws -> Int in
                    let s = try Y4MSource(path: p, loop: true)
                    var n = 0
                    while n < 5, try s.nextFrame() != nil { n += 1 }
                    return n
                }()).map { "y4m source \($0) frames" } ?? "y4m source error"
                outcomes[viaSource, default: 0] += 1
            default:
                outcome = (try? { () throws -> Int in
                    let r = try WAVReader(path: p)
                    var n = 0
                    while let f = try r.read(samplesPerChannel: 3) { n += f.samples.count }
                    return n
                }()).map { "wav \($0) samples" } ?? "wav error"
            }
            outcomes[outcome, default: 0] += 1
        }
        #expect(outcomes["ivf error", default: 0] > 0 && outcomes["y4m error", default: 0] > 0 && outcomes["wav error", default: 0] > 0)
        #expect(outcomes.keys.contains { $0.hasPrefix("ivf ") && $0.hasSuffix("frames") })
        #expect(outcomes.keys.contains { $0.hasPrefix("ivf source") && $0.hasSuffix("frames") })
        #expect(outcomes.keys.contains { $0.hasPrefix("y4m source") && $0.hasSuffix("frames") })
        #expect(outcomes["ivf source 7 frames", default: 0] > 0)
        print("mutations: \(outcomes.sorted { $0.key < $1.key })")
    }
}
