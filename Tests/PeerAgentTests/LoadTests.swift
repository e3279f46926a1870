// `peer load` end to end: an offering and an answering `peer load` process through the
// real router and STUN server — every call passes at a size CI affords, the summary's
// fields and the p95 set-up are there; and a router killed and restarted on its port
// mid-run: the calls keep their media, signaling resumes, the summary says what happened.
import Foundation
import Testing
import TestSupport

#if canImport(Glibc)
import Glibc
#endif

/// Runs `peer load` processes for one test in a private directory (``CallHarness``'s):
/// each writes its `--json` events to `DIR/NAME.jsonl`, stderr to `DIR/NAME.err`, its
/// summary to `DIR/NAME.summary.json` and its pid to `DIR/NAME.pid`.
struct LoadHarness: Sendable {
    let h: CallHarness
    /// The topic prefix pattern of the test (unique: tests never hear each other).
    let pattern: String

    init(_ label: String) {
        h = CallHarness("load-\(label)")
        pattern = h.prefix + ".{i}"
    }

    /// What one `peer load` process left.
    struct Run: Sendable {
        let name: String
        let status: Int32
        let events: String
        let stderr: String
        let summaryText: String

        /// The `--summary` file.
        var summary: [String: Any] { (try? JSONSerialization.jsonObject(with: Data(summaryText.utf8)) as? [String: Any]) ?? [:] }
        /// The events named `name`.
        func events(_ name: String) -> [[String: Any]] {
            events.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
                .filter { $0["event"] as? String == name }
        }
        /// The summary's per-call objects.
        var calls: [[String: Any]] { summary["perCall"] as? [[String: Any]] ?? [] }
        var log: String { "\(name) exit \(status)\n\(stderr.suffix(3000))\n\(summaryText.prefix(3000))" }
    }

    /// Runs `peer load ARGS --json --summary …` named `name` to its exit (killed after `timeout` s).
    func run(_ name: String, _ args: [String], timeout: Double = 120) async throws -> Run {
        let base = h.path(name)
        let script = #"echo $$ > "$0.pid"; exec "$@" > "$0.jsonl" 2> "$0.err""#
        let r = try await TestServices.run("/bin/sh", ["-c", script, base, CallHarness.peer, "load"] + args
                                           + ["--json", "--summary", base + ".summary.json"], timeout: timeout)
        return Run(name: name, status: r.status, events: (try? String(contentsOfFile: base + ".jsonl", encoding: .utf8)) ?? "",
                   stderr: ((try? String(contentsOfFile: base + ".err", encoding: .utf8)) ?? "") + r.stderr,
                   summaryText: (try? String(contentsOfFile: base + ".summary.json", encoding: .utf8)) ?? "")
    }

    /// Waits until `name` printed an event `match` takes.
    func waitFor(_ name: String, timeout: Double = 30, _ match: @escaping @Sendable ([String: Any]) -> Bool) async -> Bool {
        await h.waitFor(name, timeout: timeout, match)
    }
}

@Suite(.serialized) struct LoadTests {
    /// The options both processes share: router and STUN, host candidates on loopback, a
    /// small pattern (each call encodes its own today), no decoding.
    static func common(_ services: ServiceInfo, router: String? = nil, calls: Int, ramp: Double, duration: Double,
                       pattern: String) throws -> [String] {
        ["--router", try #require(router ?? services.router_url), "--stun", try #require(services.stun_url),
         "--local-address", "127.0.0.1", "--video", "pattern:160x120@15", "--no-decode", "--calls", String(calls),
         "--ramp", String(ramp), "--duration", String(duration), "--timeout", "20", "--prefix-pattern", pattern]
    }

