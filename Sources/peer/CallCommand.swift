// CallCommand: `peer offer|answer|room` — its command line read into CallOptions, the --json events, and one call run.
import Bytes
import Dispatch
import EventLoop
import Foundation
import Synchronization
import ICE
import PeerAgent
import PeerCall
import WampClient

/// What the command line of `peer offer|answer|room` asks for.
struct CallCommandLine {
    /// The call's options.
    var options: CallOptions
    /// `--json`: one event per line on stdout.
    var json = false
    /// `--stats PATH`: where to write the final statistics.
    var statsPath: String?
    /// `--repeat N|forever`: how many calls to take one after another; nil for one call
    /// without numbering (the default), 0 for `forever`.
    var repeatCount: Int?
    /// `--control stdin`: one JSON command per line on standard input.
    var control = false
    /// `--report PATH`: the HTML report of the call's stats timeline, made at its end.
    var reportPath: String?
    /// The timeline is a temporary file of ours for `--report` (no `--stats-timeline`).
    var ownTimeline = false
}

/// Parses the options of `peer offer|answer|room` into a ``CallCommandLine``; exits 2
/// with a message naming the option and value on bad input.
func parseCallOptions(role: CallOptions.Role, _ arguments: [String]) -> CallCommandLine {
    var profile: String?
    var json = false
    var statsPath: String?
    var reportPath: String?
    var repeatCount: Int?
    var control = false
    var progress = isatty(2) == 1  // a terminal: the status line by default
    var o = CallOptions(role: role, router: "")
    var shared = CallOptionReader()
    var p = OptionParser(command: role.rawValue, arguments)
    while let option = p.next() {
        if shared.take(option, &p, into: &o) { continue }
        switch option {
        case "--profile":
            let text = p.value()
            guard text == "legacy" || text == "room" else { p.refuse(text, expected: "legacy or room") }
            profile = text
        case "--prefix": o.prefix = p.value()
        case "--room": o.room = p.value()
        case "--user":
            let text = p.value()
            guard !text.isEmpty, !text.contains(".") else { p.refuse(text, expected: "a non-empty id without dots") }
            o.user = text
        case "--video-out": o.videoOut = p.output()
        case "--audio-out": o.audioOut = p.output()
        case "--record":
            let path = p.output()
            guard ReceiveOptions.isMatroska(path), !path.lowercased().hasSuffix(".mka") else {
                p.refuse(path, expected: "a .mkv or .webm file (audio and video in one)")
            }
            o.recordOut = path
        case "--at":
            let text = p.value()
            do {
                if let send = try ScheduledSend(parsing: text) {
                    o.scheduledSends.append(send)
                } else {
                    o.scheduledActions.append(try ScheduledAction(parsing: text))
                }
            } catch { p.fail("\(error)") }
        case "--data-channel":
            do { o.dataChannels.append(try DataChannelSpec(parsing: p.value())) } catch { p.fail("\(error)") }
        case "--data-burst":
            do { o.dataBursts.append(try DataBurst(parsing: p.value())) } catch { p.fail("\(error)") }
        case "--data-out":
            let path = p.value()
            guard FileManager.default.createFile(atPath: path, contents: nil) else {
                p.refuse(path, expected: "a file that can be written")
            }
            o.dataOut = path
        case "--data-echo": o.dataEcho = true
        case "--min-messages": o.minMessages = Int(p.number(0...100_000_000))
        case "--control":
            let text = p.value()
            guard text == "stdin" else { p.refuse(text, expected: "stdin (one JSON command per line, e.g. {\"action\":\"hold\"})") }
            control = true
        case "--json": json = true
        case "--progress": progress = true
        case "--stats": statsPath = p.output()
        case "--stats-timeline": o.statsTimelinePath = p.output()
        case "--report": reportPath = p.output()
        case "--repeat":
            let text = p.value()
            if text == "forever" {
                repeatCount = 0
            } else {
                guard let n = Int(text), (1...10_000_000).contains(n) else {
                    p.refuse(text, expected: "a number of calls in 1…10000000 or forever")
                }
                repeatCount = n
            }
        default: p.unknownOption()
        }
    }
    if profile == "room" { o.role = .room }
    if repeatCount != nil, o.role == .room { p.fail("--repeat is for offer and answer (a room has no end between calls)") }
    if profile == "legacy", role == .room { p.fail("--profile legacy does not go with the room command (use offer or answer)") }
    shared.finish(&o, p)
    if progress { StatusLine.shared.enable() }
    if reportPath != nil, repeatCount != nil { p.fail("--report is for one call (with --repeat, --stats-timeline and peer report)") }
    let ownTimeline = reportPath != nil && o.statsTimelinePath == nil
    if ownTimeline {  // the report needs a timeline: a file of our own
        o.statsTimelinePath = FileManager.default.temporaryDirectory.appendingPathComponent("peer-timeline-\(getpid()).jsonl").path
    }
    return CallCommandLine(options: o, json: json, statsPath: statsPath, repeatCount: repeatCount, control: control, reportPath: reportPath,
                           ownTimeline: ownTimeline)
}

