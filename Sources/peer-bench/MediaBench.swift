// peer-bench media: CPU seconds per media second of our video path, next to the codec floor (vpxenc and vpxdec at the same settings).
import Foundation
import Media
import RTP

/// `peer-bench media [FRAMES]`: CPU seconds per media second of our video path —
/// test pattern → VP8 encode → RTP packetize → serialize/parse → reassemble → VP8
/// decode — at 640x480@30 and 500 kbit/s, next to `vpxenc --rt --cpu-used=8` +
/// `vpxdec` on the same frames (from a Y4M file) in the same run, with their ratio.
/// Our path runs twice: with vpxenc's speed (cpu-used 8) for a like-for-like figure,
/// and with our default (cpu-used −6, what WebRTC uses on desktop).
///
/// Like for like: the pattern frames are generated once, before any timed region, and
/// both our path and the Y4M file given to vpxenc use those same frames; vpxenc gets the
/// quantizer range, key frame distance and rate-control settings of
/// ``VP8EncoderConfiguration``'s defaults and `VP8Encoder`.
enum MediaBench {
    static let width = 640, height = 480, fps = 30, kbps = 500

    static func run(frames count: Int) throws {
        let pattern = try TestPattern(width: width, height: height, frameRate: fps)
        let mediaSeconds = Double(count) / Double(fps)
        let defaults = VP8EncoderConfiguration(width: width, height: height, frameRate: fps, bitrateKbps: kbps)
        print("media: \(count) frames \(width)x\(height)@\(fps) (\(mediaSeconds) s of video), \(kbps) kbit/s, 1 thread, "
            + "q \(defaults.minQuantizer)-\(defaults.maxQuantizer)")

        // Untimed: the frames every path below encodes.
        let frames = (0..<count).map { pattern.frame(number: $0, captureTimeMs: Int64($0) * 1000 / Int64(fps)) }

        let like = try ours(frames: frames, cpuUsed: 8)
        let dflt = try ours(frames: frames, cpuUsed: defaults.cpuUsed)

        // The floor: libvpx's own tools on the same frames.
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("peer-bench-media-\(getpid())").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let y4m = "\(dir)/pattern.y4m", ivf = "\(dir)/vpxenc.ivf"
        try writeY4M(frames: frames, to: y4m)
        // The settings VP8Encoder gives libvpx (VP8Encoder.open()), as vpxenc options.
        let maxIntraPct = max(300, 600 / 2 * fps / 10)
        let enc = try childCPU("/usr/bin/vpxenc", ["--codec=vp8", "--rt", "--cpu-used=8", "--end-usage=cbr",
                                                  "--target-bitrate=\(kbps)", "--lag-in-frames=0", "--error-resilient=1",
                                                  "--min-q=\(defaults.minQuantizer)", "--max-q=\(defaults.maxQuantizer)",
                                                  "--undershoot-pct=100", "--overshoot-pct=15", "--buf-initial-sz=500",
                                                  "--buf-optimal-sz=600", "--buf-sz=1000", "--drop-frame=0", "--resize-allowed=0",
                                                  "--kf-min-dist=0", "--kf-max-dist=\(defaults.keyframeInterval)",
                                                  "--static-thresh=1", "--noise-sensitivity=0", "--token-parts=0",
                                                  "--max-intra-rate=\(maxIntraPct)",
                                                  "--threads=1", "--ivf", "-q", "-o", ivf, y4m])
        let dec = try childCPU("/usr/bin/vpxdec", ["--i420", "-o", "/dev/null", ivf])
        let ivfBytes = (try? FileManager.default.attributesOfItem(atPath: ivf)[.size] as? Int) ?? 0
        let floor = (enc + dec) / mediaSeconds

        func line(_ name: String, _ cpu: Double, _ bytes: Int) -> String {
            "  " + name.padding(toLength: 52, withPad: " ", startingAt: 0)
                + String(format: " %6.3f CPU s per media s  (%4.0f kbit/s)", cpu / mediaSeconds, Double(bytes) * 8 / mediaSeconds / 1000)
        }
        print(line("ours, cpu-used 8: enc→RTP→reassemble→dec", like.cpu, like.bytes))
        print(line("ours, cpu-used -6 (default)", dflt.cpu, dflt.bytes))
        print(line("vpxenc --rt --cpu-used=8 + vpxdec (same frames)", enc + dec, ivfBytes))
        print(String(format: "  of which vpxenc %.3f s, vpxdec %.3f s; ours at cpu-used 8 decoded %d/%d frames",
                     enc, dec, like.decoded, count))
        print(String(format: "media: ours / vpxenc+vpxdec = %.2f (cpu-used 8, like for like)", like.cpu / mediaSeconds / floor))
    }

    /// Runs our whole path over the pre-generated `frames`; returns CPU seconds (user +
    /// system of this process), encoded bytes and decoded frames.
    static func ours(frames: [I420Frame], cpuUsed: Int) throws -> (cpu: Double, bytes: Int, decoded: Int) {
        var config = VP8EncoderConfiguration(width: width, height: height, frameRate: fps, bitrateKbps: kbps)
        config.cpuUsed = cpuUsed
        let encoder = try VP8Encoder(configuration: config)
        let decoder = try VP8Decoder()
        var packetizer = try VP8Packetizer(ssrc: 0x5EED, payloadType: 96, sequenceNumber: 1000, pictureID: 7)
        var assembler = VP8FrameAssembler(reorderWindow: 64, reorderDelay: 9000)
        var bytes = 0
        let start = cpuSeconds(RUSAGE_SELF)
        for frame in frames {
            for encoded in try encoder.encode(frame) {
                bytes += encoded.data.count
                for packet in try packetizer.packetize(encoded.data, timestamp: UInt32(truncatingIfNeeded: encoded.timestamp)) {
                    for event in assembler.push(try RTPPacket(parsing: packet.serialized())) {
                        if case let .delivered(f) = event { _ = try decoder.decode(f.data, timestamp: Int64(f.timestamp)) }
                    }
                }
            }
        }
        for event in assembler.flush() {
            if case let .delivered(f) = event { _ = try decoder.decode(f.data, timestamp: Int64(f.timestamp)) }
        }
        return (cpuSeconds(RUSAGE_SELF) - start, bytes, decoder.framesDecoded)
    }

    /// Writes `frames` as a 4:2:0 Y4M file (the input of vpxenc).
    static func writeY4M(frames: [I420Frame], to path: String) throws {
        guard FileManager.default.createFile(atPath: path, contents: nil),
              let out = FileHandle(forWritingAtPath: path) else { throw BenchError.file(path) }
        defer { try? out.close() }
        out.write(Data("YUV4MPEG2 W\(width) H\(height) F\(fps):1 Ip A1:1 C420jpeg\n".utf8))
        for frame in frames {
            out.write(Data("FRAME\n".utf8))
            out.write(Data(frame.data))
        }
    }

    /// Runs a program to completion; returns the CPU seconds it used (children's rusage delta).
    static func childCPU(_ path: String, _ arguments: [String]) throws -> Double {
        let before = cpuSeconds(RUSAGE_CHILDREN)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw BenchError.tool(path, process.terminationStatus) }
        return cpuSeconds(RUSAGE_CHILDREN) - before
    }

    static func cpuSeconds(_ who: __rusage_who) -> Double {
        let who = __rusage_who_t(who.rawValue)
        var usage = rusage()
        getrusage(who, &usage)
        return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
            + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    }
}
