import Foundation
import Testing
import TestSupport
@testable import ICE

#if canImport(Glibc)
import Glibc
#endif

// ICE behind NAT, for real: network namespaces joined by veth pairs, Linux NAT
// (iptables MASQUERADE), coturn on the "public" network and one `ice-probe` process
// per agent inside each private network. Needs root (CAP_NET_ADMIN), as CI has; where
// namespaces cannot be made the test fails saying so.
//
//   privA 198.19.1.2 ── lan 198.19.1.1 [natA] wan 198.18.0.2 ─┐
//                                                              ├─ br0 198.18.0.1 [pub] coturn :3478
//   privB 198.19.2.2 ── lan 198.19.2.1 [natB] wan 198.18.0.3 ─┘
//
// All addresses are in 198.18.0.0/15 (RFC 2544 benchmarking range); the public side
// has no route to the private nets, so only NATed traffic crosses.

/// A command that did not succeed: the command line, its exit status and output.
struct CommandFailed: Error, CustomStringConvertible {
    let command: String
    let status: Int32
    let output: String
    var description: String { "command failed (exit \(status)): \(command)\n\(output)" }
}

/// `ip netns add` failed: this machine (or user) cannot make network namespaces.
struct NamespacesUnavailable: Error, CustomStringConvertible {
    let cause: any Error
    var description: String {
        "network namespaces cannot be made here: this test needs root with CAP_NET_ADMIN (as CI has) and "
            + "iproute2/iptables (scripts/bootstrap); it does not skip. \(cause)"
    }
}

/// Runs `argv` (the first element found on PATH, /usr/sbin or /sbin) and returns its
/// stdout; throws ``CommandFailed`` naming the command when it cannot run or exits non-zero.
@discardableResult
func runCommand(_ argv: [String], timeout: Double = 20) throws -> String {
    let line = argv.joined(separator: " ")
    guard let name = argv.first, let executable = executablePath(name) else {
        throw CommandFailed(command: line, status: 127, output: "\(argv.first ?? "") not found")
    }
    let r = try TestServices.runBlocking(executable, Array(argv.dropFirst()), timeout: timeout)
    guard r.status == 0 else { throw CommandFailed(command: line, status: r.status, output: r.stdout + r.stderr) }
    return r.stdout
}

/// The full path of program `name`: itself when it holds a slash, else the first
/// executable of that name on PATH, /usr/sbin or /sbin.
func executablePath(_ name: String) -> String? {
    if name.contains("/") { return FileManager.default.isExecutableFile(atPath: name) ? name : nil }
    let path = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init)
    return (path + ["/usr/sbin", "/sbin"]).map { "\($0)/\(name)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
}

/// A child process whose stdout lines are collected and whose stdin takes lines.
final class LineProcess: @unchecked Sendable {
    let name: String
    let process = Process()
    private let input = Pipe(), output = Pipe(), errors = Pipe()
    private let lock = NSLock()
    private var pending = Data()
    private var stdoutLines: [String] = []
    private var stderrText = ""
    /// How many stdout lines the signaling relay has looked at.
    var relayed = 0

    /// Starts `argv` (its first element resolved like ``runCommand(_:timeout:)``).
    init(name: String, _ argv: [String]) throws {
        self.name = name
        guard let first = argv.first, let executable = executablePath(first) else {
            throw CommandFailed(command: argv.joined(separator: " "), status: 127, output: "\(argv.first ?? "") not found")
        }
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = Array(argv.dropFirst())
        process.standardInput = input
        process.standardOutput = output
        process.standardError = errors
        output.fileHandleForReading.readabilityHandler = { [weak self] handle in
            let data = handle.availableData
            guard let self, !data.isEmpty else { handle.readabilityHandler = nil; return }
            self.lock.withLock {
                self.pending.append(data)
                while let newline = self.pending.firstIndex(of: UInt8(ascii: "\n")) {
                    self.stdoutLines.append(String(decoding: self.pending[..<newline], as: UTF8.self))
                    self.pending.removeSubrange(...newline)
                }
            }
        }
        errors.fileHandleForReading.readabilityHandler = { [weak self] handle in
            let data = handle.availableData
            guard let self, !data.isEmpty else { handle.readabilityHandler = nil; return }
            self.lock.withLock { self.stderrText += String(decoding: data, as: UTF8.self) }
        }
        do { try process.run() } catch {
            throw CommandFailed(command: argv.joined(separator: " "), status: 127, output: "\(error)")
        }
    }

