// peer-bench compare: peer pairs and aiortc pairs alternating on one router and STUN server — set-up milestones, CPU per media second, peak RSS — next to the codec floor measured in the same run.
import Dispatch
import Foundation
import Media
import PeerAgent

/// `peer-bench compare [CALLS] [SECONDS]`: CALLS calls of SECONDS (default 5 × 20 s) each
/// of a `peer` pair, an aiortc pair and a `peer` pair with `--no-decode`, alternating,
/// on the router and STUN server of `scripts/services run`: legacy profile, trickle ICE,
/// 640x480@30 VP8 at 1 Mbit/s and Opus both ways, what is received recorded (peer: IVF
/// and Ogg) and decoded. Per process (`posix_spawn` + `wait4`, as `/usr/bin/time -v`):
/// CPU seconds per media second and peak RSS; from the offerer's JSON events: offer
/// published → first remote frame and its steps, process start → router joined. Then the
/// codec floor in this process: libvpx and libopus alone on the same frames at the same
/// settings (VP8 encode + decode of the pattern at 640x480@30, 1 Mbit/s, cpu-used −6;
/// Opus encode + decode of 20 ms frames at 32 kbit/s with FEC), the frames made before
/// the timed calls; and `peer --version` alone. Every row is printed with its ratio to
/// the floor and to aiortc, and the target.
enum CompareBench {
    static let width = 640, height = 480, fps = 30, kbps = 1_000

    /// One process of a call.
    struct Side {
        var usage: Spawned.Usage
        var events: [[String: Any]]
    }

    /// One call: its two processes.
    struct Call {
        var offerer: Side
        var answerer: Side
    }

    static func run(calls: Int, seconds: Int) throws {
        let env = ProcessInfo.processInfo.environment
        guard let router = env["PEER_TEST_ROUTER_URL"], let stun = env["PEER_TEST_STUN_URL"] else {
            throw CallBench.Failure(description: "PEER_TEST_ROUTER_URL / PEER_TEST_STUN_URL not set (run through scripts/services run)")
        }
        let peer = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("peer").path
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("peer-bench-compare-\(getpid())").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        print("compare: \(calls) calls each of a peer pair, an aiortc pair and a peer pair with --no-decode, alternating; \(seconds) s, "
            + "legacy trickle, \(width)x\(height)@\(fps) VP8 \(kbps) kbit/s + Opus both ways, router \(router), STUN \(stun) (peer)")
        var peers: [Call] = [], aiortcs: [Call] = [], noDecode: [Call] = []
        for i in 0..<calls {
            peers.append(try peerCall(peer, router: router, stun: stun, dir: dir, seconds: seconds, name: "peer\(i)", decode: true))
            aiortcs.append(try aiortcCall(router: router, dir: dir, seconds: seconds, name: "aiortc\(i)"))
            noDecode.append(try peerCall(peer, router: router, stun: stun, dir: dir, seconds: seconds, name: "nodec\(i)", decode: false))
        }
        let floor = try codecFloor(seconds: Double(seconds), paced: true)
        _ = try codecFloor(seconds: Double(seconds), paced: false)
        let version = try versionAlone(peer, dir: dir)
        report(peer: peers, aiortc: aiortcs, noDecode: noDecode, floor: floor, version: version, seconds: Double(seconds))
    }

    // MARK: Calls

    static func peerCall(_ peer: String, router: String, stun: String, dir: String, seconds: Int, name: String, decode: Bool) throws -> Call {
        let common = ["--router", router, "--stun", stun, "--local-address", "127.0.0.1", "--prefix", "bench.cmp.\(getpid()).\(name)",
                      "--video", "pattern:\(width)x\(height)@\(fps)", "--bitrate", String(kbps), "--duration", String(seconds),
                      "--timeout", "20", "--json", "--trickle"] + (decode ? [] : ["--no-decode"])
        let answerer = try Spawned(peer, ["answer"] + common + ["--video-out", "\(dir)/\(name)-a.ivf", "--audio-out", "\(dir)/\(name)-a.ogg"],
                                   stdoutPath: "\(dir)/\(name)-a.json", stderrPath: "\(dir)/\(name)-a.log")
        guard answerer.waitForEvent(within: 10, { $0["event"] as? String == "state" && $0["state"] as? String == "ringing" }) else {
            _ = answerer.wait()
            throw CallBench.Failure(description: "compare \(name): the answerer did not subscribe (see \(dir)/\(name)-a.log)")
        }
        let offerer = try Spawned(peer, ["offer"] + common + ["--video-out", "\(dir)/\(name)-o.ivf", "--audio-out", "\(dir)/\(name)-o.ogg"],
                                  stdoutPath: "\(dir)/\(name)-o.json", stderrPath: "\(dir)/\(name)-o.log")
        let call = Call(offerer: Side(usage: offerer.wait(), events: offerer.events()), answerer: Side(usage: answerer.wait(), events: answerer.events()))
        guard call.offerer.usage.status == 0, call.answerer.usage.status == 0 else {
            throw CallBench.Failure(description: "compare \(name): offer exit \(call.offerer.usage.status), answer exit \(call.answerer.usage.status)")
        }
        return call
    }

