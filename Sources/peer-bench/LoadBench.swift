// peer-bench load: the largest N at which two `peer load` processes (offering, answering) carry N calls through the real router and STUN server with every call passing and ≥ 99.9 % of RTP packets arriving — CPU per call per media second, memory per additional connection, threads — next to N/10 single-call `peer` pairs and aiortc pairs, the same relayed through coturn, and 200 calls ramped at 20/s; the issue's targets marked met or not.
import Foundation

/// `peer-bench load [--seconds S] [--sizes N,N,…] [--max N] [--ramp-calls N] [--skip
/// compare,relay,ramp]`: needs `scripts/services run` (router, STUN/TURN server).
///
/// The media: the test pattern encoded once by `peer`'s VP8 encoder into an IVF
/// (640x480@30, 1 Mbit/s) and a tone by its Opus encoder into an Ogg file
/// (``LoadBenchMedia``), passed through by every sender both ways; nothing decoded or
/// recorded by `peer load`. A size passes when both processes exit 0 (every call
/// passed) and ≥ 99.9 % of the RTP packets each side sent arrived. The search doubles N
/// from 10 while sizes pass (up to `--max`), then halves the gap to the first failure
/// twice; `--sizes` runs exactly those. For the largest passing N it prints CPU per call
/// per media second (both processes' CPU over the whole run ÷ N × S; the steady state,
/// every call in the call, beside it), memory per additional connection (RSS at N minus
/// RSS at N/2, both processes, ÷ the connections added), threads per process at N = 10
/// and at N; the same for N/10 single-call `peer` pairs and for as many aiortc pairs as
/// pass (doubling from 1), with the ratios; then the relayed search (`--ice-policy
/// relay`, coturn over UDP) with coturn's CPU beside peer's, and the ramp case: 200 calls
/// at 20 a second, p95 offer published → connected. Each target of issue 35 is marked.
enum LoadBench {
    struct Options {
        var seconds = 60
        var sizes: [Int]?
        var maximum = 400
        var rampCalls = 200
        var rampRate = 20.0
        var skip: Set<String> = []
        /// Calls started a second in the search runs.
        var searchRamp = 20.0
    }

    /// Reads `peer-bench load`'s arguments; exits 2 naming a bad one.
    static func options(_ arguments: [String]) -> Options {
        var o = Options()
        var i = 0
        func value() -> String {
            i += 1
            guard i < arguments.count else { usage("\(arguments[i - 1]) needs a value") }
            return arguments[i]
        }
        while i < arguments.count {
            switch arguments[i] {
            case "--seconds": o.seconds = Bench.whole(value(), "--seconds", default: 60, in: 5...3_600)
            case "--max": o.maximum = Bench.whole(value(), "--max", default: 400, in: 1...10_000)
            case "--ramp-calls": o.rampCalls = Bench.whole(value(), "--ramp-calls", default: 200, in: 1...10_000)
            case "--sizes":
                let text = value()
                let sizes = text.split(separator: ",").compactMap { Int($0) }
                guard !sizes.isEmpty, sizes.count == text.split(separator: ",").count, sizes.allSatisfy({ (1...10_000).contains($0) }) else {
                    usage("--sizes \"\(text)\": expected call counts in 1…10000 separated by commas, e.g. 10,20,40")
                }
                o.sizes = sizes.sorted()
            case "--skip":
                let parts = Set(value().split(separator: ",").map(String.init))
                guard parts.isSubset(of: ["compare", "relay", "ramp"]) else { usage("--skip takes compare, relay and ramp, separated by commas") }
                o.skip = parts
            default: usage("unknown argument \"\(arguments[i])\"")
            }
            i += 1
        }
        return o
    }

    static func usage(_ message: String) -> Never {
        FileHandle.standardError.write(Data(("peer-bench: load: \(message)\n  usage: peer-bench load [--seconds S] [--sizes N,N,…] [--max N] "
            + "[--ramp-calls N] [--skip compare,relay,ramp]\n").utf8))
        exit(2)
    }

