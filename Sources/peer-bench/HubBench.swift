// peer-bench hub: one shared pattern source to N subscribers on two event loops — CPU per subscriber per media second beside the one encode, and the ratio against N passthrough calls.
import DTLS
import Dispatch
import EventLoop
import Foundation
import Hub
import Media
import RTP

/// `peer-bench hub [N] [SECONDS]`: what the media hub costs, in real time, each run
/// `SECONDS` long after 1.5 s of warm-up (every subscriber started at a key frame), `N`
/// subscribers spread over two event loops (a loop group of one loop per core on this
/// 2-core machine):
///
/// 1. one encode: `pattern:640x480@30` at 1,000 kbit/s (cpu-used −6, the sender's default)
///    with one subscriber that sends nothing — the source, its encoder, packetizing, hops;
/// 2. passthrough: an IVF file of the same pattern at the same rate (encoded before, not
///    timed, with a key frame every second: a subscriber of a file passed through starts
///    at its next key frame) to N subscribers, each doing what a connection's sender does
///    per packet: header write and payload copy (``SharedFrameStream``), SRTP protect in place with
///    its own session (AES-CM-128/HMAC-SHA1-80), the time-sized history — the datagram is
///    not sent (the kernel's UDP send is the same per packet on either side);
/// 3. the pattern to the same N subscribers: one encoder for all.
///
/// Prints CPU seconds per media second of each (the whole process: `getrusage`), the
/// passthrough cost per call, the cost per subscriber beyond the one encode, the packet
/// cost measured alone (no pacing), and the ratio: run 3 / (run 1 + run 2), whose
/// target is ≤ 1.3 at 50 subscribers.
enum HubBench {
    static let width = 640, height = 480, fps = 30, kbps = 1_000

    static func run(subscribers n: Int, seconds: Double) async throws {
        let pattern = HubSourceSpec.pattern(width: width, height: height, frameRate: fps,
                                            encoding: HubVideoEncoding(bitrateKbps: kbps))
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("peer-bench-hub-\(getpid())").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let ivfPath = "\(dir)/pattern.ivf"
        try writeIVF(path: ivfPath, frames: 10 * fps, keyframeInterval: fps)
        let ivf = HubSourceSpec.ivf(path: ivfPath)
        let loops = [EventLoop(name: "bench-loop-a"), EventLoop(name: "bench-loop-b")]
        defer { loops.forEach { $0.stop() } }
        print("hub: \(pattern) to \(n) subscribers on \(loops.count) event loops, \(Int(seconds)) s per run (real time); "
            + "per packet: header, payload copy, SRTP protect in place, history")

        let encode = try await measure(pattern, subscribers: 1, sending: false, loops: loops, seconds: seconds)
        let passthrough = try await measure(ivf, subscribers: n, sending: true, loops: loops, seconds: seconds)
        let shared = try await measure(pattern, subscribers: n, sending: true, loops: loops, seconds: seconds)
        let packet = try packetCost(count: 100_000)

        func line(_ name: String, _ text: String) {
            print("  " + name.padding(toLength: 58, withPad: " ", startingAt: 0) + " " + text)
        }
        line("one encode (1 subscriber, nothing sent)", String(format: "%.4f CPU s per media s (%d frames encoded)",
                                                              encode.cpu, encode.stats.framesEncoded))
        line("ivf passthrough to \(n) subscribers", String(format: "%.4f CPU s per media s, %.5f per call (%.0f packets/s each)",
                                                          passthrough.cpu, passthrough.cpu / Double(n),
                                                          passthrough.packetsPerSubscriberSecond))
        line("pattern to \(n) subscribers, one encoder", String(format: "%.4f CPU s per media s, %.5f per subscriber beyond the encode",
                                                               shared.cpu, (shared.cpu - encode.cpu) / Double(n)))
        line("  encoders made, frames encoded, hops", "\(shared.encoders), \(shared.stats.framesEncoded) "
            + "(\(shared.stats.framesProduced) frames), \(shared.stats.hops) (\(loops.count) loops)")
        line("  packets per subscriber per s, threads", String(format: "%.0f, %d", shared.packetsPerSubscriberSecond,
                                                                                   shared.threads))
        line("packet alone: header + copy + SRTP + history", String(format: "%.2f µs CPU per packet (no pacing, %d packets)",
                                                                   packet.all * 1e6, 100_000))
        line("  of which SRTP protect (libsrtp, in place)", String(format: "%.2f µs", packet.protect * 1e6))
        for (name, run) in [("one encode", encode), ("passthrough", passthrough), ("shared", shared)]
        where run.framesPerSecond < 0.95 * Double(fps) {
            print("hub: the \(name) run produced " + String(format: "%.1f", run.framesPerSecond)
                + " frames/s, behind real time (\(fps)): the machine is loaded, its figures are low")
        }
        let ratio = shared.cpu / (encode.cpu + passthrough.cpu)
        print(String(format: "hub: %d subscribers / (one encode + %d × passthrough per call) = %.3f / (%.4f + %.4f) = %.2f (target ≤ 1.3)",
                     n, n, shared.cpu, encode.cpu, passthrough.cpu, ratio))
    }