    /// The stdout lines so far.
    var lines: [String] { lock.withLock { stdoutLines } }

    /// The stdout lines so far that are JSON objects.
    var objects: [[String: Any]] {
        lines.compactMap { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any] }
    }

    /// Everything it printed, for failure messages.
    var transcript: String {
        lock.withLock { "--- \(name) stdout:\n" + stdoutLines.joined(separator: "\n") + "\n--- \(name) stderr:\n" + stderrText }
    }

    /// Writes one line to its stdin (nothing when it has exited).
    func send(_ line: String) {
        guard process.isRunning else { return }
        try? input.fileHandleForWriting.write(contentsOf: Data((line + "\n").utf8))
    }

    /// SIGKILLs it (by pid) and waits for it. Idempotent.
    func kill() {
        if process.isRunning { Glibc.kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        try? input.fileHandleForWriting.close()
    }
}

/// The namespaces of the diagram above; names carry the test process's pid so runs in
/// parallel do not collide. ``tearDown()`` removes all of them (and with them the veths).
final class NATNetwork: @unchecked Sendable {
    static let prefix = "peernat"
    let tag = "\(NATNetwork.prefix)\(getpid())"
    private(set) var namespaces: [String] = []

    /// The namespace called `role` (pub, natA, natB, privA, privB) in this run.
    func ns(_ role: String) -> String { "\(tag)-\(role)" }

    /// Creates the namespaces, links, addresses, routes, NAT and firewall.
    /// - Throws: ``NamespacesUnavailable`` when `ip netns add` fails or a step is not
    ///   permitted (not root, no CAP_NET_ADMIN); ``CommandFailed`` for any other failure.
    func build() throws {
        removeStale()
        do { try make() } catch let error as CommandFailed
            where namespaces.isEmpty || error.output.contains("Operation not permitted") || error.output.contains("Permission denied") {
            throw NamespacesUnavailable(cause: error)
        }
    }

    /// The steps of ``build()``, in order; every namespace made is recorded for ``tearDown()``.
    private func make() throws {
        for role in ["pub", "natA", "natB", "privA", "privB"] {
            try runCommand(["ip", "netns", "add", ns(role)])
            namespaces.append(ns(role))
            try runCommand(["ip", "-n", ns(role), "link", "set", "lo", "up"])
        }
        try runCommand(["ip", "-n", ns("pub"), "link", "add", "br0", "type", "bridge"])
        try runCommand(["ip", "-n", ns("pub"), "addr", "add", "198.18.0.1/24", "dev", "br0"])
        try runCommand(["ip", "-n", ns("pub"), "link", "set", "br0", "up"])
        for (site, wan, net) in [("A", "198.18.0.2", 1), ("B", "198.18.0.3", 2)] {
            let nat = ns("nat\(site)"), priv = ns("priv\(site)")
            // Public side: natX's `wan` on pub's bridge.
            try runCommand(["ip", "link", "add", "to\(site)", "netns", ns("pub"), "type", "veth", "peer", "name", "wan", "netns", nat])
            try runCommand(["ip", "-n", ns("pub"), "link", "set", "to\(site)", "master", "br0", "up"])
            try runCommand(["ip", "-n", nat, "addr", "add", "\(wan)/24", "dev", "wan"])
            try runCommand(["ip", "-n", nat, "link", "set", "wan", "up"])
            // Private side: privX's eth0 behind natX's `lan`, default route through the NAT.
            try runCommand(["ip", "link", "add", "lan", "netns", nat, "type", "veth", "peer", "name", "eth0", "netns", priv])
            try runCommand(["ip", "-n", nat, "addr", "add", "198.19.\(net).1/24", "dev", "lan"])
            try runCommand(["ip", "-n", nat, "link", "set", "lan", "up"])
            try runCommand(["ip", "-n", priv, "addr", "add", "198.19.\(net).2/24", "dev", "eth0"])
            try runCommand(["ip", "-n", priv, "link", "set", "eth0", "up"])
            try runCommand(["ip", "-n", priv, "route", "add", "default", "via", "198.19.\(net).1"])
            try runCommand(["ip", "netns", "exec", nat, "sysctl", "-qw", "net.ipv4.ip_forward=1"])
            try runCommand(["ip", "netns", "exec", nat, "iptables", "-t", "nat", "-A", "POSTROUTING", "-o", "wan", "-j", "MASQUERADE"])
            // Like a home router, the NAT itself drops unsolicited packets from outside.
            // Without this, a peer's check that reaches the NAT before the hole is
            // punched leaves a conntrack entry for the NAT's own address, and
            // MASQUERADE then maps the private agent's reply to a *different* port:
            // both sides see only new ports and ICE fails.
            try runCommand(["ip", "netns", "exec", nat, "iptables", "-A", "INPUT", "-i", "wan", "-m", "conntrack",
                            "--ctstate", "NEW", "-j", "DROP"])
        }
    }

