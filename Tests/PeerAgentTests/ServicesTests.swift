import Foundation
import Testing
import TestSupport

#if canImport(Glibc)
import Glibc
#endif

/// The test services themselves: they start from nothing, answer, stop without
/// leftovers, and fail fast with a clear error naming the service.
@Suite struct ServicesTests {
    /// Process ids whose process group is `pgid`, or whose command line mentions `text`.
    static func processes(group pgid: Int32? = nil, mentioning text: String? = nil) -> [Int32] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { Int32($0) }.filter { pid in
            if let pgid, let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
               let close = stat.lastIndex(of: ")") {
                // Fields after "(comm)": state ppid pgrp ...
                let fields = stat[stat.index(after: close)...].split(separator: " ")
                if fields.count > 2, Int32(fields[2]) == pgid, !fields[0].hasPrefix("Z") { return true }
            }
            if let text, let cmd = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline"),
               String(decoding: cmd, as: UTF8.self).contains(text) { return true }
            return false
        }
    }

    @Test func startAnswerAndStopLeavesNoProcess() async throws {
        let dir = TestServices.temporaryDirectory("lifecycle")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let info = try await TestServices.start(dir: dir)
        let routerPid = try #require(info.router_pid)
        let turnPid = try #require(info.turn_pid)
        #expect(kill(routerPid, 0) == 0)
        #expect(kill(turnPid, 0) == 0)
        #expect(info.router_url == "ws://127.0.0.1:\(info.router_port ?? 0)/ws")
        // Each service really answers.
        let hello = try await TestServices.run(TestServices.script, ["wamp-hello", info.router_url ?? "", "realm1"])
        #expect(hello.status == 0 && hello.stdout.hasPrefix("[2,"), "\(hello.stderr)")
        try await TestServices.stop(dir: dir)
        #expect(Self.processes(group: routerPid).isEmpty)
        #expect(Self.processes(group: turnPid).isEmpty)
        #expect(Self.processes(mentioning: dir).isEmpty)
        try await TestServices.stop(dir: dir)  // idempotent
    }

    @Test func aTakenRouterPortIsAClearErrorNotAHang() async throws {
        let listener = try TakenPort(type: SOCK_STREAM)
        let dir = TestServices.temporaryDirectory("taken-router")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // Timed on the thread that runs the script, so a busy test process (2 cores, every
        // suite in parallel) does not count against the script.
        let port = listener.port
        let (elapsed, outcome) = try await TestServices.offload { () -> (Double, Result<ServiceInfo, Error>) in
            let start = Date()
            let outcome = Result { try TestServices.startBlocking(dir: dir, ["--only", "router", "--router-port", "\(port)"]) }
            return (Date().timeIntervalSince(start), outcome)
        }
        #expect(throws: TestServiceError.self) { try outcome.get() }
        if case let .failure(TestServiceError.startFailed(status, stderr)) = outcome {
            #expect(status == 1)
            #expect(stderr.contains("router") && stderr.contains("\(listener.port)") && stderr.contains("in use"), "\(stderr)")
        }
        #expect(elapsed < 10)
        #expect(Self.processes(mentioning: dir).isEmpty)
    }

    @Test func aTakenTurnPortIsAClearErrorNotAHang() async throws {
        let socket = try TakenPort(type: SOCK_DGRAM)
        let dir = TestServices.temporaryDirectory("taken-turn")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        await #expect {
            _ = try await TestServices.start(dir: dir, ["--only", "turn", "--turn-port", "\(socket.port)"])
        } throws: { error in
            guard case let TestServiceError.startFailed(status, stderr) = error else { return false }
            return status == 1 && stderr.contains("turn") && stderr.contains("in use")
        }
        #expect(Self.processes(mentioning: dir).isEmpty)
    }

    @Test func aMissingBinaryNamesTheServiceAndLeavesNothingRunning() async throws {
        let dir = TestServices.temporaryDirectory("missing-crossbar")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        await #expect {
            _ = try await TestServices.start(dir: dir, environment: ["PEER_CROSSBAR": "/nonexistent/crossbar"])
        } throws: { error in
            guard case let TestServiceError.startFailed(status, stderr) = error else { return false }
            return status == 1 && stderr.contains("router") && stderr.contains("/nonexistent/crossbar")
        }
        // The STUN/TURN server, if it had started first, was stopped again.
        #expect(Self.processes(mentioning: dir).isEmpty)

        let dir2 = TestServices.temporaryDirectory("missing-turn")

        defer { try? FileManager.default.removeItem(atPath: dir2) }
        await #expect {
            _ = try await TestServices.start(dir: dir2, ["--only", "turn"], environment: ["PEER_TURNSERVER": "/nonexistent/turnserver"])
        } throws: { error in
            guard case let TestServiceError.startFailed(status, stderr) = error else { return false }
            return status == 1 && stderr.contains("turn") && stderr.contains("not found")
        }
    }
}
