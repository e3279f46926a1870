// LoadBenchRuns: the runs `peer-bench load` measures — a pair of `peer load` processes at N calls (direct or relayed through coturn), N/10 single-call `peer` pairs, and aiortc pairs — each with its CPU, memory, threads and what arrived.
import Foundation

/// Where and with what the load benchmark runs.
struct LoadBenchSetup {
    let router: String, stun: String
    /// TURN over UDP (`--ice-policy relay`), its credentials and coturn's process group.
    let turn: (url: String, user: String, password: String, group: Int32)?
    let peer: String, dir: String
    let video: String, audio: String
    /// Media seconds per call.
    let seconds: Int
}

/// What one process used and left (``Spawned/Usage`` and, for `peer load`, its summary).
struct ProcessFigures {
    var usage: Spawned.Usage
    var summary: [String: Any] = [:]
    /// Threads and RSS (bytes) sampled from /proc in the middle of the run, and open files.
    var threads: Int?, rssBytes: Int?, openFiles: Int?
}

/// A pair of `peer load` processes at `calls` calls.
struct LoadPairResult {
    let calls: Int, relay: Bool
    let offer: ProcessFigures, answer: ProcessFigures
    let seconds: Int
    /// coturn's CPU seconds over the run (relay only).
    var coturnCpuSeconds: Double?

    /// Both processes exited 0 (every call passed on both sides).
    var passed: Bool { offer.usage.status == 0 && answer.usage.status == 0 }
    /// RTP packets that arrived ÷ those sent, the worse of the two directions: each
    /// receiver's packets received ÷ (received + lost), lost counted from the sequence
    /// numbers (RFC 3550 A.3) — what a call's end cuts off after its last packet (sent
    /// while the other side was closing) is not counted as lost; 0 when nothing came.
    var delivered: Double {
        func ratio(_ s: [String: Any]) -> Double {
            let p = s["packets"] as? [String: Any] ?? [:]
            let received = Double(p["received"] as? Int ?? 0), lost = Double(p["lost"] as? Int ?? 0)
            return received > 0 ? received / (received + lost) : 0
        }
        return min(ratio(offer.summary), ratio(answer.summary))
    }
    /// Packets received ÷ sent over both directions, the end's tail included.
    var receivedOfSent: Double {
        func packets(_ s: [String: Any], _ key: String) -> Double { Double((s["packets"] as? [String: Any])?[key] as? Int ?? 0) }
        return (packets(answer.summary, "received") + packets(offer.summary, "received"))
            / max(1, packets(offer.summary, "sent") + packets(answer.summary, "sent"))
    }
    /// Every call passed and ≥ 99.9 % of the RTP packets sent arrived.
    var ok: Bool { passed && delivered >= 0.999 }
    /// Both processes' CPU over the whole run ÷ (calls × media seconds).
    var cpuPerCallPerMediaSecond: Double { (offer.usage.cpuSeconds + answer.usage.cpuSeconds) / Double(calls * seconds) }
    /// The same while every call was in the call (the processes' `steady` figures, added).
    var steadyCpuPerCallPerMediaSecond: Double? {
        let figures = [offer, answer].compactMap { (($0.summary["process"] as? [String: Any])?["steady"] as? [String: Any])?["cpuPerCallPerMediaSecond"] as? Double }
        return figures.count == 2 ? figures.reduce(0, +) : nil
    }
    /// Resident memory of each process while every call was in the call (else its peak), bytes.
    func rss(_ p: ProcessFigures) -> Double {
        let steady = ((p.summary["process"] as? [String: Any])?["steady"] as? [String: Any])?["rssBytes"] as? Int ?? 0
        return Double(steady > 0 ? steady : p.usage.maxRSSKiB * 1024)
    }
    /// Threads and open files of each process in the call (steady, else the most seen).
    func threads(_ p: ProcessFigures) -> Int { steadyOrMax(p, "threads", "maxThreads") }
    func openFiles(_ p: ProcessFigures) -> Int { steadyOrMax(p, "openFiles", "maxOpenFiles") }
    private func steadyOrMax(_ p: ProcessFigures, _ steady: String, _ max: String) -> Int {
        let process = p.summary["process"] as? [String: Any] ?? [:]
        let s = (process["steady"] as? [String: Any])?[steady] as? Int ?? 0
        return s > 0 ? s : (process[max] as? Int ?? 0)
    }
    /// A percentile of the offerer's set-up step (`connected`, `firstFrame`), ms.
    func setup(_ step: String, _ p: String) -> Double? {
        (((offer.summary["aggregates"] as? [String: Any])?["setupMs"] as? [String: Any])?[step] as? [String: Any])?[p] as? Double
    }
    /// What did not pass, in a few words.
    var problem: String {
        if !passed {
            for (side, f) in [("offer", offer), ("answer", answer)] where f.usage.status != 0 {
                let failures = (f.summary["failures"] as? [String: [String: Any]])?.map { "\($0.value["count"] ?? 0)× exit \($0.key) (\($0.value["reason"] ?? "-"))" }
                return "\(side) exit \(f.usage.status)" + (failures.map { ": " + $0.sorted().joined(separator: "; ") } ?? "")
            }
        }
        return String(format: "%.3f %% of RTP packets arrived (< 99.9 %%)", delivered * 100)
    }
}