/// One JSON event per line on stdout (`--json`), flushed at once.
/// Every event carries `t`: milliseconds since the process started (monotonic clock, to
/// 0.1 ms),
/// and with `--repeat` also `call`: the number of the call it belongs to (from 1).
final class JSONEvents: Sendable {
    /// The `call` number added to the events (nil: none); held while a line is written, so
    /// lines from several threads never interleave.
    private let call = Mutex<Int?>(nil)
    /// Sets the `call` number added to the events from now on (nil: none).
    func setCall(_ n: Int?) { call.withLock { $0 = n } }
    /// Writes one event: `fields` plus `t` (and `call`), as one JSON line on stdout; `t` is
    /// ms since the process started, of `at` (`systemUptime`, s) when given, else of now.
    func emit(_ fields: [String: Any], at: TimeInterval? = nil) {
        var object = fields
        object["t"] = (((at ?? ProcessInfo.processInfo.systemUptime) - processStart) * 10_000).rounded() / 10  // ms, 0.1 ms resolution
        call.withLock { call in
            if let call, object["call"] == nil { object["call"] = call }
            guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]) else { return }
            FileHandle.standardOutput.write(data + Data("\n".utf8))
        }
    }
}

/// When this process started (`systemUptime` seconds): the zero of the events' `t`.
/// Taken from /proc/self/stat's start time when readable, else at first use.
let processStart: TimeInterval = {
    if let stat = try? String(contentsOfFile: "/proc/self/stat", encoding: .utf8),
       let close = stat.lastIndex(of: ")") {
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // Field 22 (starttime, clock ticks since boot) is the 20th after the ")".
        if fields.count > 19, let ticks = Double(fields[19]) {
            let hz = Double(sysconf(Int32(_SC_CLK_TCK)))
            if hz > 0 { return ticks / hz }
        }
    }
    return ProcessInfo.processInfo.systemUptime
}()

/// Human progress on stderr, `peer: <line>`, when the log level takes `level` (info by
/// default: `-q` keeps only errors); from `debug` on as a timed log line (`12.345 peer: …`).
func say(_ line: String, level: LogLevel = .info) {
    guard Log.enabled(level) else { return }
    // From debug on, every line is a timed log line ("12.345 peer: …") among the others.
    if Log.enabled(.debug) { return Log.write(level, "peer", line) }
    // Lines name what peers sent (user ids, mids, reasons): no control character of theirs
    // reaches the terminal.
    StatusLine.shared.emit("peer: \(Untrusted.quoted(line, limit: .max))\n")
}

/// `peer offer|answer|room`: runs a call (or, with `--repeat`, calls one after another)
/// and exits with its code.
func callCommand(role: CallOptions.Role, _ arguments: [String]) async -> Never {
    _ = processStart
    let line = parseCallOptions(role: role, arguments)
    startLogging()
    let out = JSONEvents()
    let current = CurrentCall()
    // SIGINT/SIGTERM hang up: close files properly, then exit 130 or 143 (128 + signal).
    signal(SIGINT, SIG_IGN)
    signal(SIGTERM, SIG_IGN)
    var handlers: [DispatchSourceSignal] = []
    for sig in [SIGINT, SIGTERM] {
        let source = DispatchSource.makeSignalSource(signal: sig, queue: .global())
        source.setEventHandler { current.interrupt(signal: sig) }
        source.resume()
        handlers.append(source)
    }
    if line.control { readControlCommands(current: current, out: out) }
    let code: Int32
    if let count = line.repeatCount {
        code = await runRepeatedCalls(line, count: count, current: current, out: out)
    } else {
        let result = await runOneCall(line.options, line, current: current, out: out, statsPath: line.statsPath)
        code = current.exitCode(result.exitCode)
        if let report = line.reportPath, let timeline = line.options.statsTimelinePath {
            writeReport(timelines: [timeline], to: report, json: line.json ? out : nil)
            if line.ownTimeline { try? FileManager.default.removeItem(atPath: timeline) }
        }
        if line.json { out.emit(["event": "exit", "code": Int(code), "state": result.state.rawValue, "reason": result.reason ?? NSNull()]) }
    }
    _ = handlers
    exit(code)
}

