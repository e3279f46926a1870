// LoadCommand: `peer load` — N calls in one process on one router session: its command line read into a LoadPlan, the host's limits checked before the first call, the run, a status line and --json events each second, one event per call that ends, the summary, and the exit code.
import Bytes
import Dispatch
import EventLoop
import Foundation
import PeerAgent
import PeerCall
import Synchronization
import WampClient

/// What the command line of `peer load` asks for.
struct LoadCommandLine {
    /// The calls to run.
    var plan: LoadPlan
    /// `--json`: events on stdout.
    var json = false
    /// `--summary PATH`: the final summary as a JSON file.
    var summaryPath: String?
}

/// Parses `peer load`'s options into a ``LoadCommandLine``; exits 2 naming the option and
/// value on bad input (``LoadPlan/validate()``).
func parseLoadOptions(_ arguments: [String]) -> LoadCommandLine {
    var role: String?
    var calls: Int?
    var ramp = 10.0
    var prefixPattern: String?
    var roomPattern: String?
    var roomSize: Int?
    var recording = LoadPlan.Recording.none
    var outputDirectory = "."
    var json = false
    var summaryPath: String?
    var progress = isatty(2) == 1
    var o = CallOptions(role: .offer, router: "")
    o.peerConnection.tcpCandidates = false  // ICE over TCP off in load mode (--ice-tcp keeps it)
    var shared = CallOptionReader()
    var p = OptionParser(command: "load", arguments)
    while let option = p.next() {
        if shared.take(option, &p, into: &o) { continue }
        switch option {
        case "--role":
            let text = p.value()
            guard text == "offer" || text == "answer" else { p.refuse(text, expected: "offer or answer") }
            role = text
        case "--calls":
            let text = p.value()
            guard let n = Int(text), (1...LoadPlan.maximumCalls).contains(n) else {
                p.refuse(text, expected: "a number of calls in 1…\(LoadPlan.maximumCalls)")
            }
            calls = n
        case "--ramp":
            ramp = p.number(expected: "calls started a second, a number above 0 and at most 10000") { $0 > 0 && $0 <= 10_000 }
        case "--prefix-pattern": prefixPattern = p.value()
        case "--room-pattern": roomPattern = p.value()
        case "--room-size": roomSize = Int(p.number(expected: "members of this process per room, 1…1000") { (1...1_000).contains($0) && $0 == $0.rounded() })
        case "--prefix": o.prefix = p.value()
        case "--record":
            let text = p.value()
            guard let r = LoadPlan.Recording(rawValue: text) else { p.refuse(text, expected: "none, first or all") }
            recording = r
        case "--out-dir":
            let dir = p.value()
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: dir, isDirectory: &isDirectory), isDirectory.boolValue,
                  access(dir, W_OK) == 0 else { p.refuse(dir, expected: "a directory that can be written") }
            outputDirectory = dir
        case "--ice-tcp": o.peerConnection.tcpCandidates = true
        case "--json": json = true
        case "--progress": progress = true
        case "--summary": summaryPath = p.output()
        default: p.unknownOption()
        }
    }
    guard let calls else { p.fail("--calls N is required: how many calls this process runs, e.g. --calls 50") }
    let signaling: LoadPlan.SignalingMode
    if let roomPattern {
        if role != nil { p.fail("--role does not go with --room-pattern (room members both offer and answer)") }
        if prefixPattern != nil { p.fail("--prefix-pattern does not go with --room-pattern (rooms use --prefix)") }
        signaling = .rooms(roomPattern: roomPattern, roomSize: roomSize ?? 2)
    } else {
        guard let role else { p.fail("--role offer|answer is required (or --room-pattern for rooms)") }
        if roomSize != nil { p.fail("--room-size goes with --room-pattern") }
        signaling = .legacy(offers: role == "offer", prefixPattern: prefixPattern ?? LoadPlan.defaultPrefixPattern)
    }
    shared.finish(&o, p)
    var plan = LoadPlan(calls: calls, rampPerSecond: ramp, signaling: signaling, template: o)
    plan.recording = recording
    plan.outputDirectory = outputDirectory
    do { try plan.validate() } catch { p.fail("\(error)") }
    if progress { StatusLine.shared.enable() }
    return LoadCommandLine(plan: plan, json: json, summaryPath: summaryPath)
}

