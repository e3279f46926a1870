import Foundation
import Testing
import TestSupport
@testable import Media
#if canImport(Glibc)
import Glibc
#endif

/// Real tools (installed by scripts/bootstrap) and the test inputs they make.
enum MediaFileTool {
    /// The full path of `name` on PATH (falls back to /usr/bin).
    static func path(_ name: String) -> String {
        for dir in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin").split(separator: ":") {
            let p = "\(dir)/\(name)"
            if FileManager.default.isExecutableFile(atPath: p) { return p }
        }
        return "/usr/bin/\(name)"
    }

    /// Runs `name` with `args` off the cooperative pool.
    static func run(_ name: String, _ args: [String]) async throws -> TestServices.Run {
        try await TestServices.run(path(name), args, timeout: 60)
    }

    /// Runs `name` and requires exit status 0.
    @discardableResult
    static func check(_ name: String, _ args: [String]) async throws -> TestServices.Run {
        let r = try await run(name, args)
        try #require(r.status == 0, "\(name) \(args.joined(separator: " ")) exited \(r.status): \(r.stderr.suffix(2000))")
        return r
    }

    /// A test-pattern Y4M from ffmpeg: `frames` frames of `size` at `rate` fps, I420.
    static func makeY4M(_ dir: String, size: String = "320x240", rate: Int = 30, frames: Int = 60) async throws -> String {
        let out = "\(dir)/pattern.y4m"
        try await check("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc=size=\(size):rate=\(rate)",
                                   "-frames:v", "\(frames)", "-pix_fmt", "yuv420p", out])
        return out
    }

    /// Real VP8 in IVF: the ffmpeg test pattern (60 frames 320x240 at 30 fps) through vpxenc.
    static func makeVP8(_ dir: String) async throws -> String {
        let y4m = try await makeY4M(dir)
        let out = "\(dir)/vpxenc.ivf"
        try await check("vpxenc", ["--codec=vp8", "--ivf", "-q", "--cpu-used=8", "-o", out, y4m])
        return out
    }

    /// The bytes of the file at `path` (empty when it cannot be read).
    static func bytes(_ path: String) -> [UInt8] {
        (try? Data(contentsOf: URL(fileURLWithPath: path))).map { [UInt8]($0) } ?? []
    }

    /// `vpxdec --md5 --i420` of `path`: the MD5 of all decoded frames.
    static func vpxdecMD5(_ path: String) async throws -> String {
        let out = try await check("vpxdec", ["--md5", "--i420", path]).stdout  // "<md5>  -"
        return out.split(separator: " ").first.map(String.init) ?? ""
    }
}

/// Little-endian field readers for checking headers byte by byte.
extension Array where Element == UInt8 {
    func fileLE16(_ at: Int) -> Int { Int(self[at]) | Int(self[at + 1]) << 8 }
    func fileLE32(_ at: Int) -> Int { fileLE16(at) | fileLE16(at + 2) << 16 }
    func fileLE64(_ at: Int) -> Int64 { Int64(fileLE32(at)) | Int64(fileLE32(at + 4)) << 32 }
}