    static func run(_ o: Options) throws {
        let env = ProcessInfo.processInfo.environment
        guard let router = env["PEER_TEST_ROUTER_URL"], let stun = env["PEER_TEST_STUN_URL"] else {
            throw CallBench.Failure(description: "PEER_TEST_ROUTER_URL / PEER_TEST_STUN_URL not set (run through scripts/services run)")
        }
        let services = env["PEER_TEST_SERVICES"].map(LoadBenchRuns.readJSON) ?? [:]
        var turn: (String, String, String, Int32)?
        if let url = services["turn_url"] as? String, let user = services["turn_user"] as? String,
           let password = services["turn_password"] as? String, let group = services["turn_pid"] as? Int {
            turn = (url, user, password, Int32(group))
        }
        let peer = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("peer").path
        guard FileManager.default.isExecutableFile(atPath: peer) else {
            throw CallBench.Failure(description: "\(peer) not built (swift build -c release --product peer)")
        }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("peer-bench-load-\(getpid())").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { if env["PEER_BENCH_KEEP"] == nil { try? FileManager.default.removeItem(atPath: dir) } }
        let media = try LoadBenchMedia.make(in: dir, seconds: o.seconds + 20)
        let setup = LoadBenchSetup(router: router, stun: stun, turn: turn.map { (url: $0.0, user: $0.1, password: $0.2, group: $0.3) },
                                   peer: peer, dir: dir, video: media.video, audio: media.audio, seconds: o.seconds)
        print("load: \(o.seconds) s of media per call, \(LoadBenchMedia.width)x\(LoadBenchMedia.height)@\(LoadBenchMedia.fps) VP8 "
            + "\(LoadBenchMedia.kbps) kbit/s + Opus both ways passed through, no decoding, no recording; calls started \(Int(o.searchRamp)) a second; "
            + "router \(router), STUN \(stun), \(ProcessInfo.processInfo.activeProcessorCount) cores")

        // The direct search.
        var direct: [Int: LoadPairResult] = [:]
        let best = try search(setup, o, relay: false, results: &direct)
        guard let n = best, let atN = direct[n] else {
            print("load: no size passed (the smallest: \(direct.keys.min().map { "N = \($0): \(direct[$0]?.problem ?? "-")" } ?? "none run"))")
            return
        }
        let half = max(1, n / 2)
        if direct[half] == nil, half < n { direct[half] = try measure(setup, calls: half, ramp: o.searchRamp, relay: false) }
        if direct[10] == nil, n > 10 { direct[10] = try measure(setup, calls: 10, ramp: o.searchRamp, relay: false) }

        var single: PairsResult?, aiortc: PairsResult?
        if !o.skip.contains("compare") {
            let pairs = max(1, n / 10)
            single = try LoadBenchRuns.peerPairs(setup, pairs: pairs)
            print(String(format: "load: %d single-call peer pairs: %@, CPU %.4f s per call per media s, %.1f MB RSS per process, %d threads, %.3f %% arrived",
                         pairs, single?.ok == true ? "passed" : "did NOT pass", single?.cpuPerCallPerMediaSecond ?? .nan,
                         (single?.rssPerProcess ?? 0) / 1e6, single?.threadsPerProcess ?? 0, (single?.delivered ?? 0) * 100))
            var k = 1
            while k <= n {
                let r = try LoadBenchRuns.aiortcPairs(setup, pairs: k)
                print(String(format: "load: %d aiortc pairs: %@, CPU %.4f s per call per media s, %.1f MB RSS per process, %d threads, %.2f %% of frames arrived",
                             k, r.ok ? "passed" : "did NOT pass", r.cpuPerCallPerMediaSecond, r.rssPerProcess / 1e6, r.threadsPerProcess, r.delivered * 100))
                guard r.ok else { break }
                aiortc = r
                k *= 2
            }
        }
        report(direct: direct, n: n, at: atN, single: single, aiortc: aiortc)

        if !o.skip.contains("relay") {
            if setup.turn == nil {
                print("relay: skipped: no TURN server in PEER_TEST_SERVICES")
            } else {
                var relayed: [Int: LoadPairResult] = [:]
                var relayOptions = o
                relayOptions.maximum = min(o.maximum, n)
                relayOptions.sizes = o.sizes?.filter { $0 <= n }
                let best = try search(setup, relayOptions, relay: true, results: &relayed)
                reportRelay(relayed, best: best)
            }
        }
        if !o.skip.contains("ramp") {
            let r = try measure(setup, calls: o.rampCalls, ramp: o.rampRate, relay: false, seconds: min(o.seconds, 20), label: "ramp")
            let p95 = r.setup("connected", "p95")
            print(String(format: "ramp: %d calls at %.0f a second (%d s each): %@; offer published → connected p50 %@, p95 %@, p99 %@ ms "
                         + "(target: p95 < 250 ms, no call fails: %@)", o.rampCalls, o.rampRate, min(o.seconds, 20),
                         r.passed ? "every call passed" : "NOT every call passed (\(r.problem))",
                         fmt(r.setup("connected", "p50")), fmt(p95), fmt(r.setup("connected", "p99")),
                         met(r.passed && (p95 ?? .infinity) < 250)))
        }
    }

