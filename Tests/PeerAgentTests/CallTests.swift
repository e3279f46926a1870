import Foundation
import Media
import Testing
import TestSupport

#if canImport(Glibc)
import Glibc
#endif

// Issue 9 acceptance: `peer offer|answer|room` as users run them — separate `peer`
// processes, the real Crossbar.io router and coturn STUN server of `scripts/services`,
// files checked with vpxdec, ffprobe and opusinfo.
//
// CPU: every call sends a 160x120 @ 15 fps pattern and a tone for 4 s, host candidates
// on 127.0.0.1 only (plus the STUN server's reflexive candidate, which on loopback is
// the same address). Every test uses its own topic prefix (and room), so the tests of
// this suite and of other suites share the router without hearing each other.

/// Limits how many `peer` processes the call tests run at once (both suites, which run
/// in parallel with each other and with the rest of `make test` on 2 cores).
///
/// Why: with every call test at once (~17 `peer` processes plus vpxdec/ffprobe), the
/// processes were starved for CPU long enough that the media pacer re-based its audio
/// schedule (stalls > 500 ms: audio fell to ~20 packets/s), DTLS took 700 ms, and the two
/// ends of a call ended ~0.3 s apart, which put the Ogg files off by more than 10 %.
/// Waiting is async (a continuation per waiter): no thread is blocked.
actor CallSlots {
    /// The slots of this test process: at most 6 `peer` processes at once. (4 made no
    /// difference to the CPU-bound PeerConnectionTests running beside them, which missed
    /// their frame counts either way, and made these suites take 49 s instead of 32 s.)
    static let shared = CallSlots(capacity: 6)

    private var free: Int
    private var waiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []

    init(capacity: Int) { free = capacity }

    private func acquire(_ count: Int) async {
        if waiters.isEmpty, free >= count {
            free -= count
            return
        }
        await withCheckedContinuation { waiters.append((count, $0)) }
    }

    private func release(_ count: Int) {
        free += count
        while let first = waiters.first, free >= first.count {  // first come, first served
            waiters.removeFirst()
            free -= first.count
            first.continuation.resume()
        }
    }

    /// Runs `body` holding `peers` slots (the number of `peer` processes it runs at once).
    static func with<T>(peers: Int, _ body: () async throws -> T) async throws -> T {
        await shared.acquire(peers)
        do {
            let result = try await body()
            await shared.release(peers)
            return result
        } catch {
            await shared.release(peers)
            throw error
        }
    }
}

/// One finished `peer` process of a call test.
struct PeerRun: Sendable {
    /// How the other processes of the call name this one in their events and file names:
    /// "offerer" / "answerer" (legacy profile) or its `--user` id (room profile).
    let name: String
    /// Exit status (negative: killed by that signal).
    let status: Int32
    /// The `--json` output: one event object per line.
    let stdout: String
    /// Human progress (kept for failure messages).
    let stderr: String
    /// Wall time of the `peer` process from spawn to exit, seconds.
    let wallSeconds: Double
    /// Seconds from asking for the process to its start, and from its exit to
    /// `TestServices.run` returning (how loaded the test process's spawning is).
    let spawnDelay: Double
    let reapDelay: Double

    /// The `--json` events in order (lines that are not JSON objects are skipped).
    var events: [[String: Any]] {
        stdout.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
    }

    /// The events named `name` (the `event` field).
    func events(_ name: String) -> [[String: Any]] { events.filter { $0["event"] as? String == name } }

    /// `t` (ms since process start) of the first event named `name` that matches `field == value`.
    func time(of name: String, _ field: String, _ value: String) -> Double? {
        events(name).first { $0[field] as? String == value }?["t"] as? Double
    }

    /// The final `stats` event about the connection with `peer`.
    func stats(about peer: String) -> [String: Any]? { events("stats").first { $0["peer"] as? String == peer } }

    /// The exit event's code (-1 when there is none).
    var exitEventCode: Int { events("exit").first?["code"] as? Int ?? -1 }

    /// The tail of stderr and the events, for failure messages.
    var log: String { "\(name) exit \(status)\n\(stderr.suffix(1500))\n\(stdout.suffix(3000))" }
}

/// Runs `peer` processes for one test in a private directory: each writes its `--json`
/// events to `DIR/NAME.jsonl` (so the test can watch them while it runs) and its pid
/// to `DIR/NAME.pid` (so the test can signal it). Recordings go to `DIR/NAME.ivf|.ogg`.
struct CallHarness: Sendable {
    /// The `peer` executable SwiftPM built next to the test bundle.
    static var peer: String {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("peer").path
    }