@Suite struct IVFTests {
    @Test func vpxencFileReadsAndRoundTripsThroughTheWriterBitExact() async throws {
        let dir = TestServices.temporaryDirectory("ivf")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let input = try await MediaFileTool.makeVP8(dir)

        // The reader: vpxenc's header (time base 1/30) and 60 frames, 90 kHz timestamps.
        let reader = try IVFReader(path: input)
        #expect(reader.header.fourCC == "VP80")
        #expect(reader.header.width == 320 && reader.header.height == 240)
        #expect(reader.header.timeBaseRate == 30 && reader.header.timeBaseScale == 1)
        #expect(reader.header.frameCount == 60)
        let frames = try IVFReader.readAll(path: input)
        try #require(frames.count == 60)
        #expect(try reader.countFrames() == 60)
        #expect(frames[0].isKeyframe && frames[0].width == 320 && frames[0].height == 240)
        #expect(frames.dropFirst().allSatisfy { !$0.isKeyframe && $0.width == nil })
        #expect(frames.map(\.timestamp) == (0..<60).map { Int64($0) * 3000 })

        // The writer, given two inter frames first (skipped: no key frame yet), then all.
        let output = "\(dir)/writer.ivf"
        let writer = try IVFWriter(path: output)
        try writer.write(frames[1])
        try writer.write(frames[2])
        for f in frames { try writer.write(f) }
        #expect(writer.framesSkippedBeforeKeyframe == 2)
        #expect(writer.framesWritten == 60)
        try writer.close()
        #expect(throws: IVFError.closed(path: output)) { try writer.write(frames[0]) }

        // Header field by field (IVFHeader.swift documents the order).
        let b = MediaFileTool.bytes(output)
        try #require(b.count == 32 + frames.reduce(0) { $0 + 12 + $1.data.count })
        #expect(Array(b[0..<4]) == Array("DKIF".utf8))
        #expect(b.fileLE16(4) == 0)             // version
        #expect(b.fileLE16(6) == 32)            // header size
        #expect(Array(b[8..<12]) == Array("VP80".utf8))
        #expect(b.fileLE16(12) == 320)          // width, from the first key frame
        #expect(b.fileLE16(14) == 240)          // height
        #expect(b.fileLE32(16) == 90_000)       // time base rate (denominator)
        #expect(b.fileLE32(20) == 1)            // time base scale (numerator)
        #expect(b.fileLE32(24) == 60)           // frame count
        #expect(b.fileLE32(28) == 0)            // unused
        // First two frame headers: size, then 64-bit timestamp in 90 kHz ticks.
        #expect(b.fileLE32(32) == frames[0].data.count && b.fileLE64(36) == 0)
        let second = 32 + 12 + frames[0].data.count
        #expect(b.fileLE32(second) == frames[1].data.count && b.fileLE64(second + 4) == 3000)
        #expect(Array(b[44..<(44 + frames[0].data.count)]) == frames[0].data)

        // Our reader gets the same frames back; vpxdec decodes both to the same pictures.
        #expect(try IVFReader.readAll(path: output) == frames)
        let md5In = try await MediaFileTool.vpxdecMD5(input), md5Out = try await MediaFileTool.vpxdecMD5(output)
        #expect(md5In.count == 32 && md5In == md5Out)
        let probe = try await MediaFileTool.check("ffprobe", ["-v", "error", "-count_frames", "-select_streams", "v:0",
            "-show_entries", "stream=codec_name,width,height,nb_read_frames", "-of", "csv=p=0", output])
        #expect(probe.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "vp8,320,240,60")
        print("IVF round trip: 60 frames, vpxdec md5 \(md5Out) for both, ffprobe \(probe.stdout.trimmingCharacters(in: .whitespacesAndNewlines))")
    }