/// Several single-call processes side by side (`peer offer`/`answer` pairs, aiortc pairs).
struct PairsResult {
    let pairs: Int, seconds: Int
    let processes: [ProcessFigures]
    /// Every process exited 0 and ≥ 99.9 % of the RTP packets arrived (`peer`: received ÷
    /// received + lost), ≥ 99 % of the video frames sent (aiortc, which counts frames).
    var ok: Bool
    /// Received ÷ sent, the worst connection.
    var delivered: Double
    var cpuPerCallPerMediaSecond: Double { processes.reduce(0) { $0 + $1.usage.cpuSeconds } / Double(pairs * seconds) }
    /// Mean resident memory per process (one connection each), bytes: sampled mid-run, else the peak.
    var rssPerProcess: Double {
        processes.map { Double($0.rssBytes ?? $0.usage.maxRSSKiB * 1024) }.reduce(0, +) / Double(max(1, processes.count))
    }
    var threadsPerProcess: Int { processes.compactMap(\.threads).max() ?? 0 }
}

enum LoadBenchRuns {
    // MARK: peer load pairs

    /// An answering and an offering `peer load` process at `calls` calls, ramped at
    /// `ramp` a second, through the router (and coturn when `relay`), the files passed
    /// through, nothing decoded or recorded.
    static func loadPair(_ s: LoadBenchSetup, calls: Int, ramp: Double, relay: Bool, seconds: Int? = nil) throws -> LoadPairResult {
        let media = seconds ?? s.seconds
        let name = "load-\(relay ? "relay" : "direct")-\(calls)-\(Int(ramp))"
        var common = ["load", "--router", s.router, "--local-address", "127.0.0.1", "--calls", String(calls), "--ramp", String(ramp),
                      "--prefix-pattern", "bench.load.\(getpid()).\(name).{i}", "--video", "ivf:" + s.video, "--audio", "ogg:" + s.audio,
                      "--no-decode", "--record", "none", "--duration", String(media), "--timeout", "30", "--json"]
        if relay {
            guard let turn = s.turn else { throw CallBench.Failure(description: "no TURN server (PEER_TEST_SERVICES' turn_url)") }
            common += ["--ice-policy", "relay", "--turn", turn.url, "--turn-user", turn.user, "--turn-password", turn.password]
        } else {
            common += ["--stun", s.stun]
        }
        let before = relay ? s.turn.map { processGroupCPU($0.group) } : nil
        let answer = try Spawned(s.peer, common + ["--role", "answer", "--summary", "\(s.dir)/\(name)-a.summary.json"],
                                 stdoutPath: "\(s.dir)/\(name)-a.json", stderrPath: "\(s.dir)/\(name)-a.log")
        guard answer.waitForEvent(within: 30, { $0["event"] as? String == "loadStatus" }) else {
            _ = answer.wait()
            throw CallBench.Failure(description: "load \(calls): the answering peer load did not start (see \(s.dir)/\(name)-a.log)")
        }
        let offer = try Spawned(s.peer, common + ["--role", "offer", "--summary", "\(s.dir)/\(name)-o.summary.json"],
                                stdoutPath: "\(s.dir)/\(name)-o.json", stderrPath: "\(s.dir)/\(name)-o.log")
        let o = offer.wait(), a = answer.wait()
        var result = LoadPairResult(calls: calls, relay: relay,
                                    offer: ProcessFigures(usage: o, summary: readJSON("\(s.dir)/\(name)-o.summary.json")),
                                    answer: ProcessFigures(usage: a, summary: readJSON("\(s.dir)/\(name)-a.summary.json")), seconds: media)
        if let before, let group = s.turn?.group { result.coturnCpuSeconds = processGroupCPU(group) - before }
        return result
    }

    // MARK: single-call pairs

