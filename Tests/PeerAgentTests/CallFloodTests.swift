// Floods at a call's media port: garbage UDP from another address, garbage and
// valid-looking RTP (100 Mbit/s) from the peer's own address, each dropped and counted
// while the call goes on with bounded memory.
import Foundation
import Testing
import TestSupport

@Suite struct CallFloodTests {
    static let flood = TestServices.root.appendingPathComponent("Tests/PeerAgentTests/Support/udp_flood.py").path

    /// The UDP port of `name`'s host candidate on 127.0.0.1 (its media port: with
    /// `--local-address 127.0.0.1` the one pair's local side).
    static func mediaPort(_ h: CallHarness, _ name: String) -> Int? {
        for e in h.liveEvents(name) where e["event"] as? String == "candidate" && e["direction"] as? String == "local" {
            let f = (e["candidate"] as? String ?? "").split(separator: " ")
            if f.count >= 8, f[2].lowercased() == "udp", f[4] == "127.0.0.1", f[7] == "host", let port = Int(f[5]) { return port }
        }
        return nil
    }

    /// Datagrams the kernel dropped at the UDP socket bound to 127.0.0.1:`port` because its
    /// receive buffer was full (the `drops` column of /proc/net/udp).
    static func kernelDrops(port: Int) -> Int {
        let text = (try? String(contentsOfFile: "/proc/net/udp", encoding: .utf8)) ?? ""
        let local = String(format: "0100007F:%04X", port)
        for line in text.split(separator: "\n") {
            let f = line.split(separator: " ")
            if f.count >= 13, f[1] == local, let drops = Int(f[12]) { return drops }
        }
        return 0
    }