    static func aiortcCall(router: String, dir: String, seconds: Int, name: String) throws -> Call {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let script = root.appendingPathComponent("Tests/PeerAgentTests/Support/aiortc_wamp_peer.py").path
        let tools = ProcessInfo.processInfo.environment["PEER_TOOLS"] ?? (NSHomeDirectory() + "/.cache/peer/venv")
        let python = tools + "-peers/bin/python"
        let common = [script, "--router", router, "--prefix", "bench.cmp.\(getpid()).\(name)", "--width", String(width), "--height", String(height),
                      "--fps", String(fps), "--video-bitrate", String(kbps * 1000), "--duration", String(seconds), "--timeout", "20",
                      "--no-audio-analysis", "--t-from-exec"]
        let answerer = try Spawned(python, common + ["--role", "answer"], stdoutPath: "\(dir)/\(name)-a.json", stderrPath: "\(dir)/\(name)-a.log")
        guard answerer.waitForEvent(within: 20, { $0["event"] as? String == "ready" }) else {
            _ = answerer.wait()
            throw CallBench.Failure(description: "compare \(name): aiortc's answerer did not subscribe (see \(dir)/\(name)-a.log)")
        }
        let offerer = try Spawned(python, common + ["--role", "offer"], stdoutPath: "\(dir)/\(name)-o.json", stderrPath: "\(dir)/\(name)-o.log")
        let call = Call(offerer: Side(usage: offerer.wait(), events: offerer.events()), answerer: Side(usage: answerer.wait(), events: answerer.events()))
        guard call.offerer.usage.status == 0, call.answerer.usage.status == 0 else {
            throw CallBench.Failure(description: "compare \(name): aiortc offer exit \(call.offerer.usage.status), answer exit \(call.answerer.usage.status)")
        }
        return call
    }

    /// The set-up milestones of a `peer` offerer, ms since its process started.
    static func peerMilestones(_ side: Side) -> [String: Double] {
        var t: [String: Double] = [:]
        for e in side.events where e["event"] as? String == "milestone" {
            if let name = e["name"] as? String, let ms = e["t"] as? Double, t[name] == nil { t[name] = ms }
        }
        return t
    }

    /// The same milestones of an aiortc offerer (its events' t counts from process start
    /// too: --t-from-exec).
    static func aiortcMilestones(_ side: Side) -> [String: Double] {
        var t: [String: Double] = [:]
        func first(_ key: String, _ match: ([String: Any]) -> Bool) {
            if t[key] == nil, let e = side.events.first(where: match), let ms = e["t"] as? Double { t[key] = ms }
        }
        first("joined") { $0["event"] as? String == "ready" }
        first("offerPublished") { $0["event"] as? String == "published" && ($0["topic"] as? String)?.hasSuffix(".offer") == true }
        first("answerReceived") { $0["event"] as? String == "received" && $0["what"] as? String == "answer" }
        first("connected") { $0["event"] as? String == "connectionState" && $0["state"] as? String == "connected" }
        first("firstRemoteFrame") { $0["event"] as? String == "firstRemoteFrame" }
        return t
    }

    // MARK: The floor and --version