/// `peer load`: raises the descriptor limit, reads the command line, refuses a call count
/// this host cannot open (exit 2, the limit named), runs the calls and exits 0 when every
/// call passed (else the first failed call's code; 3 when the router cannot be joined;
/// 128 + the signal when interrupted).
func loadCommand(_ arguments: [String]) async -> Never {
    _ = processStart
    let raised = LoadLimits.raiseDescriptorLimit()
    let line = parseLoadOptions(arguments)
    let plan = line.plan
    let host = LoadLimits.host()
    let needs = LoadLimits.needs(plan, addresses: LoadLimits.localAddressCount(plan.template))
    do { try LoadLimits.check(needs, calls: plan.calls, host: host) } catch { fail("load: \(error)") }
    startLogging()
    let out = JSONEvents()
    let report = LoadReport(plan: plan, needs: needs, host: host, descriptorLimitBefore: raised.before)
    say("load: \(report.planText)")
    if line.json { out.emit(report.startEvent()) }

    let run = LoadRun(plan: plan, onJoined: { signaling in
        _ = signaling.listen { status in
            let text = routerText(status)
            say("load: router \(text)", level: .warn)
            if line.json { out.emit(["event": "router", "status": text]) }
        }
    }, onStatus: { status in
        report.sample(status)
        let text = LoadReport.statusText(status)
        if StatusLine.shared.isEnabled { StatusLine.shared.show(text) } else { say(text) }
        if line.json { out.emit(report.statusEvent(status)) }
    }, onCallEvent: { i, event in
        loadCallEvent(LoadPlan.tag(i), event)
    }, onCallEnded: { record in
        if !record.passed {
            say(record.tag, "exit \(record.exitCode ?? -1) (\(ExitCode.meaning(record.exitCode ?? -1))): \(record.reason ?? "-")", level: .warn)
        } else {
            say(record.tag, "passed", level: .debug)
        }
        if line.json { out.emit(LoadReport.callEvent(record)) }
    })
    // SIGINT/SIGTERM hang every call up (files closed), then exit 128 + the signal.
    let signalled = Mutex<Int32?>(nil)
    signal(SIGINT, SIG_IGN)
    signal(SIGTERM, SIG_IGN)
    var handlers: [DispatchSourceSignal] = []
    for sig in [SIGINT, SIGTERM] {
        let source = DispatchSource.makeSignalSource(signal: sig, queue: .global())
        source.setEventHandler {
            signalled.withLock { if $0 == nil { $0 = sig } }
            run.hangUp(interrupted: true)
        }
        source.resume()
        handlers.append(source)
    }
    let outcome = await run.run()
    _ = handlers
    let code = outcome.interrupted ? 128 + (signalled.withLock { $0 } ?? SIGINT) : outcome.exitCode
    let summary = report.summary(outcome, exitCode: code)
    if let path = line.summaryPath { report.write(summary, to: path) }
    StatusLine.shared.finish()
    say("load: " + LoadReport.endText(outcome, exitCode: code), level: code == 0 ? .info : .error)
    if line.json {
        out.emit(["event": "loadSummary", "summary": summary])
        out.emit(["event": "exit", "code": Int(code), "calls": plan.calls, "passed": outcome.status.passed,
                  "reason": code == 0 ? NSNull() : LoadReport.endText(outcome, exitCode: code) as Any])
    }
    exit(code)
}

/// A line for a status of the shared router session.
func routerText(_ status: WampStatus) -> String {
    switch status {
    case let .disconnected(reason): return "disconnected: \(reason)"
    case let .reconnected(id): return "reconnected (session \(id))"
    case let .reconnectFailed(attempt, error): return "reconnect attempt \(attempt) failed: \(error)"
    case let .restoreFailed(uri, error): return "could not restore \(uri): \(error)"
    case let .goodbye(reason, message, reconnectInMs):
        let said = "router said goodbye: \(reason)" + (message.map { " (\($0))" } ?? "")
        return reconnectInMs.map { "\(said); reconnecting in \(Int($0)) ms" } ?? "\(said); not reconnecting"
    case let .closed(reason): return "closed: \(reason)"
    }
}

/// ``say(_:level:)`` about call `tag`: `peer: load.17: …`, and from `debug` on a timed log
/// line with the tag before the component, as the call's ICE, DTLS and media lines have it
/// (`12.345 load.17 peer: …`).
func say(_ tag: String, _ line: String, level: LogLevel = .info) {
    guard Log.enabled(level) else { return }
    if Log.enabled(.debug) { return Log.write(level, "peer", tag: tag, line) }
    say("\(tag): \(line)", level: level)
}

/// What `peer load` says of one call's events on stderr, each line tagged with the call
/// (`load.17: …`): what goes wrong at info, states and set-up steps at debug. The router's
/// changes are said once, by the shared session's listener, not once per call.
func loadCallEvent(_ tag: String, _ event: CallEvent) {
    switch event {
    case let .state(s, peer, reason):
        say(tag, "\(peer.map { "\($0): " } ?? "")\(s.rawValue)\(reason.map { " (\($0))" } ?? "")", level: s == .failed ? .warn : .debug)
    case let .signalingError(topic, reason):
        say(tag, "dropped a message on \(Untrusted.quoted(topic)): \(Untrusted.quoted(reason, limit: 400))")
    case let .connectionState(peer, state, _) where state == "disconnected":
        say(tag, "\(peer): connection disconnected (no packets from the peer)")
    case let .candidateDropped(peer, candidate, reason):
        say(tag, "\(peer): dropped remote candidate \"\(Untrusted.quoted(candidate))\": \(Untrusted.quoted(reason))", level: .debug)
    case let .iceRestarting(peer, reason):
        say(tag, "\(peer): \(reason): restarting ICE")
    case let .iceRecovered(peer, seconds, restarted):
        say(tag, "\(peer): ICE connected again after \(String(format: "%.1f", seconds)) s\(restarted ? " (our ICE restart)" : "")")
    case let .busy(from, reason):
        say(tag, "declined \(Untrusted.quoted(from)): \(Untrusted.quoted(reason))")
    case let .milestone(name, peer, _):
        say(tag, "\(peer.map { "\($0): " } ?? "")\(name)", level: .debug)
    case let .stats(peer, report, _, _):
        if let t = report.transports.first, t.drops.contains(where: { $0.count > 0 }) {
            say(tag, "\(peer): dropped on arrival: " + t.drops.filter { $0.count > 0 }.map { "\($0.field) \($0.count)" }.joined(separator: ", "),
                level: .warn)
        }
    default:
        break
    }
}