    @Test func headerFrameCountIsRewrittenWhileWritingAndOnDeinit() throws {
        let dir = TestServices.temporaryDirectory("ivf-count")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let key: [UInt8] = [0x10, 0x02, 0x00, 0x9d, 0x01, 0x2a, 0x40, 0x01, 0xf0, 0x00] + [UInt8](repeating: 7, count: 20)
        let inter: [UInt8] = [0x31, 0x00, 0x00, 1, 2, 3]
        let path = "\(dir)/count.ivf"
        do {
            // Interval 0: every write rewrites the count, as the once-a-second check would.
            let writer = try IVFWriter(path: path, headerRewriteInterval: 0)
            try writer.write(EncodedVideoFrame(data: key, isKeyframe: true, timestamp: 0))
            try writer.write(EncodedVideoFrame(data: inter, isKeyframe: false, timestamp: 3000))
            #expect(MediaFileTool.bytes(path).fileLE32(24) == 2)  // on disk before close
            let lazy = try IVFWriter(path: "\(dir)/lazy.ivf", headerRewriteInterval: 3600)
            try lazy.write(EncodedVideoFrame(data: key, isKeyframe: true, timestamp: 0))
            try lazy.write(EncodedVideoFrame(data: inter, isKeyframe: false, timestamp: 3000))
            try lazy.write(EncodedVideoFrame(data: inter, isKeyframe: false, timestamp: 6000))
            #expect(MediaFileTool.bytes("\(dir)/lazy.ivf").fileLE32(24) == 0)  // not yet: interval not reached
            #expect(MediaFileTool.bytes("\(dir)/lazy.ivf").fileLE16(12) == 320)  // size written with the key frame
        }
        // Both writers are gone: deinit wrote the counts.
        #expect(MediaFileTool.bytes("\(dir)/lazy.ivf").fileLE32(24) == 3)
        let frames = try IVFReader.readAll(path: "\(dir)/lazy.ivf")
        #expect(frames.map(\.data) == [key, inter, inter])
        #expect(frames.map(\.isKeyframe) == [true, false, false])
        #expect(frames[0].width == 320 && frames[0].height == 240)
    }

    /// Issue 7 B: an idle writer's header is refreshed by its timer. Before the fix the count
    /// was only rewritten by a write finding the last rewrite a second old, so three quick
    /// writes and no more left 0 on disk until close.
    @Test func idleWriterHeaderCountIsRefreshedWithinASecond() async throws {
        let dir = TestServices.temporaryDirectory("ivf-idle")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let key: [UInt8] = [0x10, 0x02, 0x00, 0x9d, 0x01, 0x2a, 0x40, 0x01, 0xf0, 0x00, 9, 9]
        let inter: [UInt8] = [0x31, 0x00, 0x00, 1, 2, 3]
        let path = "\(dir)/idle.ivf"
        let writer = try IVFWriter(path: path)
        try writer.write(EncodedVideoFrame(data: key, isKeyframe: true, timestamp: 0))
        try writer.write(EncodedVideoFrame(data: inter, isKeyframe: false, timestamp: 3000))
        try writer.write(EncodedVideoFrame(data: inter, isKeyframe: false, timestamp: 6000))
        #expect(MediaFileTool.bytes(path).fileLE32(24) == 0)
        try await Task.sleep(for: .milliseconds(1_200))
        #expect(MediaFileTool.bytes(path).fileLE32(24) == 3)
        #expect(writer.framesWritten == 3)
        try writer.close()
    }

