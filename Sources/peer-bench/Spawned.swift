// Spawned: a child process run under GNU time (/usr/bin/time), for its CPU time and peak RSS.
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A child process whose standard output goes to a file, run under GNU `time`
/// (`/usr/bin/time -f "%M %U %S"`), which reports its CPU seconds and peak resident set
/// size. Not `wait4`'s `ru_maxrss` of our own child: a child started with `posix_spawn`
/// (vfork) or `fork` counts the parent's peak RSS from before its exec (Linux keeps the
/// old address space's high-water mark at exec), so every figure read ~47 MB, the
/// benchmark's own size. `time` is small, and it forks the program itself.
final class Spawned {
    /// What the child used, once it ended.
    struct Usage {
        /// Exit status (128 + signal when killed).
        var status: Int32
        /// User + system CPU, seconds.
        var cpuSeconds: Double
        /// Peak resident set size, KiB.
        var maxRSSKiB: Int
        /// From spawn to exit, seconds.
        var wallSeconds: Double
    }

    let pid: pid_t
    /// Where its standard output goes, and where `time` writes what it used.
    let stdoutPath: String, usagePath: String
    /// GNU time (Debian's `time` package, from scripts/bootstrap).
    static let time = "/usr/bin/time"
    private let started = Date()

    /// Starts `path` with `arguments`, standard output to `stdoutPath`, standard error to
    /// `stderrPath` (default /dev/null), the environment inherited.
    /// - Throws: ``CallBench/Failure`` when posix_spawn fails (a missing `time` shows as
    ///   exit status 127 in ``wait()``).
    init(_ path: String, _ arguments: [String], stdoutPath: String, stderrPath: String = "/dev/null") throws {
        self.stdoutPath = stdoutPath
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, stdoutPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, stderrPath, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        usagePath = stdoutPath + ".time"
        let argv: [UnsafeMutablePointer<CChar>?] = ([Self.time, "-f", "%M %U %S", "-o", usagePath, path] + arguments).map { strdup($0) } + [nil]
        defer { for p in argv { free(p) } }
        var child: pid_t = 0
        let result = posix_spawn(&child, Self.time, &actions, nil, argv, environ)
        guard result == 0 else { throw CallBench.Failure(description: "posix_spawn \(path): \(String(cString: strerror(result)))") }
        pid = child
    }

    /// Waits for the child to end.
    func wait() -> Usage {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0, errno == EINTR {}
        let code = status & 0x7F == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
        // The last line is ours ("Command exited with non-zero status …" may come first).
        let text = (try? String(contentsOfFile: usagePath, encoding: .utf8)) ?? ""
        let fields = text.split(separator: "\n").last?.split(separator: " ").compactMap { Double($0) } ?? []
        return Usage(status: code, cpuSeconds: fields.count == 3 ? fields[1] + fields[2] : .nan,
                     maxRSSKiB: fields.first.map { Int($0) } ?? 0, wallSeconds: Date().timeIntervalSince(started))
    }

    /// Its standard output so far, as JSON objects (lines that are not JSON are skipped).
    func events() -> [[String: Any]] {
        guard let text = try? String(contentsOfFile: stdoutPath, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    /// Waits up to `seconds` for an output event that `matches`; false on timeout.
    func waitForEvent(within seconds: Double, _ matches: ([String: Any]) -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if events().contains(where: matches) { return true }
            Thread.sleep(forTimeInterval: 0.02)
        }
        return false
    }
}