    /// `pairs` `peer answer` + `peer offer` pairs at once, the same media, `--no-decode`
    /// (single-call `peer` always records: its IVF and Ogg go to the bench's directory).
    static func peerPairs(_ s: LoadBenchSetup, pairs: Int) throws -> PairsResult {
        var answers: [Spawned] = [], offers: [Spawned] = []
        for i in 0..<pairs {
            let name = "single-\(pairs)-\(i)"
            let common = ["--router", s.router, "--stun", s.stun, "--local-address", "127.0.0.1", "--prefix", "bench.single.\(getpid()).\(name)",
                          "--video", "ivf:" + s.video, "--audio", "ogg:" + s.audio, "--no-decode", "--duration", String(s.seconds),
                          "--timeout", "30", "--json"]
            answers.append(try Spawned(s.peer, ["answer"] + common + ["--video-out", "\(s.dir)/\(name)-a.ivf", "--audio-out", "\(s.dir)/\(name)-a.ogg"],
                                       stdoutPath: "\(s.dir)/\(name)-a.json", stderrPath: "\(s.dir)/\(name)-a.log"))
        }
        for (i, a) in answers.enumerated() where !a.waitForEvent(within: 30, { $0["event"] as? String == "state" && $0["state"] as? String == "ringing" }) {
            throw CallBench.Failure(description: "single pair \(i): the answerer did not subscribe")
        }
        for i in 0..<pairs {
            let name = "single-\(pairs)-\(i)"
            let common = ["--router", s.router, "--stun", s.stun, "--local-address", "127.0.0.1", "--prefix", "bench.single.\(getpid()).\(name)",
                          "--video", "ivf:" + s.video, "--audio", "ogg:" + s.audio, "--no-decode", "--duration", String(s.seconds),
                          "--timeout", "30", "--json"]
            offers.append(try Spawned(s.peer, ["offer"] + common + ["--video-out", "\(s.dir)/\(name)-o.ivf", "--audio-out", "\(s.dir)/\(name)-o.ogg"],
                                      stdoutPath: "\(s.dir)/\(name)-o.json", stderrPath: "\(s.dir)/\(name)-o.log"))
        }
        let all = offers + answers
        let figures = figuresMidRun(all, after: Double(s.seconds) / 2 + 1)
        // Packets: each process's final stats, received ÷ (received + lost), as peer load's.
        var worst = 1.0
        for p in all {
            let c = packetCounts(p.events())
            worst = min(worst, c.received > 0 ? c.received / (c.received + c.lost) : 0)
        }
        return PairsResult(pairs: pairs, seconds: s.seconds, processes: figures,
                           ok: figures.allSatisfy { $0.usage.status == 0 } && worst >= 0.999, delivered: worst)
    }

    /// `pairs` aiortc pairs at once (Tests/PeerAgentTests/Support/aiortc_wamp_peer.py in its
    /// venv): the same IVF and Ogg passed through (MediaPlayer, decode=False); aiortc decodes
    /// what it receives (it has no way not to).
    static func aiortcPairs(_ s: LoadBenchSetup, pairs: Int) throws -> PairsResult {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let script = root.appendingPathComponent("Tests/PeerAgentTests/Support/aiortc_wamp_peer.py").path
        let tools = ProcessInfo.processInfo.environment["PEER_TOOLS"] ?? (NSHomeDirectory() + "/.cache/peer/venv")
        let python = tools + "-peers/bin/python"
        var answers: [Spawned] = [], offers: [Spawned] = []
        func args(_ i: Int) -> [String] {
            [script, "--router", s.router, "--prefix", "bench.aiortc.\(getpid()).\(pairs).\(i)", "--play-video", s.video, "--play-audio", s.audio,
             "--duration", String(s.seconds), "--timeout", "30", "--no-audio-analysis"]
        }
        for i in 0..<pairs {
            answers.append(try Spawned(python, args(i) + ["--role", "answer"], stdoutPath: "\(s.dir)/aiortc-\(pairs)-\(i)-a.json",
                                       stderrPath: "\(s.dir)/aiortc-\(pairs)-\(i)-a.log"))
        }
        for (i, a) in answers.enumerated() where !a.waitForEvent(within: 60, { $0["event"] as? String == "ready" }) {
            throw CallBench.Failure(description: "aiortc pair \(i): the answerer did not subscribe (see \(s.dir)/aiortc-\(pairs)-\(i)-a.log)")
        }
        for i in 0..<pairs {
            offers.append(try Spawned(python, args(i) + ["--role", "offer"], stdoutPath: "\(s.dir)/aiortc-\(pairs)-\(i)-o.json",
                                      stderrPath: "\(s.dir)/aiortc-\(pairs)-\(i)-o.log"))
        }
        let all = offers + answers
        let figures = figuresMidRun(all, after: Double(s.seconds) / 2 + 2)
        var worst = 1.0
        for i in 0..<pairs {
            let o = aiortcFrames(offers[i].events()), a = aiortcFrames(answers[i].events())
            worst = min(worst, a.received / max(1, o.sent), o.received / max(1, a.sent))
        }
        // aiortc counts frames, not packets, and stops counting 0.5 s after its senders
        // stop: ≥ 99 % of the frames sent.
        return PairsResult(pairs: pairs, seconds: s.seconds, processes: figures,
                           ok: figures.allSatisfy { $0.usage.status == 0 } && worst >= 0.99, delivered: worst)
    }