    /// Issue 7 C: a real file cut in the middle of its last frame: vpxdec exits 0 after
    /// decoding the whole frames (N − 1) and warns; IVFReader returns those N − 1 frames,
    /// byte-identical, and throws frameBeyondEnd naming the last one.
    @Test func fileCutInsideItsLastFrame() async throws {
        let dir = TestServices.temporaryDirectory("ivf-cut")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let y4m = try await MediaFileTool.makeY4M(dir, size: "160x120", frames: 10)
        let whole = "\(dir)/whole.ivf", cut = "\(dir)/cut.ivf"
        try await MediaFileTool.check("vpxenc", ["--codec=vp8", "--ivf", "-q", "--cpu-used=8", "-o", whole, y4m])
        let frames = try IVFReader.readAll(path: whole)
        #expect(frames.count == 10)
        let bytes = MediaFileTool.bytes(whole)
        let lastSize = try #require(frames.last?.data.count)
        let lastOffset = bytes.count - lastSize - 12
        try Data(bytes.prefix(lastOffset + 12 + lastSize / 2)).write(to: URL(fileURLWithPath: cut))

        let run = try await MediaFileTool.check("vpxdec", ["--summary", "--i420", "-o", "/dev/null", cut])
        #expect(run.stderr.contains("9 decoded frames"), "vpxdec: \(run.stderr)")
        let reader = try IVFReader(path: cut)
        var read: [[UInt8]] = []
        #expect(throws: IVFError.frameBeyondEnd(index: 9, offset: Int64(lastOffset), size: Int64(lastSize), bytesLeft: Int64(lastSize / 2))) {
            while let f = try reader.next() { read.append(f.data) }
        }
        #expect(read == frames.prefix(9).map(\.data))
        print("IVF cut inside frame 9 at byte \(lastOffset + 12 + lastSize / 2): vpxdec \(run.stderr.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: "\n").last ?? "")")
    }

    /// Runs `media-probe ivf-copy`, waits for several "wrote N" lines over more than a second,
    /// SIGKILLs it: the file it leaves decodes to at least N frames.
    @Test(.timeLimit(.minutes(1)))
    func sigkilledWriterLeavesAFileVpxdecDecodesToItsLastFrame() async throws {
        signal(SIGPIPE, SIG_IGN)
        let probe = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("media-probe").path
        try #require(FileManager.default.isExecutableFile(atPath: probe),
                     "\(probe) not built: run swift build --build-tests (media-probe is built next to the test bundle)")
        let dir = TestServices.temporaryDirectory("ivf-kill")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let input = try await MediaFileTool.makeVP8(dir)
        let output = "\(dir)/killed.ivf"

        let (reported, seconds, transcript) = try await TestServices.offload { () throws -> (Int, Double, String) in
            let process = Process()
            process.executableURL = URL(fileURLWithPath: probe)
            process.arguments = ["ivf-copy", input, output, "15"]
            let out = Pipe()
            process.standardOutput = out
            process.standardError = FileHandle.nullDevice
            process.standardInput = FileHandle.nullDevice
            try process.run()
            // Watchdog: a probe that hangs without output must not block this thread forever.
            DispatchQueue.global().asyncAfter(deadline: .now() + 20) {
                if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            }
            let start = Date()
            var text = "", last = 0
            // More than 1.5 s (so the once-a-second header rewrite happened) and past the
            // 60 frames of the input (so the copy loops).
            while process.isRunning, Date().timeIntervalSince(start) < 20, !(last >= 70 && Date().timeIntervalSince(start) > 1.5) {
                let chunk = out.fileHandleForReading.availableData
                if chunk.isEmpty { break }
                text += String(decoding: chunk, as: UTF8.self)
                let lines = text.split(separator: "\n")
                if let n = lines.reversed().lazy.compactMap({ Int($0.dropFirst("wrote ".count)) }).first { last = n }
            }
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            return (last, Date().timeIntervalSince(start), String(text.suffix(200)))
        }
        try #require(reported >= 70, "media-probe reported \(reported) frames: \(transcript)")

        let decoded = "\(dir)/decoded.yuv"
        let vpxdec = try await MediaFileTool.run("vpxdec", ["--i420", "-o", decoded, output])
        #expect(vpxdec.status == 0, "vpxdec: \(vpxdec.stderr)")
        let frameBytes = 320 * 240 * 3 / 2
        let size = (try? FileManager.default.attributesOfItem(atPath: decoded)[.size] as? Int) ?? 0
        #expect(size % frameBytes == 0)
        #expect(size / frameBytes >= reported)

        let reader = try IVFReader(path: output)
        let actual = try reader.countFrames()
        let frames = try IVFReader.readAll(path: output)
        #expect(frames.count == actual && actual >= reported)
        #expect(size / frameBytes == actual)
        // The header was rewritten while running (it starts at 0) and never claims more than is there.
        #expect(reader.header.frameCount > 0 && Int(reader.header.frameCount) <= actual)
        #expect(reader.header.width == 320 && reader.header.height == 240)
        // Timestamps keep increasing across the loop over the input.
        #expect(zip(frames, frames.dropFirst()).allSatisfy { $0.timestamp < $1.timestamp })
        print("SIGKILL after \(String(format: "%.2f", seconds)) s: reported \(reported), file has \(actual) frames, header count \(reader.header.frameCount), vpxdec decoded \(size / frameBytes)")
    }
}