/// Runs one call with `options` to its end, reporting its events (stderr, `--json`) and
/// writing its statistics to `statsPath` when given.
func runOneCall(_ options: CallOptions, _ line: CallCommandLine, current: CurrentCall, out: JSONEvents,
                statsPath: String?) async -> CallResult {
    let call = Call(options: options, onEvent: eventPrinter(json: line.json, out: out))
    current.start(call)
    let result = await call.run()
    current.end()
    if let statsPath { writeStats(result, to: statsPath) }
    return result
}

/// Writes the final statistics of every peer of `result` to `path` (`--stats`, JSON).
func writeStats(_ result: CallResult, to path: String) {
    var peers: [String: Any] = [:]
    for p in result.peers {
        peers[p.peer] = ["video": p.videoPath, "audio": p.audioPath, "videoFramesWritten": p.videoFramesWritten,
                         "audioPacketsWritten": p.audioPacketsWritten,
                         "report": (try? JSONSerialization.jsonObject(with: Data(p.stats.json.utf8))) ?? NSNull()]
    }
    let object: [String: Any] = ["state": result.state.rawValue, "exitCode": Int(result.exitCode),
                                 "reason": result.reason ?? NSNull(), "peers": peers]
    if let data = try? JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]) {
        do { try data.write(to: URL(fileURLWithPath: path)) } catch { say("cannot write --stats \(path): \(error)") }
    }
}

