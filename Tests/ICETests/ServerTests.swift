import Foundation
import Testing
import TestSupport
@testable import ICE

final class Lines: @unchecked Sendable {
    let lock = NSLock()
    var lines: [String] = []
    func add(_ s: String) { lock.withLock { lines.append(s) } }
    func all() -> [String] { lock.withLock { lines } }
}

@Suite(.serialized) struct IceServerTests {
    @Test func stunAndTurnURLsParse() async throws {
        let s = try IceServer("stun:127.0.0.1:3479")
        #expect(s.scheme == .stun && s.host == "127.0.0.1" && s.port == 3479 && s.transport == .udp && !s.isTURN)
        #expect(try IceServer("stun:stun.example.org").port == 3478)
        #expect(try IceServer("stuns:stun.example.org").port == 5349)
        let t = try IceServer("turn:[::1]:3480?transport=tcp", username: "u", password: "p")
        #expect(t.isTURN && t.host == "::1" && t.port == 3480 && t.transport == .tcp && t.username == "u")
        #expect(t.description == "turn:[::1]:3480?transport=tcp")
        #expect(try IceServer("TURN:h?transport=UDP").transport == .udp)
        #expect(try IceServer("turns:h").transport == .tcp)
        #expect(throws: IceServerError(url: "http://x", expected: "a stun:, stuns:, turn: or turns: URL")) { try IceServer("http://x") }
        #expect(throws: IceServerError(url: "stun:h?transport=udp", expected: "no query on a STUN URL")) { try IceServer("stun:h?transport=udp") }
        #expect(throws: IceServerError(url: "turn:h?transport=sctp", expected: "?transport=udp or ?transport=tcp")) { try IceServer("turn:h?transport=sctp") }
        #expect(throws: IceServerError(url: "stun:h:99999", expected: "a port 1-65535, not \"99999\"")) { try IceServer("stun:h:99999") }
        #expect(throws: IceServerError(url: "stun:", expected: "a host name or address")) { try IceServer("stun:") }
        #expect(throws: IceServerError(url: "stun://h", expected: "no \"//\" after the scheme (RFC 7064: stun:host:port)")) { try IceServer("stun://h") }
        #expect(throws: IceServerError(url: "stun:2001:db8::1", expected: "an IPv6 address in brackets: [2001:db8::1]:3478")) {
            try IceServer("stun:2001:db8::1")
        }
        var c = IceAgent.Configuration(controlling: true)
        c.servers = [try IceServer("stuns:127.0.0.1")]
        #expect(throws: IceError.server(IceServerError(url: "stuns:127.0.0.1:5349", expected: "stun: (libnice has no STUN over TLS)"))) {
            _ = try IceAgent(c, onEvent: { _ in }, onReceive: { _ in })
        }
        #expect(try IceServer("stun:localhost:3478").resolvedAddress().contains(where: { $0 == "." || $0 == ":" }))
    }

    @Test func gatheringAgainstCoturnPerformsARealBindingTransaction() async throws {
        let services = try await TestServices.shared()
        let stun = try #require(services.stun_url), port = try #require(services.turn_port)
        let lines = Lines()
        let log = NiceLog { lines.add($0) }
        defer { log.stop() }
        var c = IceAgent.Configuration(controlling: true)
        c.localAddresses = ["127.0.0.1"]
        c.tcp = false
        c.servers = [try IceServer(stun)]
        let a = try Peer(c)
        defer { a.agent.close() }
        try a.agent.gather()
        #expect(await a.waitGathered())
        // libnice's own log shows the Binding request to coturn's port and its answer.
        // libnice logs the Binding response arriving from coturn's address and port.
        let answers = lines.all().filter { $0.contains("inbound STUN packet") && $0.contains("from [127.0.0.1]:\(port) ") }
        #expect(!answers.isEmpty, "no inbound STUN packet from coturn in libnice's log; \(lines.all().count) lines seen")
        // On loopback the srflx address equals the host one, so libnice drops it as redundant.
        #expect(a.candidates.allSatisfy { $0.type == .host })
    }

    /// Two relay-only agents through TURN server `url` of `services`: they gather only
    /// relay candidates, connect relay/relay and carry paced datagrams both ways.
    func connectThroughRelay(_ url: String, _ services: ServiceInfo) async throws {
        func peer(_ controlling: Bool) throws -> Peer {
            var c = IceAgent.Configuration(controlling: controlling)
            c.localAddresses = ["127.0.0.1"]
            c.policy = .relay
            c.servers = [try IceServer(url, username: services.turn_user, password: services.turn_password)]
            return try Peer(c)
        }
        let a = try peer(true), b = try peer(false)
        defer { a.agent.close(); b.agent.close() }
        try a.agent.gather()
        try b.agent.gather()
        #expect(await a.waitGathered())
        #expect(await b.waitGathered())
        try #require(!a.candidates.isEmpty && !b.candidates.isEmpty, "no relay candidate from \(url)")
        #expect(a.candidates.allSatisfy { $0.type == .relay })
        #expect(b.candidates.allSatisfy { $0.type == .relay })
        a.agent.setRemoteCredentials(ufrag: b.agent.localUfrag, pwd: b.agent.localPwd)
        b.agent.setRemoteCredentials(ufrag: a.agent.localUfrag, pwd: a.agent.localPwd)
        for c in b.candidates { try a.agent.addRemoteCandidate(c) }
        for c in a.candidates { try b.agent.addRemoteCandidate(c) }
        a.agent.endOfRemoteCandidates()
        b.agent.endOfRemoteCandidates()
        #expect(await a.waitState(.connected))
        // Both sides: the controlled agent may select its pair (and accept sends) a moment
        // after the controlling one (seen once: b's first datagram refused, 199 of 200).
        #expect(await b.waitState(.connected))
        let pair = try #require(a.agent.selectedPair)
        #expect(pair.local.type == .relay && pair.remote.type == .relay)
        await exchange(a, b, count: 200, paceMs: 2)
    }

    /// Occurrences of `text` in coturn's log.
    func count(_ text: String, inLog path: String) -> Int {
        ((try? String(contentsOfFile: path, encoding: .utf8))?.components(separatedBy: text).count ?? 1) - 1
    }

    func relayPair(_ transport: String) async throws {
        let s = try await TestServices.shared()
        let turn = try #require(s.turn_url), log = try #require(s.turn_log)
        let allocationsBefore = count("ALLOCATE processed, success", inLog: log)
        let tcpBefore = count("tcp or tls connected", inLog: log)
        try await connectThroughRelay("\(turn)?transport=\(transport)", s)
        // coturn's log shows both agents' allocations (and, over TCP, their TCP connections).
        #expect(count("ALLOCATE processed, success", inLog: log) - allocationsBefore >= 2)
        if transport == "tcp" { #expect(count("tcp or tls connected", inLog: log) - tcpBefore >= 2) }
    }

    @Test func relayPolicyOverTurnUDPConnectsRelayToRelay() async throws { try await relayPair("udp") }
    @Test func relayPolicyOverTurnTCPConnectsRelayToRelay() async throws { try await relayPair("tcp") }

    /// TURN over TLS (`turns:`): a coturn of its own with the private CA's certificate.
    @Test func relayPolicyOverTurnsConnectsRelayToRelay() async throws {
        let dir = TestServices.temporaryDirectory("turns")
        defer {
            try? TestServices.stopBlocking(dir: dir)
            try? FileManager.default.removeItem(atPath: dir)
        }
        let s = try await TestServices.start(dir: dir, ["--only", "turn", "--turn-tls"])
        let turns = try #require(s.turns_url), log = try #require(s.turn_log)
        #expect(turns.hasPrefix("turns:127.0.0.1:"))
        try await connectThroughRelay(turns, s)
        #expect(count("ALLOCATE processed, success", inLog: log) >= 2)
        #expect(count("TLS", inLog: log) >= 1, "coturn's log shows the TLS connections")
    }

    @Test func wrongTurnCredentialsGiveAClearFailureNotAHang() async throws {
        let s = try await TestServices.shared()
        var c = IceAgent.Configuration(controlling: true)
        c.localAddresses = ["127.0.0.1"]
        c.policy = .relay
        c.servers = [try IceServer(try #require(s.turn_url), username: "peer", password: "wrong")]
        let a = try Peer(c)
        defer { a.agent.close() }
        try a.agent.gather()
        #expect(await a.waitGathered(15))
        // The failure follows gatheringComplete on the loop thread: wait for it, not past it.
        #expect(await a.wait(5) { $0.contains { if case .gatheringFailed = $0 { true } else { false } } })
        #expect(a.candidates.isEmpty)
        let failure = a.lock.withLock { a.events.compactMap { if case .gatheringFailed(let r) = $0 { r } else { nil } } }
        #expect(failure.first?.contains("no relay candidate") == true, "\(failure)")
    }
}