    // MARK: /proc

    /// Each process's figures: threads, RSS and open files sampled `seconds` in
    /// (``sampleMidRun(_:after:)``), then its resource usage once it has exited.
    static func figuresMidRun(_ processes: [Spawned], after seconds: Double) -> [ProcessFigures] {
        let samples = sampleMidRun(processes, after: seconds)
        return zip(processes, samples).map { p, sample in
            var f = ProcessFigures(usage: p.wait())
            (f.threads, f.rssBytes, f.openFiles) = sample
            return f
        }
    }

    /// Sleeps `seconds`, then reads each process's threads, RSS and open files (the program
    /// `time` runs: the child of each ``Spawned``).
    static func sampleMidRun(_ processes: [Spawned], after seconds: Double) -> [(Int?, Int?, Int?)] {
        Thread.sleep(forTimeInterval: seconds)
        return processes.map { p in
            guard let child = childPid(of: p.pid) else { return (nil, nil, nil) }
            let status = (try? String(contentsOfFile: "/proc/\(child)/status", encoding: .utf8)) ?? ""
            func field(_ name: String) -> Int? {
                status.split(separator: "\n").first { $0.hasPrefix(name) }?.split(whereSeparator: { $0 == " " || $0 == "\t" }).dropFirst().first.flatMap { Int($0) }
            }
            let files = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(child)/fd"))?.count
            return (field("Threads:"), field("VmRSS:").map { $0 * 1024 }, files)
        }
    }

    /// The first child of `pid` (`/proc/*/stat`'s parent field).
    static func childPid(of pid: pid_t) -> pid_t? {
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let candidate = pid_t(entry), let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { continue }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            if fields.count > 1, pid_t(fields[1]) == pid { return candidate }
        }
        return nil
    }

    /// User + system CPU seconds of every process in process group `group` (coturn's).
    static func processGroupCPU(_ group: Int32) -> Double {
        let hz = Double(sysconf(Int32(_SC_CLK_TCK)))
        var total = 0.0
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] where Int32(entry) != nil {
            guard let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8), let close = stat.lastIndex(of: ")") else { continue }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            // After the name: state, ppid, pgrp (index 2) … utime (11), stime (12).
            guard fields.count > 12, Int32(fields[2]) == group, let u = Double(fields[11]), let s = Double(fields[12]) else { continue }
            total += (u + s) / hz
        }
        return total
    }

    // MARK: Outputs

    static func readJSON(_ path: String) -> [String: Any] {
        guard let data = FileManager.default.contents(atPath: path) else { return [:] }
        return (try? JSONSerialization.jsonObject(with: data) as? [String: Any]) ?? [:]
    }

    /// RTP packets a single-call `peer` received and lost (RFC 3550 A.3, never below 0),
    /// from its final `stats` event.
    static func packetCounts(_ events: [[String: Any]]) -> (received: Double, lost: Double) {
        var received = 0.0, lost = 0.0
        for e in events where e["event"] as? String == "stats" {
            let objects = ((e["report"] as? [String: Any])?["stats"] as? [String: Any])?.values.compactMap { $0 as? [String: Any] } ?? []
            for o in objects where o["type"] as? String == "inbound-rtp" {
                received += Double(o["packetsReceived"] as? Int ?? 0)
                lost += Double(max(0, o["packetsLost"] as? Int ?? 0))
            }
        }
        return (received, lost)
    }

    /// Video frames an aiortc peer sent and received, from its `result` line.
    static func aiortcFrames(_ events: [[String: Any]]) -> (sent: Double, received: Double) {
        guard let r = events.last(where: { $0["event"] as? String == "result" }) else { return (0, 0) }
        return (Double(r["videoFramesSent"] as? Int ?? 0), Double(r["videoFramesReceived"] as? Int ?? 0))
    }
}