    /// CPU seconds per media second of libvpx and libopus alone: (encode + decode, encode
    /// only). `paced`: each frame at its real-time slot, as a call gives them (the ratios
    /// use this one); unpaced, back to back, the same work measured 30–45 % less CPU here
    /// (warm caches; and libvpx's real-time speed at cpu-used −6 follows the wall time
    /// an encode takes), so both are printed.
    static func codecFloor(seconds: Double, paced: Bool) throws -> (full: Double, encodeOnly: Double) {
        let frames = Int(seconds) * fps
        let pattern = try TestPattern(width: width, height: height, frameRate: fps)
        let defaults = SendEncoding()
        var config = VP8EncoderConfiguration(width: width, height: height, frameRate: fps, bitrateKbps: kbps)
        config.cpuUsed = defaults.videoCpuUsed
        config.keyframeInterval = defaults.keyframeInterval
        let encoder = try VP8Encoder(configuration: config)
        let decoder = try VP8Decoder()
        var tone = try ToneGenerator(frequency: 660, levelDBFS: -12, channels: 1)
        let opus = try OpusEncoder(configuration: OpusEncoderConfiguration(channels: 1, frameDurationMs: defaults.audioFrameDurationMs,
                                                                          bitrate: defaults.audioBitrate, inbandFEC: defaults.audioInbandFEC,
                                                                          packetLossPercent: defaults.audioInbandFEC ? 10 : 0))
        let opusDecoder = try OpusDecoder(channels: 1)
        var encode = 0.0, decode = 0.0, audioEncode = 0.0, audioDecode = 0.0
        // Video frames every 1/30 s and audio frames every 20 ms, in time order.
        let audioFrames = Int(seconds * 1000) / defaults.audioFrameDurationMs
        var n = 0, a = 0
        let start = DispatchTime.now().uptimeNanoseconds
        while n < frames || a < audioFrames {
            let videoAt = n < frames ? UInt64(n) * 1_000_000_000 / UInt64(fps) : .max
            let audioAt = a < audioFrames ? UInt64(a) * UInt64(defaults.audioFrameDurationMs) * 1_000_000 : .max
            if paced {
                let due = start + min(videoAt, audioAt)
                let now = DispatchTime.now().uptimeNanoseconds
                if due > now { usleep(UInt32((due - now) / 1000)) }
            }
            if videoAt <= audioAt {
                let frame = pattern.frame(number: n, captureTimeMs: Int64(n) * 1000 / Int64(fps))  // untimed
                let t0 = threadCPU()
                let encoded = try encoder.encode(frame)
                let t1 = threadCPU()
                for e in encoded { _ = try decoder.decode(e.data, timestamp: e.timestamp) }
                encode += t1 - t0
                decode += threadCPU() - t1
                n += 1
            } else {
                let block = tone.next(sampleCount: 48 * defaults.audioFrameDurationMs)  // untimed
                let t0 = threadCPU()
                let packet = try opus.encode(block)
                let t1 = threadCPU()
                _ = try opusDecoder.decode(packet.data, timestamp: packet.timestamp)
                audioEncode += t1 - t0
                audioDecode += threadCPU() - t1
                a += 1
            }
        }
        print(String(format: "compare: codec floor over %.0f s of media, %@: VP8 encode %.3f s, decode %.3f s; Opus encode %.3f s, decode %.3f s (%d frames decoded)",
                     seconds, paced ? "frames paced in real time as in a call (used below)" : "unpaced, back to back", encode, decode, audioEncode, audioDecode, decoder.framesDecoded))
        return ((encode + decode + audioEncode + audioDecode) / seconds, (encode + audioEncode) / seconds)
    }

    /// This thread's CPU time, seconds (CLOCK_THREAD_CPUTIME_ID: the codecs run on the caller's thread).
    static func threadCPU() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    /// `peer --version` ten times: the median wall time (ms) and peak RSS (MB).
    static func versionAlone(_ peer: String, dir: String) throws -> (ms: Double, mb: Double) {
        var walls: [Double] = [], rss: [Double] = []
        for _ in 0..<10 {
            let u = try Spawned(peer, ["--version"], stdoutPath: "\(dir)/version.txt").wait()
            walls.append(u.wallSeconds * 1000)
            rss.append(Double(u.maxRSSKiB) / 1024)
        }
        return (CallBench.median(walls), CallBench.median(rss))
    }

    // MARK: The table

