// `peer offer|answer --repeat N|forever`: calls one after another in one process, each
// with numbered files, and the process's resources (RSS, open files, threads) after each.
import Foundation
import PeerAgent
import PeerCall
import Synchronization

/// The call in progress, so that SIGINT/SIGTERM hang it up, and whether one came (which
/// ends a `--repeat` run after the call it cut short).
final class CurrentCall: Sendable {
    private let state = Mutex<(call: Call?, interrupted: Bool, signal: Int32?)>((nil, false, nil))

    /// Makes `call` the one a signal hangs up; hangs it up at once if a signal came already.
    func start(_ call: Call) {
        let interrupted = state.withLock { s in
            s.call = call
            return s.interrupted
        }
        if interrupted { call.hangUp(interrupted: true) }
    }

    /// The call ended: a signal from now on only marks the run interrupted.
    func end() { state.withLock { $0.call = nil } }

    /// Signal `signal` came (SIGINT, SIGTERM): hangs up the call in progress (files closed
    /// properly) and ends the run; the first signal sets the exit code (``exitCode(_:)``).
    func interrupt(signal: Int32) {
        let call = state.withLock { s in
            s.interrupted = true
            if s.signal == nil { s.signal = signal }
            return s.call
        }
        call?.hangUp(interrupted: true)
    }

    /// `code`, or when it is the interrupted code (130) 128 + the signal that came, as
    /// shells report a process a signal ended: 130 for SIGINT, 143 for SIGTERM.
    func exitCode(_ code: Int32) -> Int32 {
        guard code == ExitCode.interrupted, let signal = state.withLock({ $0.signal }) else { return code }
        return 128 + signal
    }

    /// Hands `action` to the call in progress (``Call/perform(_:origin:)``); false when none runs.
    func perform(_ action: CallAction, origin: String) -> Bool {
        guard let call = state.withLock({ $0.call }) else { return false }
        call.perform(action, origin: origin)
        return true
    }

    /// Hands `request` to the call in progress; false when there is none.
    func send(_ request: DataSend, origin: String) -> Bool {
        guard let call = state.withLock({ $0.call }) else { return false }
        call.send(request, origin: origin)
        return true
    }

    /// True once a signal came.
    var interrupted: Bool { state.withLock { $0.interrupted } }
}

/// What this process holds now, read from /proc/self: resident memory (bytes, `VmRSS`),
/// open file descriptors and threads. Nil fields could not be read.
struct ProcessResources {
    var rssBytes: Int?
    var openFiles: Int?
    var threads: Int?

    /// Reads them now.
    static func now() -> ProcessResources {
        var r = ProcessResources()
        if let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) {
            for line in status.split(separator: "\n") {
                let parts = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
                guard parts.count >= 2, let value = Int(parts[1]) else { continue }
                if parts[0] == "VmRSS:" { r.rssBytes = value * 1024 }  // the kernel writes kB
                if parts[0] == "Threads:" { r.threads = value }
            }
        }
        // Minus the descriptor the listing itself holds open.
        if let fds = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") { r.openFiles = max(0, fds.count - 1) }
        return r
    }

    /// `45.2 MB RSS, 23 open files, 9 threads`.
    var summary: String {
        let mb = rssBytes.map { String(format: "%.1f MB", Double($0) / 1_000_000) } ?? "?"
        return "\(mb) RSS, \(openFiles.map(String.init) ?? "?") open files, \(threads.map(String.init) ?? "?") threads"
    }
}

/// `path` with `-n` before its extension: `in.ivf` → `in-3.ivf` (`--repeat`'s file names).
func numberedPath(_ path: String, _ n: Int) -> String {
    let url = URL(fileURLWithPath: path)
    guard !url.pathExtension.isEmpty else { return "\(path)-\(n)" }
    return url.deletingPathExtension().path + "-\(n)." + url.pathExtension
}

/// Runs `count` calls one after another (0: until SIGINT/SIGTERM), each like a single
/// call but with its files (`--video-out`, `--audio-out`, `--record`, `--stats`,
/// `--stats-timeline`, or the defaults)
/// numbered from 1, and returns the exit code of the run: 130 (SIGINT) or 143 (SIGTERM)
/// when interrupted, else the first failed call's code, else 0.
///
/// A call's failure does not stop the run, except when no call can come: the router
/// unreachable or refusing (3; `forever` retries after 2 s) or no offer/answer within
/// `--timeout` (4; `forever` waits for each offer without a limit). After each call a
/// `callEnded` event (and a stderr line) gives its code and reason and the process's RSS
/// (bytes), open files and threads, so growth over many calls can be seen.
func runRepeatedCalls(_ line: CallCommandLine, count: Int, current: CurrentCall, out: JSONEvents) async -> Int32 {
    let role = line.options.role
    let remote = role == .answer ? "offerer" : "answerer"
    var firstFailure: (call: Int, code: Int32, reason: String)?
    var passed = 0
    var n = 0
    while (count == 0 || n < count), !current.interrupted {
        n += 1
        var options = line.options
        options.videoOut = numberedPath(line.options.videoOut ?? "remote-\(remote).ivf", n)
        options.audioOut = numberedPath(line.options.audioOut ?? "remote-\(remote).ogg", n)
        options.recordOut = line.options.recordOut.map { numberedPath($0, n) }
        options.statsTimelinePath = line.options.statsTimelinePath.map { numberedPath($0, n) }
        if count == 0 { options.waitsWithoutTimeout = true }
        out.setCall(n)
        let result = await runOneCall(options, line, current: current, out: out, statsPath: line.statsPath.map { numberedPath($0, n) })
        let resources = ProcessResources.now()
        let reason = result.reason ?? result.state.rawValue
        let of = count == 0 ? "" : " of \(count)"
        say("call \(n)\(of): exit \(result.exitCode) (\(reason)); process: \(resources.summary)")
        if line.json {
            out.emit(["event": "callEnded", "code": Int(result.exitCode), "state": result.state.rawValue, "reason": result.reason ?? NSNull(),
                      "rssBytes": resources.rssBytes ?? NSNull(), "openFiles": resources.openFiles ?? NSNull(),
                      "threads": resources.threads ?? NSNull()])
        }
        if result.exitCode == 0 {
            passed += 1
        } else if result.exitCode != ExitCode.interrupted, firstFailure == nil {
            firstFailure = (n, result.exitCode, reason)
        }
        if result.exitCode == ExitCode.router || result.exitCode == ExitCode.timeout {
            guard count == 0, result.exitCode == ExitCode.router, !current.interrupted else { break }
            try? await Task.sleep(for: .seconds(2))
        }
    }
    out.setCall(nil)
    let code = current.interrupted ? current.exitCode(ExitCode.interrupted) : (firstFailure?.code ?? 0)
    let failures = firstFailure.map { "; first failure: call \($0.call), exit \($0.code) (\($0.reason))" } ?? ""
    let summary = "\(n) call\(n == 1 ? "" : "s"): \(passed) passed, \(n - passed) did not\(failures)"
    say(summary)
    if line.json { out.emit(["event": "exit", "code": Int(code), "calls": n, "passed": passed, "reason": summary]) }
    return code
}