    /// Resident memory of process `pid`, bytes (0 once it is gone).
    static func rss(_ pid: pid_t) -> Int {
        let text = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        for line in text.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            return (Int(line.split(separator: " ")[1]) ?? 0) * 1024
        }
        return 0
    }

    /// Runs one flood; returns what the script says it sent.
    static func run(_ mode: String, to port: Int, from: Int?, mbps: Int, seconds: Double) async throws -> [String: Any] {
        var args = [flood, "--to", String(port), "--mode", mode, "--mbps", String(mbps), "--seconds", String(seconds)]
        if let from { args += ["--from-port", String(from)] }
        let r = try await TestServices.run("/usr/bin/env", ["python3"] + args, timeout: seconds + 30)
        #expect(r.status == 0, "\(mode) flood: \(r.stderr)")
        let object = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any]
        return try #require(object, "\(mode) flood printed \(r.stdout)")
    }

    /// A call of 160x120@15 video and Opus both ways. Once it is established, three floods
    /// hit the answerer's media port one after another: 4 s of random bytes at 100 Mbit/s
    /// from a socket of its own (libnice drops them: not from a remote candidate), 4 s of
    /// random bytes at 50 Mbit/s and 5 s of RTP-looking packets at 100 Mbit/s, both with
    /// the offerer's address and port as their source (a raw socket), so they pass libnice
    /// and reach the demultiplexer and SRTP. Then: both exit 0; the answerer's transport
    /// stats count the forged RTP as SRTP authentication failures and the garbage as
    /// unknown packets (less what the kernel dropped at the full socket buffer, read from
    /// /proc/net/udp); its RSS stays within 20 MB of the calm call's; video kept arriving
    /// during the floods and after them.
    @Test func floodsAtTheMediaPortAreDroppedCountedAndSurvived() async throws {
        try await CallSlots.with(peers: 2) {
            let services = try await TestServices.shared()
            let h = CallHarness("flood")
            let args = try CallHarness.common(services, duration: 22, timeout: 20)
            async let answerer = h.run("answerer", "answer", args, timeout: 90)
            #expect(await h.waitForState("answerer", "ringing"), "answerer never subscribed: \(h.liveEvents("answerer"))")
            async let offerer = h.run("offerer", "offer", args, timeout: 90)
            #expect(await h.waitForState("answerer", "established"), "\(h.liveEvents("answerer").suffix(5))")
            let pid = try h.pid("answerer")
            let aPort = try #require(Self.mediaPort(h, "answerer"), "\(h.liveEvents("answerer"))")
            let oPort = try #require(Self.mediaPort(h, "offerer"), "\(h.liveEvents("offerer"))")
            func videoFrames() -> Int {
                h.liveEvents("answerer").last { $0["event"] as? String == "frames" }?["video"] as? Int ?? 0
            }
            // The calm call: the largest RSS over 2 s, after a second of media.
            try await Task.sleep(for: .seconds(1))
            var calm = 0
            for _ in 0..<20 {
                calm = max(calm, Self.rss(pid))
                try await Task.sleep(for: .milliseconds(100))
            }
            // The largest RSS while flooding, sampled every 50 ms on a thread of its own.
            let sampling = Sampler()
            let peak = Task {
                try await TestServices.offload { () -> Int in
                    var m = 0
                    while !sampling.stopped {
                        m = max(m, CallFloodTests.rss(pid))
                        usleep(50_000)
                    }
                    return m
                }
            }
            let framesBefore = videoFrames()
            let garbage = try await Self.run("garbage", to: aPort, from: nil, mbps: 100, seconds: 4)
            let drops0 = Self.kernelDrops(port: aPort)
            let spoofed = try await Self.run("spoofed-garbage", to: aPort, from: oPort, mbps: 50, seconds: 4)
            let drops1 = Self.kernelDrops(port: aPort)
            let rtp = try await Self.run("rtp", to: aPort, from: oPort, mbps: 100, seconds: 5)
            let drops2 = Self.kernelDrops(port: aPort)
            let framesDuring = videoFrames() - framesBefore
            try await Task.sleep(for: .seconds(3))
            sampling.stop()
            let framesAfter = videoFrames() - framesBefore - framesDuring
            let peakRSS = try await peak.value
            let runs = try await [answerer, offerer]
            let a = runs[0], o = runs[1]
            #expect(a.status == 0, "\(a.log)")
            #expect(o.status == 0, "\(o.log)")
            let report = (a.stats(about: "offerer")?["report"] as? [String: Any])?["stats"] as? [String: Any]
            let t = try #require(report?["T-bundle"] as? [String: Any], "\(a.log)")
            let auth = t["srtpAuthFailures"] as? Int ?? -1, unknown = t["unknownPacketsDropped"] as? Int ?? -1
            let rtpSent = rtp["packets"] as? Int ?? 0, spoofedSent = spoofed["packets"] as? Int ?? 0
            print("""
                floods: garbage \(garbage["packets"] ?? 0) packets (\(garbage["mbps"] ?? 0) Mbit/s, other address), \
                spoofed garbage \(spoofedSent) (\(spoofed["mbps"] ?? 0) Mbit/s), RTP \(rtpSent) (\(rtp["mbps"] ?? 0) Mbit/s); \
                kernel drops at the socket \(drops0) / \(drops1 - drops0) / \(drops2 - drops1); counted: \
                srtpAuthFailures \(auth), unknownPacketsDropped \(unknown), srtpFailures \(t["srtpFailures"] ?? 0), \
                packetsReceived \(t["packetsReceived"] ?? 0); RSS calm \(calm / 1_000_000) MB, peak \(peakRSS / 1_000_000) MB; \
                video frames during the floods \(framesDuring), in the 3 s after \(framesAfter)
                """)
            #expect(rtpSent >= 40_000, "the RTP flood reached \(rtp["mbps"] ?? 0) Mbit/s")
            // Every forged RTP packet that got past the kernel fails authentication.
            #expect(auth >= Int(Double(rtpSent - (drops2 - drops1)) * 0.95), "srtpAuthFailures \(auth) of \(rtpSent) sent")
            // About half of random first bytes are neither DTLS nor RTP/RTCP (RFC 7983).
            #expect(unknown >= Int(Double(spoofedSent - (drops1 - drops0)) * 0.3), "unknownPacketsDropped \(unknown) of \(spoofedSent)")
            #expect(peakRSS - calm < 20_000_000, "RSS rose from \(calm) to \(peakRSS) bytes")
            // 13 s of floods at 15 frames per second: most frames still arrived, and after.
            #expect(framesDuring >= 100, "\(framesDuring) video frames during 13 s of floods")
            #expect(framesAfter >= 20, "\(framesAfter) video frames in the 3 s after")
            h.remove()
        }
    }
}

/// A flag the RSS sampler thread polls.
final class Sampler: @unchecked Sendable {
    private let lock = NSLock()
    private var done = false
    var stopped: Bool { lock.withLock { done } }
    func stop() { lock.withLock { done = true } }
}
