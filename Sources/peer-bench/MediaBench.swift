import Foundation
import Media
import RTP

/// `peer-bench media [FRAMES]`: CPU seconds per media second of our video path —
/// test pattern → VP8 encode → RTP packetize → serialize/parse → reassemble → VP8
/// decode — at 640x480@30 and 500 kbit/s, next to `vpxenc --rt --cpu-used=8` +
/// `vpxdec` on the same frames (from a Y4M file) in the same run, with their ratio.
/// Our path runs twice: with vpxenc's speed (cpu-used 8) for a like-for-like figure,
/// and with our default (cpu-used −6, what WebRTC uses on desktop).
enum MediaBench {
    static let width = 640, height = 480, fps = 30, kbps = 500

    static func run(frames: Int) throws {
        let pattern = try TestPattern(width: width, height: height, frameRate: fps)
        let mediaSeconds = Double(frames) / Double(fps)
        print("media: \(frames) frames \(width)x\(height)@\(fps) (\(mediaSeconds) s of video), \(kbps) kbit/s, 1 thread")

        let like = try ours(pattern: pattern, frames: frames, cpuUsed: 8)
        let dflt = try ours(pattern: pattern, frames: frames, cpuUsed: VP8EncoderConfiguration(width: width, height: height).cpuUsed)

        // The floor: libvpx's own tools on the same frames.
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("peer-bench-media-\(getpid())").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let y4m = "\(dir)/pattern.y4m", ivf = "\(dir)/vpxenc.ivf"
        try writeY4M(pattern: pattern, frames: frames, to: y4m)
        let enc = try childCPU("/usr/bin/vpxenc", ["--codec=vp8", "--rt", "--cpu-used=8", "--end-usage=cbr",
                                                  "--target-bitrate=\(kbps)", "--lag-in-frames=0", "--error-resilient=1",
                                                  "--threads=1", "--ivf", "-q", "-o", ivf, y4m])
        let dec = try childCPU("/usr/bin/vpxdec", ["--i420", "-o", "/dev/null", ivf])
        let ivfBytes = (try? FileManager.default.attributesOfItem(atPath: ivf)[.size] as? Int) ?? 0
        let floor = (enc + dec) / mediaSeconds

        func line(_ name: String, _ cpu: Double, _ bytes: Int) -> String {
            "  " + name.padding(toLength: 52, withPad: " ", startingAt: 0)
                + String(format: " %6.3f CPU s per media s  (%4.0f kbit/s)", cpu / mediaSeconds, Double(bytes) * 8 / mediaSeconds / 1000)
        }
        print(line("ours, cpu-used 8: pattern→enc→RTP→reassemble→dec", like.cpu, like.bytes))
        print(line("ours, cpu-used -6 (default)", dflt.cpu, dflt.bytes))
        print(line("vpxenc --rt --cpu-used=8 + vpxdec (same frames)", enc + dec, ivfBytes))
        print(String(format: "  of which vpxenc %.3f s, vpxdec %.3f s; ours at cpu-used 8 decoded %d/%d frames",
                     enc, dec, like.decoded, frames))
        print(String(format: "media: ours / vpxenc+vpxdec = %.2f (cpu-used 8, like for like)", like.cpu / mediaSeconds / floor))
    }

    /// Runs our whole path over `frames` pattern frames; returns CPU seconds (user + system
    /// of this process), encoded bytes and decoded frames.
    static func ours(pattern: TestPattern, frames: Int, cpuUsed: Int) throws -> (cpu: Double, bytes: Int, decoded: Int) {
        var config = VP8EncoderConfiguration(width: width, height: height, frameRate: fps, bitrateKbps: kbps)
        config.cpuUsed = cpuUsed
        let encoder = try VP8Encoder(configuration: config)
        let decoder = try VP8Decoder()
        var packetizer = try VP8Packetizer(ssrc: 0x5EED, payloadType: 96, sequenceNumber: 1000, pictureID: 7)
        var assembler = VP8FrameAssembler(reorderWindow: 64, reorderDelay: 9000)
        var bytes = 0
        let start = cpuSeconds(RUSAGE_SELF)
        for n in 0..<frames {
            let frame = pattern.frame(number: n, captureTimeMs: Int64(n) * 1000 / Int64(fps))
            for encoded in try encoder.encode(frame) {
                bytes += encoded.data.count
                for packet in try packetizer.packetize(encoded.data, timestamp: UInt32(truncatingIfNeeded: encoded.timestamp)) {
                    for event in assembler.push(try RTPPacket(parsing: packet.serialized())) {
                        if case let .frame(f) = event { _ = try decoder.decode(f.data, timestamp: Int64(f.timestamp)) }
                    }
                }
            }
        }
        for event in assembler.flush() {
            if case let .frame(f) = event { _ = try decoder.decode(f.data, timestamp: Int64(f.timestamp)) }
        }
        return (cpuSeconds(RUSAGE_SELF) - start, bytes, decoder.framesDecoded)
    }

    static func writeY4M(pattern: TestPattern, frames: Int, to path: String) throws {
        guard FileManager.default.createFile(atPath: path, contents: nil),
              let out = FileHandle(forWritingAtPath: path) else { throw BenchError.file(path) }
        defer { try? out.close() }
        out.write(Data("YUV4MPEG2 W\(width) H\(height) F\(fps):1 Ip A1:1 C420jpeg\n".utf8))
        for n in 0..<frames {
            out.write(Data("FRAME\n".utf8))
            out.write(Data(pattern.frame(number: n, captureTimeMs: Int64(n) * 1000 / Int64(fps)).data))
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