    static func report(peer: [Call], aiortc: [Call], noDecode: [Call], floor: (full: Double, encodeOnly: Double),
                       version: (ms: Double, mb: Double), seconds: Double) {
        func med(_ values: [Double]) -> Double { CallBench.median(values) }
        func range(_ values: [Double], _ format: String) -> String {
            guard let lo = values.min(), let hi = values.max() else { return "-" }
            return String(format: format, med(values)) + " (" + String(format: format, lo) + "–" + String(format: format, hi) + ")"
        }
        let pm = peer.map { peerMilestones($0.offerer) }, am = aiortc.map { aiortcMilestones($0.offerer) }
        func step(_ m: [[String: Double]], _ from: String, _ to: String) -> [Double] {
            m.compactMap { t in t[to].flatMap { b in t[from].map { b - $0 } } }
        }
        func cpu(_ calls: [Call]) -> [Double] { calls.flatMap { [$0.offerer.usage.cpuSeconds / seconds, $0.answerer.usage.cpuSeconds / seconds] } }
        func rss(_ calls: [Call]) -> [Double] { calls.flatMap { [Double($0.offerer.usage.maxRSSKiB) / 1024, Double($0.answerer.usage.maxRSSKiB) / 1024] } }
        // peer: the first frame in its file; aiortc (which writes none): the first frame its track decoded.
        let setupPeer = step(pm, "offerPublished", "firstRemoteFrameWritten"), setupAio = step(am, "offerPublished", "firstRemoteFrame")
        let cpuPeer = cpu(peer), cpuAio = cpu(aiortc), cpuNoDecode = cpu(noDecode)
        let rssPeer = rss(peer), rssAio = rss(aiortc)
        func ratio(_ a: Double, _ b: Double) -> String { b > 0 && a.isFinite && b.isFinite ? String(format: "%.2f×", a / b) : "-" }
        func row(_ figure: String, _ peerText: String, _ aioText: String, _ target: String, _ ratios: String) {
            print("  " + figure.padding(toLength: 50, withPad: " ", startingAt: 0) + " " + peerText.padding(toLength: 24, withPad: " ", startingAt: 0)
                + " " + aioText.padding(toLength: 24, withPad: " ", startingAt: 0) + " " + target.padding(toLength: 36, withPad: " ", startingAt: 0) + " " + ratios)
        }
        print("compare: medians (min–max) over \(peer.count) calls; CPU and RSS per process (offerer and answerer)")
        row("figure", "peer", "aiortc " + aiortcVersion(), "target", "ratios")
        row("offer published → first remote frame written (offerer), ms", range(setupPeer, "%.0f"), range(setupAio, "%.0f"),
            "≤ 60 ms and ≤ 0.5× aiortc", "peer/aiortc " + ratio(med(setupPeer), med(setupAio)))
        row("  answer → ICE connected, ms", range(step(pm, "answerReceived", "iceConnected"), "%.1f"), "-", "≤ 15 ms", "")
        row("  ICE connected → DTLS connected, ms", range(step(pm, "iceConnected", "dtlsConnected"), "%.1f"), "-", "≤ 10 ms", "")
        row("  DTLS connected → first remote frame, ms", range(step(pm, "dtlsConnected", "firstRemoteFrame"), "%.1f"), "-", "", "")
        row("  first remote frame → written, ms", range(step(pm, "firstRemoteFrame", "firstRemoteFrameWritten"), "%.1f"), "-", "", "")
        row("  offer published → answer received, ms", range(step(pm, "offerPublished", "answerReceived"), "%.1f"),
            range(step(am, "offerPublished", "answerReceived"), "%.1f"), "", "")
        row("  answer received → connected (aiortc: both), ms", range(step(pm, "answerReceived", "dtlsConnected"), "%.1f"),
            range(step(am, "answerReceived", "connected"), "%.1f"), "", "")
        row("process start → router joined, ms", range(pm.compactMap { $0["joined"] }, "%.1f"), range(am.compactMap { $0["joined"] }, "%.1f"),
            "≤ 30 ms", "peer/aiortc " + ratio(med(pm.compactMap { $0["joined"] }), med(am.compactMap { $0["joined"] })))
        row("CPU s per media s, per process", range(cpuPeer, "%.3f"), range(cpuAio, "%.3f"), "≤ 1.15× floor, ≤ 0.55× aiortc",
            "/floor " + ratio(med(cpuPeer), floor.full) + ", peer/aiortc " + ratio(med(cpuPeer), med(cpuAio)))
        row("same with --no-decode", range(cpuNoDecode, "%.3f"), "-", "≤ 1.15× encode-only floor", "/floor " + ratio(med(cpuNoDecode), floor.encodeOnly))
        row("peak RSS of one call process, MB", range(rssPeer, "%.1f"), range(rssAio, "%.1f"), "≤ 30 MB", "peer/aiortc " + ratio(med(rssPeer), med(rssAio)))
        row("peer --version alone: wall ms, RSS MB", String(format: "%.1f ms, %.1f MB", version.ms, version.mb), "-", "≤ 10 ms, ≤ 8 MB", "")
        print(String(format: "  codec floor (libvpx + libopus alone, same frames and settings): %.3f CPU s per media s; encode only %.3f", floor.full, floor.encodeOnly))
    }

    /// aiortc's version, from its venv (or "?").
    static func aiortcVersion() -> String {
        let tools = ProcessInfo.processInfo.environment["PEER_TOOLS"] ?? (NSHomeDirectory() + "/.cache/peer/venv")
        let dir = tools + "-peers/lib"
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []
        for python in versions {
            let sitePackages = "\(dir)/\(python)/site-packages"
            let entries = (try? FileManager.default.contentsOfDirectory(atPath: sitePackages)) ?? []
            if let dist = entries.first(where: { $0.hasPrefix("aiortc-") && $0.hasSuffix(".dist-info") }) {
                return String(dist.dropFirst("aiortc-".count).dropLast(".dist-info".count))
            }
        }
        return "?"
    }
}
