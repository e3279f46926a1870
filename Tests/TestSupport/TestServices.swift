import Foundation

/// The real test services (Crossbar.io router, coturn STUN/TURN server) as
/// `scripts/services` describes them in its `services.json`.
public struct ServiceInfo: Decodable, Sendable {
    public let realm: String?
    public let router_url: String?
    public let router_cra_url: String?
    public let router_cra_salted_url: String?
    public let router_ticket_url: String?
    public let router_wss_url: String?
    public let router_ca_file: String?
    public let router_pid: Int32?
    public let router_port: Int?
    public let stun_url: String?
    public let turn_url: String?
    public let turns_url: String?
    public let turn_ca_file: String?
    public let turn_user: String?
    public let turn_password: String?
    public let turn_pid: Int32?
    public let turn_port: Int?
    public let cra_user: String?
    public let cra_secret: String?
    public let cra_salted_user: String?
    public let cra_salted_secret: String?
    public let ticket_user: String?
    public let ticket: String?
    public let router_log: String?
    public let turn_log: String?
}

/// Runs `scripts/services` and gives tests the running services.
///
/// ``shared()`` starts the services once per test process (or reuses the ones
/// `scripts/services run` started around `swift test`, found through the
/// `PEER_TEST_SERVICES` variable) and stops what it started when the process exits.
public enum TestServices {
    /// The repository root (three levels above this file).
    public static let root: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Path of the `scripts/services` program.
    public static var script: String { root.appendingPathComponent("scripts/services").path }

    /// Output of one run of a program: exit status, stdout and stderr as text.
    public struct Run: Sendable {
        public let status: Int32
        public let stdout: String
        public let stderr: String
    }

    /// Runs `executable` with `arguments` and extra environment, waiting at most
    /// `timeout` seconds (then the process is killed and status is -9), on a thread of
    /// its own: the waiting never blocks Swift's cooperative pool (two threads here),
    /// which would stall every other test running in parallel.
    public static func run(_ executable: String, _ arguments: [String],
                           environment: [String: String] = [:], timeout: Double = 120) async throws -> Run {
        try await offload { try runBlocking(executable, arguments, environment: environment, timeout: timeout) }
    }

    /// ``run(_:_:environment:timeout:)`` blocking the calling thread: for code that
    /// already runs on a thread of its own (see ``offload(_:)``).
    public static func runBlocking(_ executable: String, _ arguments: [String],
                                   environment: [String: String] = [:], timeout: Double = 120) throws -> Run {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // Read both pipes concurrently so a chatty child cannot block on a full pipe.
        let outData = LockedData(), errData = LockedData()
        let group = DispatchGroup()
        for (pipe, sink) in [(out, outData), (err, errData)] {
            group.enter()
            // A thread of its own, not DispatchQueue.global(): on Linux the global queues
            // share threads with Swift's cooperative pool, and a read that blocks for the
            // whole life of a child process would stall every test for that long.
            Thread { sink.set(pipe.fileHandleForReading.readDataToEndOfFile()); group.leave() }.start()
        }
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        group.wait()
        let status = process.terminationReason == .uncaughtSignal ? -process.terminationStatus : process.terminationStatus
        return Run(status: status, stdout: String(decoding: outData.get(), as: UTF8.self),
                   stderr: String(decoding: errData.get(), as: UTF8.self))
    }

    /// Runs blocking `body` on a new thread and resumes with its result, so the caller's
    /// cooperative thread stays free while it waits.
    public static func offload<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try body() }) }.start()
        }
    }

    /// Starts services in `dir` with `scripts/services start --dir dir` plus `extra`
    /// arguments. Throws ``TestServiceError`` with the script's own error line.
    public static func start(dir: String, _ extra: [String] = [], environment: [String: String] = [:]) async throws -> ServiceInfo {
        try await offload { try startBlocking(dir: dir, extra, environment: environment) }
    }

    /// ``start(dir:_:environment:)`` blocking the calling thread (for code on a thread of its own).
    public static func startBlocking(dir: String, _ extra: [String] = [], environment: [String: String] = [:]) throws -> ServiceInfo {
        let r = try runBlocking(script, ["start", "--dir", dir] + extra, environment: environment)
        guard r.status == 0 else { throw TestServiceError.startFailed(status: r.status, stderr: r.stderr) }
        return try JSONDecoder().decode(ServiceInfo.self, from: Data(r.stdout.utf8))
    }

    /// Stops the services recorded in `dir`.
    public static func stop(dir: String) async throws {
        try await offload { try stopBlocking(dir: dir) }
    }

    /// ``stop(dir:)`` blocking the calling thread (for `defer` blocks and exit handlers).
    public static func stopBlocking(dir: String) throws {
        let r = try runBlocking(script, ["stop", "--dir", dir])
        guard r.status == 0 else { throw TestServiceError.stopFailed(stderr: r.stderr) }
    }

    /// A fresh empty directory under the system temporary directory.
    public static func temporaryDirectory(_ label: String) -> String {
        let dir = FileManager.default.temporaryDirectory
            .appendingPathComponent("peer-\(label)-\(UUID().uuidString.prefix(8))").path
        try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return dir
    }

    /// The services for this test process: those of `PEER_TEST_SERVICES` when set,
    /// else started once here and stopped at process exit.
    public static func shared() async throws -> ServiceInfo {
        try await offload { try SharedServices.instance.get() }
    }
}

/// Errors of ``TestServices``.
public enum TestServiceError: Error, CustomStringConvertible {
    /// `scripts/services start` exited with `status`; `stderr` has its error line.
    case startFailed(status: Int32, stderr: String)
    /// `scripts/services stop` failed.
    case stopFailed(stderr: String)

    public var description: String {
        switch self {
        case let .startFailed(status, stderr): return "scripts/services start exited \(status): \(stderr)"
        case let .stopFailed(stderr): return "scripts/services stop failed: \(stderr)"
        }
    }
}

private final class LockedData: @unchecked Sendable {
    private let lock = NSLock()
    private var data = Data()
    func set(_ d: Data) { lock.lock(); data = d; lock.unlock() }
    func get() -> Data { lock.lock(); defer { lock.unlock() }; return data }
}

/// Starts the shared services at most once per process (thread-safe).
private final class SharedServices: @unchecked Sendable {
    static let instance = SharedServices()
    private let lock = NSLock()
    private var result: Result<ServiceInfo, any Error>?
    nonisolated(unsafe) static var startedDir: String?

    func get() throws -> ServiceInfo {
        lock.lock()
        defer { lock.unlock() }
        if let result { return try result.get() }
        let r = Result { () throws -> ServiceInfo in
            if let path = ProcessInfo.processInfo.environment["PEER_TEST_SERVICES"] {
                return try JSONDecoder().decode(ServiceInfo.self, from: Data(contentsOf: URL(fileURLWithPath: path)))
            }
            let dir = TestServices.temporaryDirectory("services")
            let info = try TestServices.startBlocking(dir: dir)
            SharedServices.startedDir = dir
            atexit {
                guard let dir = SharedServices.startedDir else { return }
                try? TestServices.stopBlocking(dir: dir)
                try? FileManager.default.removeItem(atPath: dir)
            }
            return info
        }
        result = r
        return try r.get()
    }
}