    /// Deletes this run's namespaces; the veths go with them. Processes inside must be
    /// gone first (or the namespace outlives its name). Idempotent.
    func tearDown() {
        for name in namespaces.reversed() { _ = try? runCommand(["ip", "netns", "del", name]) }
        namespaces = []
    }

    /// Deletes namespaces an earlier run left behind when it was killed (its pid is gone).
    private func removeStale() {
        let list = (try? runCommand(["ip", "netns", "list"])) ?? ""
        for line in list.split(separator: "\n") {
            guard let name = line.split(separator: " ").first, name.hasPrefix(NATNetwork.prefix),
                  let pid = Int32(name.dropFirst(NATNetwork.prefix.count).prefix { $0.isNumber }),
                  Glibc.kill(pid, 0) != 0, errno == ESRCH else { continue }
            _ = try? runCommand(["ip", "netns", "del", String(name)])
        }
    }
}

@Suite struct NATTests {
    @Test(.timeLimit(.minutes(1)))
    func agentsBehindTwoNATsGatherTheirPublicAddressAndConnectThroughThem() async throws {
        signal(SIGPIPE, SIG_IGN)  // a probe that died must not take the test process with it
        let probe = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("ice-probe").path
        try #require(FileManager.default.isExecutableFile(atPath: probe),
                     "\(probe) not built: run swift build --build-tests (ice-probe is built next to the test bundle)")
        let turnserver = ProcessInfo.processInfo.environment["PEER_TURNSERVER"] ?? "turnserver"
        try #require(executablePath(turnserver) != nil, "turnserver not found (run scripts/bootstrap)")
        let dir = TestServices.temporaryDirectory("nat")
        let net = NATNetwork()
        var processes: [LineProcess] = []
        defer {
            for p in processes { p.kill() }
            net.tearDown()
            try? FileManager.default.removeItem(atPath: dir)
        }
        try await TestServices.offload { try net.build() }  // blocking commands, off the cooperative pool