/// The handler of a call's events: progress lines on stderr, and with `json` one event
/// per line through `out`.
func eventPrinter(json: Bool, out: JSONEvents) -> @Sendable (CallEvent) -> Void {
    { event in
        switch event {
        case .dataChannel, .dataMessage, .dataError, .dataSendResult, .dataControl, .dataSummary:
            printDataEvent(event, json: json, out: out)
        case let .state(s, peer, reason):
            if peer == nil { StatusLine.shared.setState(s.rawValue) }
            say("\(peer.map { "\($0): " } ?? "")\(s.rawValue)\(reason.map { " (\($0))" } ?? "")", level: s == .failed ? .error : .info)
            if json { out.emit(["event": "state", "state": s.rawValue, "peer": peer ?? NSNull(), "reason": reason ?? NSNull()]) }
        case let .signalingError(topic, reason):
            say("dropped a message on \(Untrusted.quoted(topic)): \(Untrusted.quoted(reason, limit: 400))")
            if json { out.emit(["event": "signalingError", "topic": topic, "reason": reason]) }
        case let .connectionState(peer, state, reason):
            if state == "disconnected" { say("\(peer): connection disconnected (no packets from the peer)") }
            if json { out.emit(["event": "connectionState", "peer": peer, "state": state, "reason": reason ?? NSNull()]) }
        case let .candidateDropped(peer, candidate, reason):
            say("\(peer): dropped remote candidate \"\(Untrusted.quoted(candidate))\": \(Untrusted.quoted(reason))")
            if json { out.emit(["event": "candidateDropped", "peer": peer, "candidate": candidate, "reason": reason]) }
        case let .candidate(peer, local, candidate):
            if json { out.emit(["event": "candidate", "peer": peer, "direction": local ? "local" : "remote", "candidate": candidate]) }
        case let .track(peer, kind, mid, codec):
            say("\(peer): receiving \(kind) (\(codec), mid \(mid))")
            if json { out.emit(["event": "track", "peer": peer, "kind": kind, "mid": mid, "codec": codec]) }
        case let .frames(peer, video, audio, f):
            if json {
                var fields: [String: Any] = ["event": "frames", "peer": peer, "video": video, "audio": audio,
                                             "kbpsIn": (f.kbpsIn * 10).rounded() / 10, "kbpsOut": (f.kbpsOut * 10).rounded() / 10,
                                             "lossPercent": (f.lossPercent * 100).rounded() / 100]
                if let v = f.fpsIn { fields["fpsIn"] = v }
                if let v = f.fpsOut { fields["fpsOut"] = v }
                if let v = f.rttMs { fields["rttMs"] = (v * 10).rounded() / 10 }
                if let v = f.latencyMs { fields["latencyMs"] = (v * 10).rounded() / 10 }
                out.emit(fields)
            }
        case let .progress(peer, figures):
            StatusLine.shared.update(peer: peer, figures)
        case let .recorded(peer, path, bySenderReports, problems):
            let sync = bySenderReports ? "sender reports" : "arrival times"
            say("\(peer): recorded audio and video to \(path), in sync by \(sync)\(problems.isEmpty ? "" : "; " + problems.joined(separator: "; "))",
                level: problems.isEmpty ? .info : .warn)
            if json { out.emit(["event": "recorded", "peer": peer, "path": path, "sync": sync, "problems": problems]) }
        case let .busy(from, reason):
            say("declined \(Untrusted.quoted(from)): \(Untrusted.quoted(reason))")
            if json { out.emit(["event": "busy", "from": from, "reason": reason]) }
        case let .peerJoined(user):
            say("\(user) joined the room")
            if json { out.emit(["event": "peerJoined", "user": user]) }
        case let .peerLeft(user):
            say("\(user) left the room")
            if json { out.emit(["event": "peerLeft", "user": user]) }
        case let .router(text):
            say("router \(text)")
            if json { out.emit(["event": "router", "status": text]) }
        case let .renegotiated(peer, offerer, reason, before, after, ms):
            say("\(peer): renegotiated (\(reason), offered by \(offerer == "local" ? "us" : "the peer")) in \(String(format: "%.1f", ms)) ms: "
                + after.keys.sorted().map { "\($0) \(before[$0] ?? "-") → \(after[$0] ?? "-")" }.joined(separator: ", "))
            if json {
                out.emit(["event": "renegotiated", "peer": peer, "offerer": offerer, "reason": reason, "before": before, "after": after,
                          "ms": (ms * 10).rounded() / 10])
            }
        case let .remapped(peer, detail):
            say("\(peer): renegotiation renumbered \(detail); followed")
            if json { out.emit(["event": "remapped", "peer": peer, "detail": detail]) }
        case let .previousPayloadType(peer, mid, pt, negotiated):
            say("\(peer): mid \(mid): the peer still sends payload type \(pt), which its renegotiation numbered \(negotiated); taken")
            if json { out.emit(["event": "previousPayloadType", "peer": peer, "mid": mid, "payloadType": pt, "negotiatedPayloadType": negotiated]) }
        case let .renegotiationFailed(peer, reason):
            say("\(peer): \(reason)")
            if json { out.emit(["event": "renegotiationFailed", "peer": peer, "reason": reason]) }
        case let .action(action, ok, detail, origin):
            say("\(action.rawValue) (\(origin)): \(ok ? "done" : "not done")\(detail.map { ": \($0)" } ?? "")")
            emitResult(["event": "action", "action": action.rawValue], ok: ok, detail: detail, origin: origin, json: json, out: out)
        case let .iceRestarting(peer, reason):
            say("\(peer): \(reason): restarting ICE")
            if json { out.emit(["event": "iceRestart", "peer": peer, "reason": reason]) }
        case let .dtlsRestarted(peer, r):
            say("\(peer): back with a new certificate (\(r.fingerprint)): new DTLS association, we are its \(r.role); data channels reopen")
            if json {
                out.emit(["event": "dtlsRestart", "peer": peer, "fingerprint": r.fingerprint, "previousFingerprint": r.previousFingerprint,
                          "role": r.role, "association": r.generation, "offerer": r.offeredByUs ? "local" : "remote",
                          "reason": "the peer's description restarted ICE with a new DTLS fingerprint (RFC 8829 §5.11): "
                              + "new DTLS association, new SRTP keys, new SCTP association"])
            }
        case let .iceRecovered(peer, seconds, restarted):
            say("\(peer): ICE connected again after \(String(format: "%.1f", seconds)) s\(restarted ? " (our ICE restart)" : "")")
            if json { out.emit(["event": "iceRecovered", "peer": peer, "ms": (seconds * 10_000).rounded() / 10, "restarted": restarted]) }
        case let .milestone(name, peer, at):
            if json { out.emit(["event": "milestone", "name": name, "peer": peer ?? NSNull()], at: at) }
        case let .stats(peer, report, videoPath, audioPath):
            let v = report.inbound("video"), a = report.inbound("audio"), ov = report.outbound("video")
            // Only the recordings of a kind the peer sent (a data-only call writes none).
            let files = [v.map { _ in videoPath }, a.map { _ in audioPath }].compactMap { $0 }
            say("\(peer): received \(v?.framesWritten ?? 0) video frames (\(v?.framesDecoded ?? 0) decoded, "
                + "\(v?.frameWidth ?? 0)x\(v?.frameHeight ?? 0), packetsLost \(v?.packetsLost ?? 0), nackCount \(v?.nackCount ?? 0)), "
                + "\(a?.framesWritten ?? 0) audio packets; sent \(ov?.framesSent ?? 0) frames; "
                + "first frame \(report.timings.firstRemoteFrameMs.map { String(format: "%.0f ms", $0) } ?? "-")"
                + (files.isEmpty ? "; no audio or video received, nothing recorded" : " → " + files.joined(separator: ", ")))
            if let t = report.transports.first, t.drops.contains(where: { $0.count > 0 }) {
                say("\(peer): dropped on arrival: " + t.drops.filter { $0.count > 0 }.map { "\($0.field) \($0.count)" }.joined(separator: ", "),
                    level: .warn)
            }
            for s in [v, a].compactMap({ $0 }) where s.packetsWithPreviousPayloadType > 0 {
                say("\(peer): took \(s.packetsWithPreviousPayloadType) \(s.kind) packets with payload type \(s.previousPayloadType ?? 0), "
                    + "which the peer's renegotiation renumbered to \(s.codecId?.dropFirst(3) ?? "-")")
            }
            let overflows = (v?.sinkOverflowDrops ?? 0) + (a?.sinkOverflowDrops ?? 0)
            if overflows > 0 {
                say("\(peer): warning: decoding and recording fell 2 s behind what arrived (this machine too busy); "
                    + "dropped \(v?.sinkOverflowDrops ?? 0) video frames and \(a?.sinkOverflowDrops ?? 0) audio packets on arrival")
            }
            if json, let object = try? JSONSerialization.jsonObject(with: Data(report.json.utf8)) {
                out.emit(["event": "stats", "peer": peer, "video": videoPath, "audio": audioPath, "report": object])
            }
        }
    }
}

