// LoadReport: what `peer load` prints — the plan and its limits at the start, the status line and `loadStatus` event each second, a `callEnded` event per call, and the final summary (the `loadSummary` event and the --summary file) with the process's CPU, memory, threads and descriptors.
import Foundation
import PeerAgent
import PeerCall
import Synchronization
import WampClient

/// The figures and texts of one `peer load` run. Thread-safe: the process samples taken
/// each second are behind one `Mutex`.
final class LoadReport: Sendable {
    let plan: LoadPlan
    let needs: LoadLimits.Needs
    let host: LoadLimits.Host
    /// RLIMIT_NOFILE's soft limit before the run raised it.
    let descriptorLimitBefore: Int

    /// The process at each second's status (``sample(_:)``).
    private struct Samples {
        var maxRss = 0, maxThreads = 0, maxOpenFiles = 0
        /// While every started call was in the call and none had ended (steady state):
        /// CPU seconds and call-seconds of media, the largest RSS and thread count then.
        var steadyCpu = 0.0, steadyCallSeconds = 0.0, steadySeconds = 0.0, steadyRss = 0, steadyThreads = 0, steadyOpenFiles = 0
        var last: (cpu: Double, at: Double, steady: Bool, inCall: Int)?
    }
    private let samples = Mutex(Samples())

    init(plan: LoadPlan, needs: LoadLimits.Needs, host: LoadLimits.Host, descriptorLimitBefore: Int) {
        self.plan = plan
        self.needs = needs
        self.host = host
        self.descriptorLimitBefore = descriptorLimitBefore
    }