        // coturn on the public network, flags as scripts/services starts it.
        let turnLog = "\(dir)/turn.log"
        let turn = try LineProcess(name: "turnserver", ["ip", "netns", "exec", net.ns("pub"), turnserver, "-n",
            "--listening-ip", "198.18.0.1", "--relay-ip", "198.18.0.1", "--listening-port", "3478",
            "--min-port", "49152", "--max-port", "49351", "--lt-cred-mech", "--user", "peer:peerpass", "--realm", "peer.test",
            "--no-tls", "--no-dtls", "--no-cli", "--allow-loopback-peers", "--log-file", turnLog, "--simple-log",
            "--no-stdout-log", "--verbose", "--pidfile", "\(dir)/turn.pid", "--userdb", "\(dir)/turndb"])
        processes.append(turn)
        // Ready when a Binding request from each private net answers with its NAT's address.
        let stun = "stun:198.18.0.1:3478"
        for (site, nat) in [("A", "198.18.0.2"), ("B", "198.18.0.3")] {
            let (mapped, last) = try await TestServices.offload { () -> (Bool, String) in
                var last = ""
                let deadline = Date().addingTimeInterval(10)
                while Date() < deadline {
                    do {
                        last = try runCommand(["ip", "netns", "exec", net.ns("priv\(site)"), TestServices.script, "stun", stun], timeout: 5)
                    } catch { last = "\(error)"; if !turn.process.isRunning { break } }
                    if last.contains("\"\(nat):") { return (true, last) }
                    usleep(10_000)
                }
                return (false, last)
            }
            let log = (try? String(contentsOfFile: turnLog, encoding: .utf8)) ?? "(no log)"
            try #require(mapped && last.contains("\"\(nat):"),
                         "STUN from priv\(site) through its NAT: \(last)\n\(turn.transcript)\n--- turn.log tail:\n\(log.suffix(2000))")
        }

        // One agent in each private net, gathering on its private address.
        let a = try LineProcess(name: "A", ["ip", "netns", "exec", net.ns("privA"), probe, "controlling", stun, "--local-address", "198.19.1.2"])
        processes.append(a)
        let b = try LineProcess(name: "B", ["ip", "netns", "exec", net.ns("privB"), probe, "controlled", stun, "--local-address", "198.19.2.2"])
        processes.append(b)
        let transcripts = { a.transcript + "\n" + b.transcript }

        // The test is the signaling: credentials, candidates and end-of-candidates are
        // relayed line by line, as they appear.
        func relay(_ from: LineProcess, _ to: LineProcess) {
            let lines = from.lines
            for line in lines[from.relayed...] {
                guard let o = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any] else { continue }
                if o["ufrag"] != nil || o["candidate"] != nil || o["gathering"] != nil { to.send(line) }
            }
            from.relayed = lines.count
        }
        func has(_ p: LineProcess, _ key: String, _ value: String) -> Bool { p.objects.contains { $0[key] as? String == value } }
        let connected = await eventually(within: 15) {
            relay(a, b)
            relay(b, a)
            let done = { (p: LineProcess) in has(p, "state", "connected") && p.objects.contains { $0["selected"] != nil } }
            return (done(a) && done(b)) || has(a, "state", "failed") || has(b, "state", "failed")
        }

        // Each gathered a UDP srflx candidate carrying its NAT's public address.
        func candidates(_ p: LineProcess) -> [Candidate] {
            p.objects.compactMap { ($0["candidate"] as? String).flatMap { try? Candidate(parsing: $0) } }
        }
        func srflx(_ p: LineProcess, _ nat: String, _ privateAddress: String) -> [Candidate] {
            candidates(p).filter { $0.type == .srflx && !$0.isTCP && $0.address == nat && $0.relatedAddress == privateAddress }
        }
        let srflxA = srflx(a, "198.18.0.2", "198.19.1.2"), srflxB = srflx(b, "198.18.0.3", "198.19.2.2")
        #expect(!srflxA.isEmpty, "A has no srflx candidate 198.18.0.2 raddr 198.19.1.2\n\(transcripts())")
        #expect(!srflxB.isEmpty, "B has no srflx candidate 198.18.0.3 raddr 198.19.2.2\n\(transcripts())")
        try #require(connected && has(a, "state", "connected") && has(b, "state", "connected"),
                     "the agents did not both connect through the NATs within 15 s\n\(transcripts())")

        // The selected pair goes through the NATs: the remote is the other's public address.
        func selectedRemote(_ p: LineProcess) -> Candidate? {
            p.objects.compactMap { (($0["selected"] as? [String: Any])?["remote"] as? String).flatMap { try? Candidate(parsing: $0) } }.last
        }
        func isPublic(_ c: Candidate?, of other: [Candidate], _ nat: String) -> Bool {
            guard let c, c.address == nat else { return false }
            return c.type == .prflx || (c.type == .srflx && other.contains { $0.port == c.port })
        }
        #expect(isPublic(selectedRemote(a), of: srflxB, "198.18.0.3") || isPublic(selectedRemote(b), of: srflxA, "198.18.0.2"),
                "selected remotes: A \(selectedRemote(a)?.sdpValue ?? "none"), B \(selectedRemote(b)?.sdpValue ?? "none")")

        // 100 numbered datagrams each way.
        a.send(#"{"send":100}"#)
        b.send(#"{"send":100}"#)
        func received(_ p: LineProcess) -> Int { p.objects.compactMap { $0["received"] as? Int }.max() ?? 0 }
        let delivered = await eventually(within: 10) { received(a) >= 100 && received(b) >= 100 }
        #expect(delivered && received(a) == 100 && received(b) == 100,
                "datagrams received: A \(received(a)), B \(received(b)) of 100\n\(transcripts())")
    }
}