    /// 10 calls ramped at 5 a second between an answering and an offering `peer load`
    /// process: every call passes on both sides, each call's figures are in the summary
    /// (code 0, packets both ways, ~15 frames a second), the p95 set-up (offer published
    /// → connected, → first frame) is there, the offerer's packets arrived, and (the
    /// offerer at -v) its log lines name their call.
    @Test func tenCallsRampedAtFiveASecondAllPass() async throws {
        try await CallSlots.with(peers: 6) {
            let services = try await TestServices.shared()
            let l = LoadHarness("ten")
            let args = try Self.common(services, calls: 10, ramp: 5, duration: 4, pattern: l.pattern)
            async let answerer = l.run("answerer", ["--role", "answer"] + args)
            // The answerer's first second: its first calls are subscribed.
            #expect(await l.waitFor("answerer") { $0["event"] as? String == "loadStatus" }, "the answerer did not start")
            async let offerer = l.run("offerer", ["--role", "offer", "-v"] + args)
            let runs = try await [answerer, offerer]
            let a = runs[0], o = runs[1]
            #expect(o.status == 0, "\(o.log)")
            #expect(a.status == 0, "\(a.log)")
            // -v: every line about a call names it before its component (ICE lines that
            // name an agent, DTLS, media, the call's own), here call 3's.
            let lines = o.stderr.split(separator: "\n")
            for component in ["ice", "dtls", "media", "peer"] {
                #expect(lines.contains { $0.contains(" load.3 \(component): ") }, "no \(component) line of load.3 in \(o.stderr.suffix(2000))")
            }
            let untagged = lines.filter { ($0.contains(" dtls: ") || $0.contains(" media: ") || $0.contains(" ice: Agent"))
                && !$0.contains(" load.") }
            #expect(untagged.isEmpty, "lines without their connection: \(untagged.prefix(5))")
            for run in [o, a] {
                let s = run.summary
                #expect(s["calls"] as? Int == 10 && s["passed"] as? Int == 10 && s["failed"] as? Int == 0 && s["exitCode"] as? Int == 0, "\(run.log)")
                #expect(run.calls.count == 10, "\(run.log)")
                for c in run.calls {
                    #expect(c["code"] as? Int == 0 && c["passed"] as? Bool == true, "\(c)")
                    #expect((c["packetsReceived"] as? Int ?? 0) > 200 && (c["packetsSent"] as? Int ?? 0) > 200, "\(c)")
                    #expect((c["framesReceived"] as? Int ?? 0) >= 40, "4 s at 15 fps: \(c)")
                    #expect(c["connectMs"] is Double && c["firstFrameMs"] is Double, "\(c)")
                }
                let aggregates = s["aggregates"] as? [String: Any] ?? [:]
                let setup = aggregates["setupMs"] as? [String: Any] ?? [:]
                for step in ["connected", "firstFrame"] {
                    let p = setup[step] as? [String: Any] ?? [:]
                    #expect(p["count"] as? Int == 10, "\(step): \(setup)")
                    let p95 = p["p95"] as? Double ?? -1
                    #expect(p95 > 0 && p95 < 10_000, "\(step) p95: \(setup)")
                    #expect((p["p50"] as? Double ?? .infinity) <= p95 && p95 <= (p["p99"] as? Double ?? -1), "\(setup)")
                }
                for figure in ["lossPercent", "jitterMs", "rttMs", "fps"] { #expect(aggregates[figure] is [String: Any], "\(figure): \(aggregates)") }
                let process = s["process"] as? [String: Any] ?? [:]
                #expect((process["maxThreads"] as? Int ?? 0) > 0 && (process["cpuSeconds"] as? Double ?? 0) > 0, "\(process)")
                let limits = s["limits"] as? [String: Any] ?? [:]
                #expect((limits["descriptorsNeeded"] as? Int ?? .max) <= (limits["descriptorLimit"] as? Int ?? 0), "\(limits)")
                #expect(s["iceTcp"] as? Bool == false, "ICE over TCP is off in load mode")
                #expect(run.events("callEnded").count == 10, "\(run.log)")
                #expect(run.events("loadStatus").count >= 3, "\(run.log)")
                #expect(run.events("exit").last?["code"] as? Int == 0, "\(run.log)")
            }
            // What the offerer sent, the answerer received: on loopback nothing is lost in the
            // streams (received ÷ received + lost, RFC 3550 A.3); of all that was sent, what
            // the calls' ends cut off (sent while the other side closed) is not received.
            let sent = (o.summary["packets"] as? [String: Any])?["sent"] as? Int ?? 0
            let received = (a.summary["packets"] as? [String: Any])?["received"] as? Int ?? 0
            let lost = (a.summary["packets"] as? [String: Any])?["lost"] as? Int ?? -1
            #expect(received > 0 && Double(received) / Double(received + lost) >= 0.99, "received \(received), lost \(lost)")
            #expect(sent > 0 && Double(received) >= 0.9 * Double(sent), "sent \(sent), received \(received)")
            print("load: p95 set-up (offerer) \(((o.summary["aggregates"] as? [String: Any])?["setupMs"]) ?? "-")")
            l.h.remove()
        }
    }

    /// The router is killed (SIGKILL) while the first of 4 calls (started 2 s apart) is in
    /// the call, and started again on its port: that call keeps its media through the
    /// outage (frames for its whole duration), the calls started during it subscribe once
    /// the session is back and connect through the new router (signaling resumed), every
    /// call passes, and both summaries count the disconnect and the reconnect.
    @Test func aRouterThatDropsMidRunLeavesTheCallsTheirMedia() async throws {
        try await CallSlots.with(peers: 6) {
            let services = try await TestServices.shared()
            let dir = TestServices.temporaryDirectory("load-router")
            defer {
                try? TestServices.stopBlocking(dir: dir)
                try? FileManager.default.removeItem(atPath: dir)
            }
            let router = try await TestServices.start(dir: dir, ["--only", "router"])
            let url = try #require(router.router_url), port = try #require(router.router_port), group = try #require(router.router_pid)
            let l = LoadHarness("router")
            let args = try Self.common(services, router: url, calls: 4, ramp: 0.5, duration: 10, pattern: l.pattern)
            async let answerer = l.run("answerer", ["--role", "answer"] + args)
            #expect(await l.waitFor("answerer") { $0["event"] as? String == "loadStatus" }, "the answerer did not start")
            async let offerer = l.run("offerer", ["--role", "offer"] + args)
            #expect(await l.waitFor("offerer") { ($0["event"] as? String == "loadStatus") && ($0["inCall"] as? Int ?? 0) >= 1 },
                    "the first call in the call before the kill")
            #expect(kill(-group, SIGKILL) == 0)
            try await TestServices.stop(dir: dir)  // reaps what is left of the killed router
            _ = try await TestServices.start(dir: dir, ["--only", "router", "--router-port", "\(port)"])
            let runs = try await [answerer, offerer]
            let a = runs[0], o = runs[1]
            #expect(o.status == 0, "\(o.log)")
            #expect(a.status == 0, "\(a.log)")
            for run in [o, a] {
                let r = run.summary["router"] as? [String: Any] ?? [:]
                #expect((r["disconnects"] as? Int ?? 0) >= 1 && (r["reconnects"] as? Int ?? 0) >= 1, "\(r)")
                let statuses = (r["events"] as? [[String: Any]] ?? []).compactMap { $0["status"] as? String }
                #expect(statuses.contains { $0.hasPrefix("disconnected") } && statuses.contains { $0.hasPrefix("reconnected") }, "\(statuses)")
                // Every call's subscriptions came back with the session.
                #expect(!statuses.contains { $0.hasPrefix("could not restore") }, "\(statuses)")
                #expect(run.events("router").contains { ($0["status"] as? String)?.hasPrefix("reconnected") == true }, "\(run.log)")
                #expect(run.calls.count == 4 && run.calls.allSatisfy { $0["code"] as? Int == 0 }, "\(run.log)")
                // The call up before the kill: media all along (10 s at 15 fps).
                for c in run.calls.prefix(1) {
                    #expect((c["framesReceived"] as? Int ?? 0) >= 120, "media kept through the outage: \(c)")
                }
            }
            // The calls started during the outage connected through the restarted router.
            let killedAt = (o.summary["router"] as? [String: Any]).flatMap { ($0["events"] as? [[String: Any]])?.first?["t"] as? Double } ?? 0
            let late = o.events("callEnded").filter { ($0["index"] as? Int ?? 0) >= 2 }
            #expect(killedAt > 0, "\(o.log)")
            #expect(late.count == 3 && late.allSatisfy { ($0["connectedT"] as? Double ?? 0) > killedAt }, "killed at \(killedAt): \(late)")
            l.h.remove()
        }
    }
}