    /// The private directory of the test.
    let dir: String
    /// The topic prefix of the test (unique: tests running in parallel never hear each other).
    let prefix: String

    /// A fresh directory and prefix labelled `label`.
    init(_ label: String) {
        dir = TestServices.temporaryDirectory("call-\(label)")
        prefix = "test.\(label).\(UUID().uuidString.prefix(8).lowercased())"
    }

    /// Options every process of a call test shares: `router` (default: the services'
    /// anonymous URL), the services' STUN server, host candidates on loopback, a small
    /// pattern, `--duration` and `--timeout`, JSON events.
    static func common(_ services: ServiceInfo, router: String? = nil, duration: Double = 4, timeout: Double = 20,
                       stun: Bool = true) throws -> [String] {
        let url = try #require(router ?? services.router_url)
        var args = ["--router", url, "--local-address", "127.0.0.1", "--video", "pattern:160x120@15",
                    "--duration", String(duration), "--timeout", String(timeout), "--json"]
        if stun, let s = services.stun_url { args += ["--stun", s] }
        return args
    }

    /// Path of a file in the test's directory.
    func path(_ file: String) -> String { dir + "/" + file }

    /// Runs `peer SUBCOMMAND ARGS --prefix PREFIX --video-out DIR/NAME.ivf --audio-out DIR/NAME.ogg`
    /// (other extensions, so other formats, with `files`)
    /// to its exit (killed after `timeout` s) without blocking the cooperative pool.
    ///
    /// A `/bin/sh` writes the pid to `DIR/NAME.pid` and `exec`s `peer` (same pid, so
    /// signals go to `peer` itself), with stdout to `DIR/NAME.jsonl` and stderr to
    /// `DIR/NAME.err`. (The shell cannot wait for `peer` itself: it inherits the spawning
    /// thread's signal mask with SIGCHLD blocked, and its `wait` never returns.)
    ///
    /// Why files and not `TestServices.run`'s pipes: that helper reads the pipes with
    /// blocking reads on `DispatchQueue.global()`, whose threads Swift's cooperative
    /// executor shares here. A few long-lived processes then starve the whole pool
    /// (every test in the process) until libdispatch adds a thread, about once a
    /// second: measured stalls of 1–3 s with seven call tests at once. With the pipes
    /// closed at `exec`, those reads return at once.
    ///
    /// The wall time is measured from /proc (spawn: the process's start time; exit: when
    /// it turns zombie or disappears, polled every 10 ms), not around
    /// ``TestServices/run(_:_:environment:timeout:)``: with many processes spawned at
    /// once from this test process that returned up to seconds after `peer` had exited.
    func run(_ name: String, _ subcommand: String, _ args: [String], timeout: Double = 60,
             files: (video: String, audio: String) = ("ivf", "ogg")) async throws -> PeerRun {
        try await run(name, subcommand, args, timeout: timeout, script: #"echo $$ > "$0.pid"; exec "$@" > "$0.jsonl" 2> "$0.err""#, files: files)
    }

    /// ``run(_:_:_:timeout:)`` with standard input read from the fifo `input` (opened
    /// read-write, so opening it never waits for a writer).
    func runWithInput(_ name: String, _ subcommand: String, _ args: [String], input: String, timeout: Double = 60) async throws -> PeerRun {
        try await run(name, subcommand, args, timeout: timeout,
                      script: #"echo $$ > "$0.pid"; exec "$@" > "$0.jsonl" 2> "$0.err" <> '"# + input + "'")
    }

    /// ``run(_:_:_:timeout:)`` inside the network namespace `netns` (`ip netns exec`, which
    /// execs `peer` in the same process).
    func run(_ name: String, _ subcommand: String, _ args: [String], netns: String, timeout: Double = 60) async throws -> PeerRun {
        try await run(name, subcommand, args, timeout: timeout, script: #"echo $$ > "$0.pid"; exec "$@" > "$0.jsonl" 2> "$0.err""#,
                      command: ["/usr/sbin/ip", "netns", "exec", netns, Self.peer])
    }

    private func run(_ name: String, _ subcommand: String, _ args: [String], timeout: Double, script: String,
                     command: [String] = [CallHarness.peer], files: (video: String, audio: String) = ("ivf", "ogg")) async throws -> PeerRun {
        let base = path(name)
        let full = [subcommand] + args + ["--prefix", prefix, "--video-out", base + "." + files.video, "--audio-out", base + "." + files.audio]
        let asked = ProcessInfo.processInfo.systemUptime
        async let watched = Self.watchLifetime(pidFile: base + ".pid", timeout: timeout)
        let r = try await TestServices.run("/bin/sh", ["-c", script, base] + command + full, timeout: timeout)
        let returned = ProcessInfo.processInfo.systemUptime
        let life = await watched
        let out = (try? String(contentsOfFile: base + ".jsonl", encoding: .utf8)) ?? ""
        let err = (try? String(contentsOfFile: base + ".err", encoding: .utf8)) ?? ""
        return PeerRun(name: name, status: r.status, stdout: out, stderr: err + r.stderr,
                       wallSeconds: life.map { $0.exit - $0.start } ?? returned - asked,
                       spawnDelay: life.map { $0.start - asked } ?? 0, reapDelay: life.map { returned - $0.exit } ?? 0)
    }

    /// Start and exit (seconds since boot, like `ProcessInfo.systemUptime`) of the process
    /// whose pid `pidFile` will hold, from /proc/PID/stat (start time in clock ticks since
    /// boot, field 22; state, field 3); nil when it cannot be observed. Polls every 5 ms on
    /// a thread of its own (``TestServices/offload(_:)``), so a busy cooperative pool
    /// cannot delay the observation.
    static func watchLifetime(pidFile: String, timeout: Double) async -> (start: Double, exit: Double)? {
        let result = try? await TestServices.offload { () -> [Double]? in
            let deadline = Date().addingTimeInterval(timeout + 5)
            var pid: String?
            while pid == nil, Date() < deadline {
                if let text = try? String(contentsOfFile: pidFile, encoding: .utf8), text.hasSuffix("\n") {
                    pid = text.trimmingCharacters(in: .whitespacesAndNewlines)
                } else {
                    usleep(5_000)
                }
            }
            guard let pid else { return nil }
            /// (state, start time in seconds since boot) of the process, nil once it is gone.
            func stat() -> (state: Substring, start: Double)? {
                guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                      let close = text.lastIndex(of: ")") else { return nil }
                let fields = text[text.index(after: close)...].split(separator: " ")
                let hz = Double(sysconf(Int32(_SC_CLK_TCK)))
                guard fields.count > 19, let ticks = Double(fields[19]), hz > 0 else { return nil }
                return (fields[0], ticks / hz)
            }
            guard let first = stat() else { return nil }
            while Date() < deadline {
                guard let now = stat(), now.start == first.start, now.state != "Z" else {
                    return [first.start, ProcessInfo.processInfo.systemUptime]
                }
                usleep(5_000)
            }
            return nil
        }
        guard let times = result ?? nil, times.count == 2 else { return nil }
        return (times[0], times[1])
    }

    /// The events `name` has written so far.
    func liveEvents(_ name: String) -> [[String: Any]] {
        let text = (try? String(contentsOfFile: path(name + ".jsonl"), encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    /// Waits (polling every 50 ms, at most `timeout` s) until process `name` has written an
    /// event that satisfies `match`. Returns false on timeout. Polls on a thread of its own,
    /// so a busy cooperative pool cannot delay noticing the event.
    func waitFor(_ name: String, timeout: Double = 20, _ match: @escaping @Sendable ([String: Any]) -> Bool) async -> Bool {
        (try? await TestServices.offload { waitForBlocking(name, timeout: timeout, match) }) ?? false
    }

    /// ``waitFor(_:timeout:_:)`` blocking the calling thread (inside ``TestServices/offload(_:)``
    /// only, e.g. to act the moment the event appears).
    func waitForBlocking(_ name: String, timeout: Double = 20, _ match: ([String: Any]) -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if liveEvents(name).contains(where: match) { return true }
            usleep(50_000)
        }
        return false
    }

    /// True for the `state` event of `state`.
    static func isState(_ state: String) -> @Sendable ([String: Any]) -> Bool {
        { $0["event"] as? String == "state" && $0["state"] as? String == state }
    }

    /// Waits until `name` reports the call state `state` (e.g. "ringing": subscribed to the topics).
    func waitForState(_ name: String, _ state: String, timeout: Double = 20) async -> Bool {
        await waitFor(name, timeout: timeout, Self.isState(state))
    }

    /// The pid `name` runs as (from its pid file).
    func pid(_ name: String) throws -> pid_t {
        let text = try String(contentsOfFile: path(name + ".pid"), encoding: .utf8)
        return try #require(pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines)))
    }

    /// Removes the directory at the end of a test, unless PEER_KEEP_CALL_FILES is set
    /// (then it stays for inspection).
    func remove() {
        guard ProcessInfo.processInfo.environment["PEER_KEEP_CALL_FILES"] == nil else { return }
        try? FileManager.default.removeItem(atPath: dir)
    }
}

/// What one direction of a call delivered, from the files and both sides' stats.
struct MediaFigures: CustomStringConvertible {
    let from: String, to: String
    /// Video frames the sender sent to this receiver (its outbound-rtp `framesSent`).
    let framesSent: Int
    /// Frames in the receiver's IVF file (vpxdec `--summary`: decoded frames).
    let framesInFile: Int
    /// Audio packets the sender sent (outbound-rtp `packetsSent`, 20 ms each).
    let audioPacketsSent: Int
    /// Duration of the receiver's Ogg file (ffprobe), seconds.
    let oggSeconds: Double

    var description: String {
        "\(from) → \(to): \(framesInFile)/\(framesSent) frames (\(String(format: "%.1f", 100 * Double(framesInFile) / Double(max(1, framesSent)))) %), "
            + "ogg \(String(format: "%.3f", oggSeconds)) s for \(audioPacketsSent) packets sent (\(String(format: "%.2f", Double(audioPacketsSent) * 0.02)) s)"
    }
}

enum CallChecks {
    /// Runs `/usr/bin/NAME ARGS` to its exit, its output through files (see ``quiet(_:_:timeout:)``).
    /// Exit status and output of a program run by ``quiet(_:_:timeout:)``.
    struct Output: Sendable {
        let status: Int32
        let stdout: String
        let stderr: String
    }

    static func tool(_ name: String, _ args: [String]) async throws -> Output {
        try await quiet("/usr/bin/\(name)", args)
    }

    /// ``TestServices/run(_:_:environment:timeout:)`` with the program's stdout and stderr
    /// going to temporary files instead of that helper's pipes, whose blocking reads on
    /// `DispatchQueue.global()` stall Swift's cooperative pool while the program runs
    /// (see ``CallHarness/run(_:_:_:timeout:)``).
    static func quiet(_ executable: String, _ args: [String], timeout: Double = 120) async throws -> Output {
        let base = TestServices.temporaryDirectory("out") + "/run"
        defer { try? FileManager.default.removeItem(atPath: URL(fileURLWithPath: base).deletingLastPathComponent().path) }
        let r = try await TestServices.run("/bin/sh", ["-c", #"exec "$@" > "$0.out" 2> "$0.err""#, base, executable] + args,
                                           timeout: timeout)
        let out = (try? String(contentsOfFile: base + ".out", encoding: .utf8)) ?? ""
        let err = (try? String(contentsOfFile: base + ".err", encoding: .utf8)) ?? ""
        return Output(status: r.status, stdout: out, stderr: err + r.stderr)
    }

    /// The W3C stats object of `type` and `kind` in a `stats` event's report.
    static func statsObject(_ event: [String: Any], type: String, kind: String) -> [String: Any]? {
        let report = event["report"] as? [String: Any]
        let stats = report?["stats"] as? [String: [String: Any]]
        return stats?.values.first { $0["type"] as? String == type && $0["kind"] as? String == kind }
    }

    /// vpxdec `--md5 --i420 --summary` of `ivf`: exit 0 required; returns the decoded frame count.
    static func decodedFrames(_ ivf: String) async throws -> Int {
        let dec = try await tool("vpxdec", ["--md5", "--i420", "--summary", ivf])
        #expect(dec.status == 0, "vpxdec \(ivf): exit \(dec.status) \(dec.stderr)")
        // "63 decoded frames/63 showed frames in 16211 us (3886.25 fps)" on stderr.
        let summary = dec.stderr.split(separator: "\n").first { $0.contains("decoded frames") } ?? ""
        return try #require(Int(summary.split(separator: " ").first ?? ""), "vpxdec summary: \(dec.stderr)")
    }

    /// Writes an IVF file (VP80, 30/1 time base) of 30 inter frames and no key frame: a
    /// source that sends frames of which a receiver writes none (each waits for a key
    /// frame that never comes). A header alone would be refused before connecting.
    static func writeInterFramesOnly(to path: String) throws {
        var bytes = IVFHeader(width: 160, height: 120, timeBaseRate: 30, timeBaseScale: 1, frameCount: 30).bytes
        let inter: [UInt8] = [0x11, 0x00, 0x00, 0x00]  // frame tag: P (inter) 1, show_frame 1, first partition 0 bytes (RFC 6386 §9.1)
        for i in 0..<30 {
            bytes += [UInt8(inter.count), 0, 0, 0] + (0..<8).map { UInt8((i >> ($0 * 8)) & 0xFF) } + inter
        }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    /// ffprobe's duration of an Ogg file, seconds.
    static func oggSeconds(_ ogg: String) async throws -> Double {
        let probe = try await tool("ffprobe", ["-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", ogg])
        #expect(probe.status == 0, "ffprobe \(ogg): \(probe.stderr)")
        return try #require(Double(probe.stdout.trimmingCharacters(in: .whitespacesAndNewlines)), "ffprobe \(ogg): \(probe.stdout)")
    }

    /// Checks what `receiver` recorded from `sender` against what `sender` sent it:
    /// the IVF decodes (vpxdec exit 0) with ≥ 90 % of the sender's `framesSent` (and
    /// exactly the receiver's own `framesWritten`), and the Ogg lasts the sender's
    /// `packetsSent` × 20 ms within 10 %.
    ///
    /// Why packetsSent × 20 ms and not `--duration`: each side counts `--duration` from
    /// its own "established", and in a room a member ends its links when the first
    /// member's close arrives, so the windows of two sides differ by up to a few hundred
    /// ms. The sender's packet count is exactly the audio it put on the wire to this
    /// receiver during the call (one 20 ms Opus packet each), so it is the duration the
    /// receiver's file must have. At least a second of each must have been sent, so a
    /// call that sent nothing cannot pass. (Not a fraction of `--duration`: in a room of
    /// three on a loaded machine the last member may connect a second or more after the
    /// first, whose `--duration` then ends their link early.)
    @discardableResult
    static func media(from sender: PeerRun, to receiver: PeerRun, fps: Int = 15, label: String) async throws -> MediaFigures {
        let sent = try #require(sender.stats(about: receiver.name), "no stats event about \(receiver.name) in \(sender.log)")
        let got = try #require(receiver.stats(about: sender.name), "no stats event about \(sender.name) in \(receiver.log)")
        let outVideo = try #require(statsObject(sent, type: "outbound-rtp", kind: "video"))
        let outAudio = try #require(statsObject(sent, type: "outbound-rtp", kind: "audio"))
        let inVideo = try #require(statsObject(got, type: "inbound-rtp", kind: "video"))
        let framesSent = try #require(outVideo["framesSent"] as? Int)
        let packetsSent = try #require(outAudio["packetsSent"] as? Int)
        let ivf = try #require(got["video"] as? String)
        let ogg = try #require(got["audio"] as? String)

        let inFile = try await decodedFrames(ivf)
        let seconds = try await oggSeconds(ogg)
        let figures = MediaFigures(from: sender.name, to: receiver.name, framesSent: framesSent, framesInFile: inFile,
                                   audioPacketsSent: packetsSent, oggSeconds: seconds)
        print("call \(label): \(figures)")
        #expect(framesSent >= Int(fps), "at least a second of video: \(figures)")
        #expect(Double(inFile) >= 0.9 * Double(framesSent), "\(figures)")
        #expect(inFile <= framesSent, "\(figures)")
        #expect(inVideo["framesWritten"] as? Int == inFile, "receiver's framesWritten \(inVideo["framesWritten"] ?? "-") vs \(inFile) in \(ivf)")
        let expected = Double(packetsSent) * 0.020
        #expect(expected >= 1, "at least a second of audio: \(figures)")
        #expect(abs(seconds - expected) <= 0.1 * expected, "\(figures)")
        return figures
    }

    /// Every process exited 0 and said so in its exit event.
    static func exitedZero(_ runs: [PeerRun]) {
        for r in runs {
            #expect(r.status == 0, "\(r.log)")
            #expect(r.exitEventCode == 0, "\(r.log)")
        }
    }
}

/// The five call set-ups of the issue's first acceptance item.
@Suite struct CallTests {
    enum Setup: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case legacyVanilla, legacyTrickle, roomOfTwo, roomOfThree, craAuth
        var testDescription: String { rawValue }
    }

    static let duration = 4.0

    /// Each set-up: every process exits 0, every IVF decodes with ≥ 90 % of the frames
    /// the other side sent it, every Ogg lasts the other side's audio within 10 %.
    @Test(arguments: Setup.allCases)
    func callCompletesWithMediaBothWays(_ setup: Setup) async throws {
        // A call holds slots for its peer processes (see CallSlots).
        try await CallSlots.with(peers: setup == .roomOfThree ? 3 : 2) {
            let services = try await TestServices.shared()
            let h = CallHarness(setup.rawValue)
            var runs: [PeerRun] = []
            switch setup {
            case .legacyVanilla, .legacyTrickle, .craAuth:
                var args = try CallHarness.common(services, duration: Self.duration)
                if setup == .legacyVanilla { args.append("--vanilla") }
                if setup == .craAuth {
                    let url = try #require(services.router_cra_url)
                    let user = try #require(services.cra_user), secret = try #require(services.cra_secret)
                    args = try CallHarness.common(services, router: url, duration: Self.duration) + ["--auth", "cra:\(user):\(secret)"]
                }
                // The answerer subscribes first, so the offerer's first offer is answered.
                async let answerer = h.run("answerer", "answer", args)
                #expect(await h.waitForState("answerer", "ringing"), "answerer never subscribed: \(h.liveEvents("answerer"))")
                async let offerer = h.run("offerer", "offer", args)
                runs = try await [answerer, offerer]
                // Vanilla: every candidate inside the descriptions, none on the candidate topic.
                // Trickle: each side sends and receives candidates there.
                for r in runs {
                    let local = r.events("candidate").filter { $0["direction"] as? String == "local" }.count
                    let remote = r.events("candidate").filter { $0["direction"] as? String == "remote" }.count
                    if setup == .legacyVanilla {
                        #expect(local == 0 && remote == 0, "\(r.name): vanilla but \(local) local, \(remote) remote trickled candidates")
                    } else {
                        #expect(local >= 1 && remote >= 1, "\(r.name): trickle but \(local) local, \(remote) remote candidates")
                    }
                }
                if setup == .craAuth {
                    #expect(runs.allSatisfy { $0.time(of: "milestone", "name", "joined") != nil }, "joined through WAMP-CRA")
                }
            case .roomOfTwo, .roomOfThree:
                let room = "room-\(UUID().uuidString.prefix(6).lowercased())"
                let args = try CallHarness.common(services, duration: Self.duration) + ["--room", room]
                async let a = h.run("ua", "room", args + ["--user", "ua"])
                async let b = h.run("ub", "room", args + ["--user", "ub"])
                if setup == .roomOfThree {
                    async let c = h.run("uc", "room", args + ["--user", "uc"])
                    runs = try await [a, b, c]
                } else {
                    runs = try await [a, b]
                }
            }
            CallChecks.exitedZero(runs)
            // Every process records every other one.
            for receiver in runs {
                for sender in runs where sender.name != receiver.name {
                    let figures = try await CallChecks.media(from: sender, to: receiver, label: setup.rawValue)
                    // Legacy calls: the recording lasts the receiver's own media time, from its
                    // "established" state to its exit event, within 10 %.
                    if setup == .legacyVanilla || setup == .legacyTrickle || setup == .craAuth {
                        let established = try #require(receiver.time(of: "state", "state", "established"), "\(receiver.log)")
                        let exit = try #require(receiver.events("exit").first?["t"] as? Double, "\(receiver.log)")
                        let mediaTime = (exit - established) / 1000
                        print("call \(setup.rawValue): \(receiver.name) media time \(String(format: "%.3f", mediaTime)) s, ogg \(String(format: "%.3f", figures.oggSeconds)) s")
                        #expect(abs(figures.oggSeconds - mediaTime) <= 0.1 * mediaTime, "\(receiver.name): ogg \(figures.oggSeconds) s vs media time \(mediaTime) s")
                    }
                }
                if setup == .roomOfTwo || setup == .roomOfThree {
                    let files = receiver.events("stats").compactMap { $0["video"] as? String }.sorted()
                    let expected = runs.filter { $0.name != receiver.name }.map { h.path("\(receiver.name)-\($0.name).ivf") }.sorted()
                    #expect(files == expected, "room file names")
                }
            }
            h.remove()
        }
    }
}