    /// One run's figures.
    struct Run {
        var cpu = 0.0
        var stats: HubSourceStats
        var encoders = 0
        var packetsPerSubscriberSecond = 0.0
        var threads = 0
        /// Frames the source produced per second of the run.
        var framesPerSecond = 0.0
    }

    /// Subscribes `subscribers` to `spec` (alternating loops), waits 1.5 s, then measures the
    /// process's CPU over `seconds`; returns CPU seconds per media second and the source's stats.
    static func measure(_ spec: HubSourceSpec, subscribers: Int, sending: Bool, loops: [EventLoop],
                        seconds: Double) async throws -> Run {
        let hub = MediaHub()
        var streams: [BenchStream] = []
        var subscriptions: [HubSubscription] = []
        for i in 0..<subscribers {
            let loop = loops[i % loops.count]
            let stream = try BenchStream(loop: loop, ssrc: UInt32(i + 1))
            streams.append(stream)
            let deliver: @Sendable (PacketizedFrame) -> Void = { frame in if sending { stream.send(frame) } }
            subscriptions.append(try hub.subscribe(spec, loop: loop, deliver: deliver))
        }
        try await Task.sleep(for: .milliseconds(1_500))  // every subscriber past its first key frame
        let packetsBefore = streams.map(\.packets).reduce(0, +)
        let framesBefore = hub.stats(of: spec)?.framesProduced ?? 0
        let start = MediaBench.cpuSeconds(RUSAGE_SELF)
        let wall = DispatchTime.now().uptimeNanoseconds
        try await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
        let cpu = MediaBench.cpuSeconds(RUSAGE_SELF) - start
        let elapsed = Double(DispatchTime.now().uptimeNanoseconds - wall) / 1e9
        let packets = streams.map(\.packets).reduce(0, +) - packetsBefore
        guard let stats = hub.stats(of: spec) else { throw HubBenchError.noSource(spec.description) }
        if let failure = stats.failure { throw HubBenchError.source(spec.description, failure) }
        let threads = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").count) ?? 0
        subscriptions.forEach { $0.cancel() }
        return Run(cpu: cpu / elapsed, stats: stats, encoders: hub.made.encoders,
                   packetsPerSubscriberSecond: Double(packets) / elapsed / Double(max(1, subscribers)), threads: threads,
                   framesPerSecond: Double(stats.framesProduced - framesBefore) / elapsed)
    }