    /// This process's user + system CPU time, seconds (getrusage).
    static func cpuSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
            + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
    }

    /// The peak resident set size so far (`VmHWM`), bytes.
    static func peakRss() -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
              let line = text.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
              let kb = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).dropFirst().first.flatMap({ Int($0) }) else { return nil }
        return kb * 1024
    }

    /// Takes the process's figures at `status` (each second).
    func sample(_ status: LoadStatus) {
        let r = ProcessResources.now()
        let cpu = Self.cpuSeconds(), now = ProcessInfo.processInfo.systemUptime
        let steady = status.started == status.calls && status.ended == 0 && status.inCall == status.calls
        samples.withLock { s in
            s.maxRss = max(s.maxRss, r.rssBytes ?? 0)
            s.maxThreads = max(s.maxThreads, r.threads ?? 0)
            s.maxOpenFiles = max(s.maxOpenFiles, r.openFiles ?? 0)
            if let last = s.last, last.steady, steady {
                s.steadyCpu += cpu - last.cpu
                s.steadyCallSeconds += Double(status.inCall) * (now - last.at)
                s.steadySeconds += now - last.at
            }
            if steady {
                s.steadyRss = max(s.steadyRss, r.rssBytes ?? 0)
                s.steadyThreads = max(s.steadyThreads, r.threads ?? 0)
                s.steadyOpenFiles = max(s.steadyOpenFiles, r.openFiles ?? 0)
            }
            s.last = (cpu, now, steady, status.inCall)
        }
    }

    // MARK: Texts

    /// `40 calls as offerer, 10 a second, prefixes load.{i}, …; limits: …`
    var planText: String {
        let who: String
        switch plan.signaling {
        case let .legacy(offers, pattern): who = "as \(offers ? "offerer" : "answerer") on prefixes \(pattern)"
        case let .rooms(pattern, size): who = "as room members, \(size) a room, rooms \(pattern)"
        }
        return "\(plan.calls) calls \(who), \(formatNumber(plan.rampPerSecond)) started a second, \(formatNumber(plan.template.durationSeconds)) s each; "
            + "video \(plan.template.video), audio \(plan.template.audio), \(plan.template.decode ? "decoding" : "no decoding"), record \(plan.recording.rawValue); "
            + "ICE over TCP \(plan.template.peerConnection.tcpCandidates ? "on" : "off"); needs about \(needs.descriptors) of \(host.descriptorLimit) "
            + "file descriptors (RLIMIT_NOFILE raised from \(descriptorLimitBefore)), \(needs.udpPorts) UDP ports of \(host.ephemeralPorts.count)"
    }

    /// The status line: `load 12 s · 40 calls: 38 in call, 2 ended (2 passed, 0 failed) · set-up p50/p95/p99 …`
    static func statusText(_ s: LoadStatus) -> String {
        func ms(_ p: Percentiles?) -> String { p.map { "\(Int($0.p50.rounded()))/\(Int($0.p95.rounded()))/\(Int($0.p99.rounded())) ms" } ?? "-" }
        var parts = ["load \(Int(s.elapsed.rounded())) s",
                     "\(s.calls) calls: \(s.started - s.ended - s.inCall) setting up, \(s.inCall) in call, \(s.ended) ended (\(s.passed) passed, \(s.failed) failed)",
                     "set-up p50/p95/p99 connected \(ms(s.connectMs)), first frame \(ms(s.firstFrameMs))"]
        if let loss = s.lossPercent { parts.append(String(format: "loss p95 %.2f %%", loss.p95)) }
        if let j = s.jitterMs { parts.append(String(format: "jitter p95 %.1f ms", j.p95)) }
        if let r = s.rttMs { parts.append(String(format: "RTT p50 %.1f ms", r.p50)) }
        if let f = s.fps { parts.append(String(format: "fps p50 %.1f", f.p50)) }
        parts.append("freezes \(s.freezes)")
        parts.append(String(format: "%.1f/%.1f Mbit/s in/out", s.kbpsIn / 1000, s.kbpsOut / 1000))
        parts.append(s.routerConnected ? "router up" : "router DOWN")
        return parts.joined(separator: " · ")
    }

    /// The last line: how many passed, and the first failure.
    static func endText(_ o: LoadOutcome, exitCode: Int32) -> String {
        if let error = o.routerError { return "\(error): no call started (exit \(exitCode))" }
        let failed = o.records.filter { !$0.passed }
        var text = "\(o.records.count) calls: \(o.status.passed) passed, \(failed.count) did not"
        if let first = failed.first {
            text += "; first: \(first.tag) exit \(first.exitCode ?? -1) (\(ExitCode.meaning(first.exitCode ?? -1))): \(first.reason ?? "-")"
        }
        if o.interrupted, failed.first?.exitCode != ExitCode.interrupted { text += "; interrupted" }
        return text + " (exit \(exitCode))"
    }

    // MARK: Events

    /// `loadStart`: the plan and what it needs of this host.
    func startEvent() -> [String: Any] {
        var e = planFields()
        e["event"] = "loadStart"
        e["limits"] = limitFields()
        return e
    }

    /// `loadStatus`, each second.
    func statusEvent(_ s: LoadStatus) -> [String: Any] {
        var e = Self.statusFields(s)
        e["event"] = "loadStatus"
        return e
    }

    /// `callEnded`: one call's verdict and figures.
    static func callEvent(_ r: LoadCallRecord) -> [String: Any] {
        var e = callFields(r)
        e["event"] = "callEnded"
        return e
    }

    static func statusFields(_ s: LoadStatus) -> [String: Any] {
        var e: [String: Any] = ["elapsedSeconds": round1(s.elapsed), "calls": s.calls, "started": s.started, "inCall": s.inCall,
                                "settingUp": s.started - s.ended - s.inCall, "ended": s.ended, "passed": s.passed, "failed": s.failed,
                                "freezes": s.freezes, "kbpsIn": round1(s.kbpsIn), "kbpsOut": round1(s.kbpsOut),
                                "router": s.routerConnected ? "connected" : "disconnected"]
        e["setupMs"] = ["connected": percentiles(s.connectMs), "firstFrame": percentiles(s.firstFrameMs)]
        e["lossPercent"] = percentiles(s.lossPercent, digits: 3)
        e["jitterMs"] = percentiles(s.jitterMs)
        e["rttMs"] = percentiles(s.rttMs)
        e["fps"] = percentiles(s.fps)
        return e
    }

    static func callFields(_ r: LoadCallRecord) -> [String: Any] {
        let t = r.totals
        return ["call": r.tag, "index": r.index, "signaling": r.signalingName, "code": Int(r.exitCode ?? -1),
                "meaning": ExitCode.meaning(r.exitCode ?? -1), "passed": r.passed, "state": r.endState?.rawValue ?? NSNull(),
                "reason": r.reason ?? NSNull(), "connectMs": r.connectMs.map(round1) ?? NSNull(),
                "firstFrameMs": r.firstFrameMs.map(round1) ?? NSNull(), "packetsSent": t.packetsSent, "packetsReceived": t.packetsReceived,
                "packetsLost": t.packetsLost, "lossPercent": (t.lossPercent * 1000).rounded() / 1000, "jitterMs": t.jitterMs.map(round1) ?? NSNull(),
                "rttMs": t.rttMs.map(round1) ?? NSNull(), "fps": t.framesPerSecond.map(round1) ?? NSNull(), "framesReceived": t.framesReceived,
                "freezes": t.freezeCount, "freezeSeconds": round1(t.freezeSeconds), "connections": r.final.count,
                "startT": r.startedAt.map(eventTime) ?? NSNull(), "connectedT": r.connectedAt.map(eventTime) ?? NSNull(),
                "endT": r.endedAt.map(eventTime) ?? NSNull()]
    }

    // MARK: Summary

    /// The final summary (`loadSummary` event, `--summary` file).
    func summary(_ o: LoadOutcome, exitCode: Int32) -> [String: Any] {
        var e = planFields()
        e["exitCode"] = Int(exitCode)
        e["passed"] = o.status.passed
        e["failed"] = o.records.count - o.status.passed
        e["interrupted"] = o.interrupted
        e["routerError"] = o.routerError ?? NSNull()
        e["wallSeconds"] = round1(o.endedAt - o.startedAt)
        e["deadlineSeconds"] = round1(o.deadlineSeconds)
        e["hungUpAtDeadline"] = o.hungUp.map(LoadPlan.tag)
        e["gaveUpOn"] = o.gaveUpOn.map(LoadPlan.tag)
        e["aggregates"] = Self.statusFields(o.status)
        let totals = o.records.map(\.totals)
        e["packets"] = ["sent": totals.reduce(0) { $0 + $1.packetsSent }, "received": totals.reduce(0) { $0 + $1.packetsReceived },
                        "lost": totals.reduce(0) { $0 + $1.packetsLost }]
        var failures: [String: [String: Any]] = [:]
        for r in o.records where !r.passed {
            let key = String(r.exitCode ?? -1)
            var f = failures[key] ?? ["count": 0, "meaning": ExitCode.meaning(r.exitCode ?? -1), "first": r.tag, "reason": r.reason ?? NSNull()]
            f["count"] = (f["count"] as? Int ?? 0) + 1
            failures[key] = f
        }
        e["failures"] = failures
        e["router"] = routerFields(o)
        e["limits"] = limitFields()
        e["process"] = processFields()
        e["perCall"] = o.records.map(Self.callFields)
        return e
    }

    /// Writes `summary` to `path` as JSON; a failure is said, not fatal (the run is over).
    func write(_ summary: [String: Any], to path: String) {
        guard let data = try? JSONSerialization.data(withJSONObject: summary, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]) else {
            say("load: cannot encode the summary")
            return
        }
        do { try data.write(to: URL(fileURLWithPath: path)) } catch { say("load: cannot write --summary \(path): \(error)", level: .error) }
    }

    private func planFields() -> [String: Any] {
        var e: [String: Any] = ["calls": plan.calls, "rampPerSecond": plan.rampPerSecond, "rampSeconds": round1(plan.rampSeconds),
                                "durationSeconds": plan.template.durationSeconds, "timeoutSeconds": plan.template.timeoutSeconds,
                                "video": plan.template.video.description, "audio": plan.template.audio.description,
                                "decode": plan.template.decode, "record": plan.recording.rawValue,
                                "iceTcp": plan.template.peerConnection.tcpCandidates, "icePolicy": plan.template.peerConnection.iceTransportPolicy.rawValue,
                                "routerUrl": plan.template.wamp.url, "connectionsPerCall": plan.connectionsPerCall]
        switch plan.signaling {
        case let .legacy(offers, pattern):
            e["role"] = offers ? "offer" : "answer"
            e["prefixPattern"] = pattern
        case let .rooms(pattern, size):
            e["role"] = "room"
            e["roomPattern"] = pattern
            e["roomSize"] = size
        }
        return e
    }

    private func limitFields() -> [String: Any] {
        ["descriptorLimit": host.descriptorLimit, "descriptorLimitBefore": descriptorLimitBefore, "descriptorsNeeded": needs.descriptors,
         "descriptorsPerConnection": needs.descriptorsPerConnection, "udpPortsNeeded": needs.udpPorts, "tcpPortsNeeded": needs.tcpPorts,
         "ephemeralPorts": "\(host.ephemeralPorts.lowerBound)-\(host.ephemeralPorts.upperBound)", "threadsNeeded": needs.threads,
         "threadLimit": host.threadLimit ?? NSNull(), "memoryNeededBytes": needs.memoryBytes, "memoryAvailableBytes": host.availableMemoryBytes ?? NSNull()]
    }

    private func processFields() -> [String: Any] {
        let now = ProcessResources.now()
        let s = samples.withLock { $0 }
        return ["cpuSeconds": (Self.cpuSeconds() * 1000).rounded() / 1000, "peakRssBytes": Self.peakRss() ?? NSNull(),
                "maxRssBytes": s.maxRss, "maxThreads": s.maxThreads, "maxOpenFiles": s.maxOpenFiles,
                "threadsAtEnd": now.threads ?? NSNull(), "openFilesAtEnd": now.openFiles ?? NSNull(),
                "steady": ["seconds": round1(s.steadySeconds), "cpuSeconds": (s.steadyCpu * 1000).rounded() / 1000,
                           "cpuPerCallPerMediaSecond": s.steadyCallSeconds > 0 ? (s.steadyCpu / s.steadyCallSeconds * 10_000).rounded() / 10_000 : NSNull(),
                           "rssBytes": s.steadyRss, "threads": s.steadyThreads, "openFiles": s.steadyOpenFiles]]
    }

    private func routerFields(_ o: LoadOutcome) -> [String: Any] {
        var downSince: Double?
        var down = 0.0, disconnects = 0, reconnects = 0
        for r in o.routerHistory {
            switch r.status {
            case .disconnected, .goodbye:
                disconnects += 1
                if downSince == nil { downSince = r.at }
            case .reconnected:
                reconnects += 1
                if let since = downSince { down += r.at - since }
                downSince = nil
            case .closed, .reconnectFailed, .restoreFailed: break
            }
        }
        if let since = downSince { down += o.endedAt - since }
        return ["disconnects": disconnects, "reconnects": reconnects, "downSeconds": round1(down),
                "events": o.routerHistory.map { ["t": eventTime($0.at), "status": routerText($0.status)] as [String: Any] }]
    }

    private static func percentiles(_ p: Percentiles?, digits: Double = 1) -> Any {
        guard let p else { return NSNull() }
        let scale = pow(10, digits)
        func r(_ x: Double) -> Double { (x * scale).rounded() / scale }
        return ["count": p.count, "p50": r(p.p50), "p95": r(p.p95), "p99": r(p.p99), "max": r(p.max)]
    }
}

private func round1(_ x: Double) -> Double { (x * 10).rounded() / 10 }
/// `at` (`systemUptime`, s) as the events' `t`: ms since the process started, to 0.1 ms.
private func eventTime(_ at: Double) -> Double { ((at - processStart) * 10_000).rounded() / 10 }
private func formatNumber(_ x: Double) -> String { x == x.rounded() ? String(Int(x)) : String(x) }
