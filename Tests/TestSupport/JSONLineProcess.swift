import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A child process that prints JSON objects one per line on stdout (peer's `--json`,
/// the aiortc test peers). Its pipes are read on threads of their own and waiting
/// polls with `Task.sleep`, so the cooperative pool is never blocked.
public final class JSONLineProcess: @unchecked Sendable {
    /// Why waiting on the process failed.
    public enum Failure: Error, CustomStringConvertible {
        /// No matching line within `seconds`.
        case timeout(name: String, waitingFor: String, seconds: Double, stderr: String)
        /// It exited (stdout closed) before printing the line.
        case exited(name: String, waitingFor: String, stderr: String)
        /// It printed `{"event": "error", …}` while we waited.
        case reported(name: String, message: String, stderr: String)

        /// One line naming the process, what was awaited, and its last stderr.
        public var description: String {
            switch self {
            case let .timeout(name, what, seconds, stderr): return "\(name): no \(what) within \(seconds) s; stderr: \(stderr)"
            case let .exited(name, what, stderr): return "\(name): exited before \(what); stderr: \(stderr)"
            case let .reported(name, message, stderr): return "\(name): \(message); stderr: \(stderr)"
            }
        }
    }

    /// A name for messages.
    public let name: String
    private let process = Process()
    private let input: Pipe?
    private let lock = NSLock()
    private var lines: [String] = []
    private var partial = Data()
    private var cursor = 0
    private var errorText = Data()
    private var stdoutClosed = false
    private var status: Int32?

    /// Starts `executable arguments…`; with `stdin` true its stdin is a pipe for ``send(_:)``,
    /// else /dev/null.
    public init(_ name: String, _ executable: String, _ arguments: [String], stdin: Bool = false) throws {
        self.name = name
        input = stdin ? Pipe() : nil
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let output = Pipe(), error = Pipe()
        process.standardInput = input ?? FileHandle.nullDevice
        process.standardOutput = output
        process.standardError = error
        process.terminationHandler = { [lock] p in
            let code = p.terminationReason == .uncaughtSignal ? -p.terminationStatus : p.terminationStatus
            lock.withLock { self.status = code }
        }
        try process.run()
        let out = output.fileHandleForReading, err = error.fileHandleForReading
        Thread { [self] in
            while true {
                let data = out.availableData
                if data.isEmpty { break }
                lock.withLock {
                    partial += data
                    while let newline = partial.firstIndex(of: UInt8(ascii: "\n")) {
                        lines.append(String(decoding: partial[partial.startIndex..<newline], as: UTF8.self))
                        partial = Data(partial[(newline + 1)...])
                    }
                }
            }
            lock.withLock { stdoutClosed = true }
        }.start()
        Thread { [self] in
            while true {
                let data = err.availableData
                if data.isEmpty { break }
                lock.withLock { errorText += data }
            }
        }.start()
    }

    /// The last 3 000 characters of its stderr.
    public var stderr: String { String(String(decoding: lock.withLock { errorText }, as: UTF8.self).suffix(3_000)) }

    /// Every JSON object line printed so far.
    public func events() -> [[String: Any]] {
        lock.withLock { lines }.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    /// Writes one JSON object as a line to its stdin (started with `stdin: true`).
    public func send(_ message: [String: String]) throws {
        guard let input else { return }
        var data = try JSONSerialization.data(withJSONObject: message, options: [.sortedKeys])
        data.append(UInt8(ascii: "\n"))
        try input.fileHandleForWriting.write(contentsOf: data)
    }

    /// The next JSON line (after those already returned) for which `match` holds, skipping
    /// others. With `failOnErrorEvent` an `{"event": "error"}` line throws ``Failure/reported(name:message:stderr:)``.
    /// Throws ``Failure`` when stdout ends first or after `timeout` seconds.
    public func next(timeout: Double, _ what: String = "expected message", failOnErrorEvent: Bool = false,
                     _ match: ([String: Any]) -> Bool) async throws -> [String: Any] {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let (line, closed) = lock.withLock { () -> (String?, Bool) in
                guard cursor < lines.count else { return (nil, stdoutClosed) }
                cursor += 1
                return (lines[cursor - 1], false)
            }
            if let line {
                guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { continue }
                if failOnErrorEvent, object["event"] as? String == "error" {
                    throw Failure.reported(name: name, message: "\(object["error"] ?? line)", stderr: stderr)
                }
                if match(object) { return object }
                continue
            }
            if closed { throw Failure.exited(name: name, waitingFor: what, stderr: stderr) }
            if Date() >= deadline { throw Failure.timeout(name: name, waitingFor: what, seconds: timeout, stderr: stderr) }
            try await Task.sleep(nanoseconds: 10_000_000)
        }
    }

    /// Waits for it to exit and its stdout to be read to the end; kills it after `timeout` s.
    public func exitStatus(timeout: Double) async throws -> Int32 {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let (code, closed) = lock.withLock { (status, stdoutClosed) }
            if let code, closed { return code }
            if Date() >= deadline {
                kill()
                throw Failure.timeout(name: name, waitingFor: "exit", seconds: timeout, stderr: stderr)
            }
            try await Task.sleep(nanoseconds: 20_000_000)
        }
    }

    /// SIGKILL (children of the test binary inherit a blocked SIGTERM).
    public func kill() {
        if process.isRunning { _ = Glibc.kill(process.processIdentifier, SIGKILL) }
    }
}