    /// Measures `--sizes`, or searches: N doubling from 10 while it passes (to
    /// `maximum`), then the gap to the first failure halved twice. Returns the largest N
    /// that passed.
    static func search(_ s: LoadBenchSetup, _ o: Options, relay: Bool, results: inout [Int: LoadPairResult]) throws -> Int? {
        var best: Int?, failed: Int?
        if let sizes = o.sizes {
            for n in sizes {
                let r = try measure(s, calls: n, ramp: o.searchRamp, relay: relay)
                results[n] = r
                if r.ok { best = max(best ?? 0, n) }
            }
            return best
        }
        var n = min(10, o.maximum)
        while n <= o.maximum {
            let r = try measure(s, calls: n, ramp: o.searchRamp, relay: relay)
            results[n] = r
            guard r.ok else { failed = n; break }
            best = n
            if n == o.maximum { break }
            n = min(n * 2, o.maximum)
        }
        for _ in 0..<2 {
            guard let lo = best, let hi = failed, hi - lo > max(2, lo / 10) else { break }
            let mid = (lo + hi) / 2
            let r = try measure(s, calls: mid, ramp: o.searchRamp, relay: relay)
            results[mid] = r
            if r.ok { best = mid } else { failed = mid }
        }
        return best
    }

    /// One pair of `peer load` processes at `calls`, and its line.
    static func measure(_ s: LoadBenchSetup, calls: Int, ramp: Double, relay: Bool, seconds: Int? = nil, label: String? = nil) throws -> LoadPairResult {
        let r = try LoadBenchRuns.loadPair(s, calls: calls, ramp: ramp, relay: relay, seconds: seconds)
        var line = String(format: "%@: N = %d: %@; CPU %.4f s per call per media s (steady %@), RSS %.1f + %.1f MB, threads %d + %d, "
                          + "open files %d + %d, %.3f %% of RTP packets arrived (%.3f %% of those sent, the calls' ends included), set-up p95 %@ ms",
                          label ?? (relay ? "relay" : "load"), calls, r.ok ? "passed" : "did NOT pass: \(r.problem)", r.cpuPerCallPerMediaSecond,
                          fmt(r.steadyCpuPerCallPerMediaSecond, "%.4f"), r.rss(r.offer) / 1e6, r.rss(r.answer) / 1e6,
                          r.threads(r.offer), r.threads(r.answer), r.openFiles(r.offer), r.openFiles(r.answer), r.delivered * 100, r.receivedOfSent * 100,
                          fmt(r.setup("connected", "p95")))
        if let coturn = r.coturnCpuSeconds {
            line += String(format: "; coturn %.4f CPU s per call per media s", coturn / Double(calls * r.seconds))
        }
        print(line)
        return r
    }

    // MARK: Printing