/// The result event of an action or send (`fields` plus `ok`, `detail`, `origin` and, for
/// a `--control` command with one, its `id`): with `--json`, and always for `--control`
/// (its commands are answered on stdout).
func emitResult(_ fields: [String: Any], ok: Bool, detail: String?, origin: String, json: Bool, out: JSONEvents) {
    let control = origin == "control" || origin.hasPrefix("control:")
    guard json || control else { return }
    var all = fields
    all["ok"] = ok
    all["detail"] = detail ?? NSNull()
    all["origin"] = control ? "control" : origin
    if origin.hasPrefix("control:") { all["id"] = String(origin.dropFirst("control:".count)) }
    out.emit(all)
}

/// `--control stdin`: reads one JSON command per line from standard input on a thread of
/// its own (`peer.control`) until end of input and hands each to the call in progress; a
/// line that is not a command, or one while no call runs, gets an `action` event with
/// `ok: false` and the reason on stdout, and nothing else happens.
func readControlCommands(current: CurrentCall, out: JSONEvents) {
    let thread = Thread {
        // Named from inside: Foundation's `Thread.name` set before `start()` did not reach
        // the kernel (/proc showed a Dispatch worker's name) (ThreadNaming).
        nameCurrentThread("peer.control")
        while let line = readLine(strippingNewline: true) {
            if line.trimmingCharacters(in: .whitespaces).isEmpty { continue }
            do throws(ControlCommandError) {
                if let (send, id) = try DataSend.control(line) {
                    if !current.send(send, origin: id.map { "control:\($0)" } ?? "control") {
                        out.emit(["event": "send", "label": send.label, "ok": false, "origin": "control",
                                  "detail": "no call in progress", "id": id ?? NSNull()])
                    }
                    continue
                }
                let command = try ControlCommand(parsing: line)
                let origin = command.id.map { "control:\($0)" } ?? "control"
                guard current.perform(command.action, origin: origin) else {
                    out.emit(["event": "action", "action": command.action.rawValue, "ok": false, "origin": "control",
                              "detail": "no call in progress", "id": command.id ?? NSNull()])
                    continue
                }
            } catch {
                say("--control: \(error)")
                out.emit(["event": "action", "ok": false, "origin": "control", "detail": "\(error)", "id": error.id ?? NSNull()])
            }
        }
    }
    thread.start()
}
