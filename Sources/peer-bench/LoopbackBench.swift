// peer-bench loopback: `peer loopback` in this process at 640x480@30 1 Mbit/s both ways — time to connect and CPU seconds per media second.
import Foundation
import PeerAgent
import PeerCall

/// `peer-bench loopback [SECONDS]`: `peer loopback` in this process — two peer
/// connections over 127.0.0.1 sending 640x480@30 at 1 Mbit/s plus Opus both ways,
/// decoding what they receive — and prints the time from the first description to
/// ICE connected, DTLS connected and the first remote frame (per side), and the CPU
/// seconds the whole process used per media second (both sides together, and per side).
enum LoopbackBench {
    /// Loopback options for a benchmark: `seconds` of `width`×`height`@30 VP8 at
    /// `kbps` kbit/s plus Opus, recorded into a scratch directory named after `label`
    /// (the caller removes `options.outputDirectory`).
    static func options(seconds: Double, width: Int, height: Int, kbps: Int, label: String) -> LoopbackOptions {
        var options = LoopbackOptions()
        options.durationSeconds = seconds
        options.width = width
        options.height = height
        options.frameRate = 30
        options.videoBitrateKbps = kbps
        options.outputDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("peer-bench-\(label)-\(getpid())").path
        return options
    }

    /// Runs the call and prints the figures.
    /// - Throws: what ``PeerAgent/Loopback/run(_:progress:)`` throws (the call could not be made).
    static func run(seconds: Double) async throws {
        let options = options(seconds: seconds, width: 640, height: 480, kbps: 1_000, label: "loopback")
        defer { try? FileManager.default.removeItem(atPath: options.outputDirectory) }
        let cpuBefore = MediaBench.cpuSeconds(RUSAGE_SELF)
        let wallBefore = Date()
        let (a, b) = try await Loopback.run(options)
        let cpu = MediaBench.cpuSeconds(RUSAGE_SELF) - cpuBefore
        let wall = Date().timeIntervalSince(wallBefore)
        print("loopback: 640x480@30, 1000 kbit/s VP8 + Opus both ways, decoding on, \(seconds) s of media (\(String(format: "%.1f", wall)) s wall)")
        for side in [a, b] {
            let t = side.stats.timings
            let v = side.stats.inbound("video")
            func ms(_ x: Double?) -> String { x.map { String(format: "%.0f ms", $0) } ?? "-" }
            print("  side \(side.name): ICE connected \(ms(t.iceConnectedMs)), DTLS connected \(ms(t.dtlsConnectedMs)), "
                + "first remote frame \(ms(t.firstRemoteFrameMs)); framesDecoded \(v?.framesDecoded ?? 0), "
                + "\(Int(Double((v?.bytesReceived ?? 0) * 8) / seconds / 1000)) kbit/s received")
        }
        print(String(format: "loopback: %.3f CPU s per media s for the process (both sides), %.3f per side", cpu / seconds, cpu / seconds / 2))
    }
}