    static func report(direct: [Int: LoadPairResult], n: Int, at: LoadPairResult, single: PairsResult?, aiortc: PairsResult?) {
        let half = max(1, n / 2)
        var perConnection: Double?
        if let h = direct[half], half < n {
            let added = Double(2 * (n - half))  // each process holds one connection per call
            perConnection = (at.rss(at.offer) + at.rss(at.answer) - h.rss(h.offer) - h.rss(h.answer)) / added
        }
        var descriptors: Double?
        if let h = direct[half], half < n {
            descriptors = Double(at.openFiles(at.offer) + at.openFiles(at.answer) - h.openFiles(h.offer) - h.openFiles(h.answer)) / Double(2 * (n - half))
        }
        let threads10 = direct[10].map { "\($0.threads($0.offer))" } ?? "-"
        print("load: largest N at which every call passed and ≥ 99.9 % of RTP packets arrived: N = \(n) (target ≥ 200: \(met(n >= 200)))")
        func row(_ figure: String, _ load: String, _ pairs: String, _ aio: String, _ target: String, _ mark: String) {
            print("  " + [figure.padding(toLength: 44, withPad: " ", startingAt: 0), load.padding(toLength: 22, withPad: " ", startingAt: 0),
                          pairs.padding(toLength: 22, withPad: " ", startingAt: 0), aio.padding(toLength: 20, withPad: " ", startingAt: 0),
                          target.padding(toLength: 24, withPad: " ", startingAt: 0), mark].joined(separator: " "))
        }
        row("figure", "peer load, N = \(n)", "\(single?.pairs ?? 0) single-call pairs", "\(aiortc?.pairs ?? 0) aiortc pairs", "target", "")
        let cpu = at.cpuPerCallPerMediaSecond
        row("CPU s per call per media s (both sides)", String(format: "%.4f (steady %@)", cpu, fmt(at.steadyCpuPerCallPerMediaSecond, "%.4f")),
            single.map { String(format: "%.4f", $0.cpuPerCallPerMediaSecond) } ?? "-",
            aiortc.map { String(format: "%.4f", $0.cpuPerCallPerMediaSecond) } ?? "-", "≤ 0.009", met(cpu <= 0.009))
        row("memory per additional connection, MB", perConnection.map { String(format: "%.2f (N/2 = %d)", $0 / 1e6, half) } ?? "-",
            single.map { String(format: "%.1f per process", $0.rssPerProcess / 1e6) } ?? "-",
            aiortc.map { String(format: "%.1f per process", $0.rssPerProcess / 1e6) } ?? "-", "≤ 1 MB",
            perConnection.map { met($0 <= 1e6) } ?? "-")
        row("threads per process: N = 10 → N = \(n)", "\(threads10) → \(at.threads(at.offer)) (answerer \(at.threads(at.answer)))",
            single.map { "\($0.threadsPerProcess) (1 connection)" } ?? "-", aiortc.map { "\($0.threadsPerProcess) (1 connection)" } ?? "-",
            "loops + a fixed few", direct[10].map { met(abs($0.threads($0.offer) - at.threads(at.offer)) <= 2) } ?? "-")
        row("descriptors per additional connection", descriptors.map { String(format: "%.1f", $0) } ?? "-", "-", "-", "", "")
        let ratios = [single.map { String(format: "CPU per call: peer load / single-call pairs %.2f×", cpu / $0.cpuPerCallPerMediaSecond) },
                      aiortc.map { String(format: "peer load / aiortc %.2f×", cpu / $0.cpuPerCallPerMediaSecond) },
                      perConnection.flatMap { pc in single.map { String(format: "memory per connection: peer load / single-call process %.3f×", pc / $0.rssPerProcess) } },
                      perConnection.flatMap { pc in aiortc.map { String(format: "/ aiortc process %.3f×", pc / $0.rssPerProcess) } }].compactMap { $0 }
        if !ratios.isEmpty { print("  ratios: " + ratios.joined(separator: "; ")) }
        print("  (single-call peer pairs record their IVF and Ogg, which peer load does not; aiortc decodes what it receives: it cannot not)")
    }

    static func reportRelay(_ results: [Int: LoadPairResult], best: Int?) {
        guard let n = best, let r = results[n] else {
            print("relay: no size passed through coturn (\(results.keys.min().map { "N = \($0): \(results[$0]?.problem ?? "-")" } ?? "none run"))")
            return
        }
        let coturn = r.coturnCpuSeconds.map { $0 / Double(n * r.seconds) }
        print(String(format: "relay: largest N through coturn (UDP, --ice-policy relay) = %d; CPU s per call per media s: peer %.4f (both processes), coturn %@ "
                     + "— the bottleneck is %@", n, r.cpuPerCallPerMediaSecond, fmt(coturn, "%.4f"),
                     (coturn ?? 0) > r.cpuPerCallPerMediaSecond ? "coturn" : "peer"))
    }

    static func fmt(_ x: Double?, _ format: String = "%.1f") -> String { x.map { String(format: format, $0) } ?? "-" }
    static func met(_ ok: Bool) -> String { ok ? "met" : "not met" }
}