    /// CPU seconds per packet of a subscriber's path alone, on shared 1,200-byte packets,
    /// and of its SRTP protect alone (this thread's CPU time, so waiting for the CPU on a
    /// loaded machine does not count).
    static func packetCost(count: Int) throws -> (all: Double, protect: Double) {
        var packetizer = try SharedVP8Packetizer(pictureID: 1)
        let frame = try packetizer.packetize([UInt8](repeating: 0x55, count: 1_196 * 4), timestamp: 0, isKeyframe: false)
        let session = try SRTPSession(profile: .aes128CmSha1_80, key: [UInt8](repeating: 1, count: 16),
                                      salt: [UInt8](repeating: 2, count: 14), direction: .outbound)
        var stream = SharedFrameStream(header: RTPStreamHeader(ssrc: 1, payloadType: 96, sequenceNumber: 0, timestampOffset: 0),
                                       trailer: SRTPProfile.maxTrailerLength)
        var start = threadCPUSeconds()
        for i in 0..<(count / 4) {
            stream.send(frame, nowMs: Int64(i)) { (try? session.protect(rtpInPlace: &$0)) != nil }
        }
        let all = (threadCPUSeconds() - start) / Double(count / 4 * 4)
        var plain: [UInt8] = []
        var header = RTPStreamHeader(ssrc: 2, payloadType: 96, sequenceNumber: 0, timestampOffset: 0)
        header.write(frame, packet: 0, into: &plain, reserving: SRTPProfile.maxTrailerLength)
        var buffer = plain
        start = threadCPUSeconds()
        for _ in 0..<count {
            buffer.removeAll(keepingCapacity: true)
            buffer.append(contentsOf: plain)
            try session.protect(rtpInPlace: &buffer)
        }
        return (all, (threadCPUSeconds() - start) / Double(count))
    }

    /// CPU seconds the calling thread has used (`CLOCK_THREAD_CPUTIME_ID`).
    static func threadCPUSeconds() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    /// Writes `frames` of the pattern at the run's size, rate and bitrate as an IVF file,
    /// a key frame every `keyframeInterval` frames.
    static func writeIVF(path: String, frames: Int, keyframeInterval: Int) throws {
        let source = try PatternSource(width: width, height: height, frameRate: fps, frameCount: frames)
        var config = VP8EncoderConfiguration(width: width, height: height, frameRate: fps, bitrateKbps: kbps)
        config.keyframeInterval = keyframeInterval
        let encoder = try VP8Encoder(configuration: config)
        let writer = try IVFWriter(path: path)
        while case let .raw(frame)? = try source.nextFrame() {
            for encoded in try encoder.encode(frame) { try writer.write(encoded) }
        }
        try writer.close()
    }
}

/// One subscriber's sending side: its stream and SRTP session, on its loop.
final class BenchStream: Sendable {
    private let stream: LoopBound<SharedFrameStream>
    private let session: SRTPSession
    private let loop: EventLoop

    init(loop: EventLoop, ssrc: UInt32) throws {
        self.loop = loop
        stream = LoopBound(SharedFrameStream(header: RTPStreamHeader(ssrc: ssrc, payloadType: 96, sequenceNumber: UInt16(ssrc),
                                                                     timestampOffset: ssrc &* 7_919),
                                             trailer: SRTPProfile.maxTrailerLength), loop: loop)
        session = try SRTPSession(profile: .aes128CmSha1_80, key: (0..<16).map { UInt8(truncatingIfNeeded: $0 &+ Int(ssrc)) },
                                  salt: [UInt8](repeating: UInt8(truncatingIfNeeded: ssrc), count: 14), direction: .outbound)
    }

    /// Sends every packet of `frame` (on the loop): header, copy, SRTP in place, history.
    func send(_ frame: PacketizedFrame) {
        stream.value.send(frame, nowMs: MediaHub.monotonicMs()) { [session] in (try? session.protect(rtpInPlace: &$0)) != nil }
    }

    /// Packets sent so far (waits for the loop: read between runs, not while timing).
    var packets: Int { loop.sync { stream.value.counts.packetsSent } }
}

/// Why the hub benchmark could not run.
enum HubBenchError: Error, CustomStringConvertible {
    case noSource(String)
    case source(String, String)
    var description: String {
        switch self {
        case let .noSource(spec): return "hub: \(spec) has no source"
        case let .source(spec, failure): return "hub: \(spec) failed: \(failure)"
        }
    }
}
