import Foundation
import EventLoop
import Testing
import TestSupport
@testable import ICE

/// One agent plus what it reported, for tests.
final class Peer: @unchecked Sendable {
    let lock = NSLock()
    var events: [IceEvent] = []
    /// When each event arrived (on the loop thread), in the order of ``events``.
    var eventTimes: [Date] = []
    var received: [[UInt8]] = []
    var agent: IceAgent!
    let eventStream: AsyncStream<IceEvent>
    let continuation: AsyncStream<IceEvent>.Continuation
    /// Signalled after each event: what ``wait(_:_:)`` awaits.
    let changes = ChangeSignal()

    init(_ configuration: IceAgent.Configuration) throws {
        (eventStream, continuation) = AsyncStream.makeStream()
        agent = try IceAgent(configuration, onEvent: { [weak self] event in
            guard let self else { return }
            self.lock.withLock { self.events.append(event); self.eventTimes.append(Date()) }
            self.continuation.yield(event)
            self.changes.signal()
        }, onReceive: { [weak self] bytes in
            guard let self else { return }
            self.lock.withLock { self.received.append(bytes) }
        })
    }

    static func loopback(controlling: Bool, trickle: Bool = true) throws -> Peer {
        var c = IceAgent.Configuration(controlling: controlling)
        c.localAddresses = ["127.0.0.1"]
        c.trickle = trickle
        return try Peer(c)
    }

    var candidates: [Candidate] { lock.withLock { events.compactMap { if case .localCandidate(let c) = $0 { c } else { nil } } } }
    var states: [IceConnectionState] { lock.withLock { events.compactMap { if case .state(let s) = $0 { s } else { nil } } } }
    var receivedCount: Int { lock.withLock { received.count } }
    /// When `event` first arrived on the loop thread, if it did.
    func time(of event: IceEvent) -> Date? {
        lock.withLock { events.firstIndex(of: event).map { eventTimes[$0] } }
    }

    /// Waits until `condition` holds on the events reported so far, at most `seconds`:
    /// checked again as each event arrives.
    func wait(_ seconds: Double, _ condition: ([IceEvent]) -> Bool) async -> Bool {
        await changes.wait(within: seconds) { lock.withLock { condition(events) } }
    }

    /// Waits until gathering is complete, at most `seconds`.
    func waitGathered(_ seconds: Double = 10) async -> Bool { await wait(seconds) { $0.contains(.gatheringComplete) } }

    /// Starts gathering on both agents and waits until both are complete.
    static func gather(_ a: Peer, _ b: Peer) async throws {
        try a.agent.gather()
        try b.agent.gather()
        #expect(await a.waitGathered())
        #expect(await b.waitGathered())
    }

    /// Hands each agent the other's credentials and every candidate (vanilla ICE): checks start.
    static func introduce(_ a: Peer, _ b: Peer) throws {
        a.agent.setRemoteCredentials(ufrag: b.agent.localUfrag, pwd: b.agent.localPwd)
        b.agent.setRemoteCredentials(ufrag: a.agent.localUfrag, pwd: a.agent.localPwd)
        for c in b.candidates { try a.agent.addRemoteCandidate(c) }
        for c in a.candidates { try b.agent.addRemoteCandidate(c) }
    }

    /// Waits until the agent has reported connection state `state`, at most `seconds`.
    func waitState(_ state: IceConnectionState, _ seconds: Double = 10) async -> Bool {
        await wait(seconds) { $0.contains(.state(state)) }
    }
}

/// Sends `count` numbered datagrams from `a` to `b` and back, and checks every one arrived intact.
/// `paceMs` waits between datagrams: over TURN/TCP libnice queues what the TCP socket
/// cannot take yet and drops beyond its queue limit while reporting success, so a
/// relayed burst is paced as real media would be.
func exchange(_ a: Peer, _ b: Peer, count: Int, paceMs: UInt64 = 0) async {
    for i in 0..<count {
        let payload = [UInt8](repeating: UInt8(i & 0xff), count: 100) + withUnsafeBytes(of: UInt32(i).bigEndian, Array.init)
        #expect(a.agent.send(payload))
        #expect(b.agent.send(payload))
        if paceMs > 0 {
            try? await Task.sleep(nanoseconds: paceMs * 1_000_000)
        } else if i % 10 == 9 {
            // Let the loop thread drain its socket: a busy machine (every suite runs in
            // parallel) can leave it unscheduled long enough for a 1000-datagram burst to
            // overflow the kernel's receive buffer.
            try? await Task.sleep(nanoseconds: 2_000_000)
        }
    }
    _ = await eventually(within: 10) { a.receivedCount >= count && b.receivedCount >= count }
    #expect(a.receivedCount == count)
    #expect(b.receivedCount == count)
    for peer in [a, b] {
        let numbers = peer.lock.withLock { peer.received.map { Array($0.suffix(4)).reduce(0) { $0 << 8 | Int($1) } } }
        #expect(Set(numbers) == Set(0..<count))
    }
}

@Suite(.serialized) struct IceAgentTests {
    @Test func vanillaHostCandidatesConnectAndCarry1000DatagramsEachWay() async throws {
        let a = try Peer.loopback(controlling: true, trickle: false)
        let b = try Peer.loopback(controlling: false, trickle: false)
        defer { a.agent.close(); b.agent.close() }
        try a.agent.gather()
        try b.agent.gather()
        #expect(await a.waitGathered())
        #expect(await b.waitGathered())
        #expect(!a.candidates.isEmpty)
        #expect(a.candidates.allSatisfy { $0.type == .host && $0.address == "127.0.0.1" })
        #expect(a.agent.localUfrag.count >= 4 && a.agent.localPwd.count >= 22)
        // Vanilla: everything at once, after gathering.
        a.agent.setRemoteCredentials(ufrag: b.agent.localUfrag, pwd: b.agent.localPwd)
        b.agent.setRemoteCredentials(ufrag: a.agent.localUfrag, pwd: a.agent.localPwd)
        for c in b.candidates { try a.agent.addRemoteCandidate(c) }
        for c in a.candidates { try b.agent.addRemoteCandidate(c) }
        #expect(await a.waitState(.connected))
        #expect(await b.waitState(.connected))
        #expect(a.states.first == .checking)
        let pair = try #require(a.agent.selectedPair)
        #expect(pair.local.type == .host && pair.remote.type == .host)
        await exchange(a, b, count: 1000)
    }

    @Test func trickleCandidatesArrivingWithADelayConnect() async throws {
        let a = try Peer.loopback(controlling: true)
        let b = try Peer.loopback(controlling: false)
        defer { a.agent.close(); b.agent.close() }
        a.agent.setRemoteCredentials(ufrag: b.agent.localUfrag, pwd: b.agent.localPwd)
        b.agent.setRemoteCredentials(ufrag: a.agent.localUfrag, pwd: a.agent.localPwd)
        // Trickle: each candidate is passed on 50 ms after it appears.
        let forward = { (from: Peer, to: Peer) in
            Task {
                for await event in from.eventStream {
                    switch event {
                    case .localCandidate(let c):
                        try? await Task.sleep(nanoseconds: 50_000_000)
                        try? to.agent.addRemoteCandidate(c)
                    case .gatheringComplete:
                        try? await Task.sleep(nanoseconds: 50_000_000)
                        to.agent.endOfRemoteCandidates()
                    default: break
                    }
                }
            }
        }
        let t1 = forward(a, b), t2 = forward(b, a)
        defer { t1.cancel(); t2.cancel() }
        try a.agent.gather()
        try b.agent.gather()
        #expect(await a.waitState(.connected))
        #expect(await b.waitState(.connected))
        await exchange(a, b, count: 1000)
    }

    @Test func aRemoteThatNeverAnswersFailsWithinTheCheckingTimeout() async throws {
        var c = IceAgent.Configuration(controlling: true)
        c.localAddresses = ["127.0.0.1"]
        c.checkingTimeoutMs = 3_000
        let a = try Peer(c)
        defer { a.agent.close() }
        try a.agent.gather()
        #expect(await a.waitGathered())
        a.agent.setRemoteCredentials(ufrag: "ABCD", pwd: "0123456789012345678901")
        // A port where nothing answers.
        let port = try TakenPort.unused(type: SOCK_DGRAM)
        try a.agent.addRemoteCandidate(try Candidate(parsing: "candidate:1 1 udp 2130706431 127.0.0.1 \(port) typ host"))
        a.agent.endOfRemoteCandidates()
        let start = Date()
        #expect(await a.waitState(.failed, 10))
        // Timed by the event's arrival on the loop thread, not by when this test resumes
        // (on 2 cores with every suite in parallel, that can be seconds later).
        let elapsed = (a.time(of: .state(.failed)) ?? Date()).timeIntervalSince(start)
        #expect(elapsed >= 2.5 && elapsed < 6, "failed after \(elapsed) s; the checking timeout is 3 s")
        #expect(!a.states.contains(.connected))
    }

    /// A peer that gives no usable candidate at all (e.g. a relay-only offerer whose TURN
    /// allocation failed): no check ever starts, yet the time limit runs from the remote
    /// credentials, so the agent still ends in `failed` (a call waited forever so).
    @Test func noRemoteCandidateStillFailsAtTheCheckingTimeout() async throws {
        var c = IceAgent.Configuration.udpLoopback(controlling: false)
        c.checkingTimeoutMs = 2_000
        let a = try Peer(c)
        defer { a.agent.close() }
        try a.agent.gather()
        #expect(await a.waitGathered())
        let start = Date()
        a.agent.setRemoteCredentials(ufrag: "ABCD", pwd: "0123456789012345678901")
        #expect(await a.waitState(.failed, 8), "\(a.states)")
        let elapsed = (a.time(of: .state(.failed)) ?? Date()).timeIntervalSince(start)
        #expect(elapsed >= 1.8 && elapsed < 5, "failed after \(elapsed) s; the checking timeout is 2 s")
    }

    /// Names of this process's threads that GLib or libnice started (not Swift's pool).
    static func glibThreads() -> [String] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tasks.compactMap { try? String(contentsOfFile: "/proc/self/task/\($0)/comm", encoding: .utf8) }
            .map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
            .filter { $0.hasPrefix("g") || $0.hasPrefix("pool") || $0.contains("nice") }
    }

    @Test func closeReportsClosedAndReleasesItsSockets() async throws {
        var threadsAfterFirst: [String] = []
        var ports: [Int] = []
        for round in 0..<5 {
            let a = try Peer.loopback(controlling: true)
            try a.agent.gather()
            #expect(await a.waitGathered())
            ports += a.candidates.filter { !$0.isTCP }.map(\.port)
            a.agent.close()
            a.agent.close()
            #expect(a.states.last == .closed)
            #expect(a.agent.send([1, 2, 3]) == false)
            if round == 0 { threadsAfterFirst = Self.glibThreads() }  // GLib's pools start on first use
        }
        // Sockets and threads are released on the loop thread (within the 0.2 s this always allowed).
        _ = await eventually(within: 0.2) {
            boundLoopbackUDPPorts(ports).isEmpty && Self.glibThreads().count <= threadsAfterFirst.count
        }
        // The agents' UDP sockets are gone (checked by port in /proc/net/udp, not by counting
        // this process's descriptors, which tests running in parallel open and close).
        #expect(ports.count >= 5)
        let udp = (try? String(contentsOfFile: "/proc/net/udp", encoding: .utf8)) ?? ""
        for port in ports {
            #expect(!udp.contains(String(format: "0100007F:%04X ", port)), "UDP 127.0.0.1:\(port) still bound")
        }
        let threadsAfter = Self.glibThreads()
        #expect(threadsAfter.count <= threadsAfterFirst.count, "GLib threads after one agent \(threadsAfterFirst), after five \(threadsAfter)")
    }

    @Test func componentTwoCandidatesAreRefusedUnderRtcpMux() throws {
        let a = try Peer.loopback(controlling: true)
        defer { a.agent.close() }
        let c = try Candidate(parsing: "candidate:1 2 udp 2130706430 127.0.0.1 5001 typ host")
        #expect(throws: IceError.remoteCandidate(candidate: c.sdpValue, reason: "component 2 is not used (rtcp-mux: everything on component 1)")) {
            try a.agent.addRemoteCandidate(c)
        }
    }

    /// A `.local` name that does not resolve (this host's resolver refuses it) is taken
    /// without blocking, then reported dropped with the resolver's reason.
    @Test func unresolvableMdnsCandidateIsDroppedWithItsReason() async throws {
        let a = try Peer.loopback(controlling: true)
        defer { a.agent.close() }
        let c = try Candidate(parsing: "candidate:1 1 udp 2122194687 0b0c0d0e-aaaa-bbbb-cccc-111122223333.local 50001 typ host")
        try a.agent.addRemoteCandidate(c)
        #expect(await a.wait(5) { events in
            events.contains { if case let .remoteCandidateDropped(candidate, reason) = $0 {
                candidate == c.sdpValue
                    && (reason.hasPrefix("\(c.address) does not resolve") || reason.hasPrefix("\(c.address) did not resolve within"))
            } else { false } }
        }, "\(a.lock.withLock { a.events })")
    }
}

@Suite struct IceRestartTests {
    /// ICE restart (RFC 8445 §9): new credentials on both sides, candidates exchanged
    /// again, and the pair connects and carries datagrams again.
    @Test func restartGivesNewCredentialsAndReconnects() async throws {
        let a = try Peer.loopback(controlling: true, trickle: false)
        let b = try Peer.loopback(controlling: false, trickle: false)
        defer { a.agent.close(); b.agent.close() }
        func connect() async throws {
            try a.agent.gather()
            try b.agent.gather()
            #expect(await a.wait(10) { $0.filter { $0 == .gatheringComplete }.count >= 1 })
            #expect(await b.wait(10) { $0.filter { $0 == .gatheringComplete }.count >= 1 })
            a.agent.setRemoteCredentials(ufrag: b.agent.localUfrag, pwd: b.agent.localPwd)
            b.agent.setRemoteCredentials(ufrag: a.agent.localUfrag, pwd: a.agent.localPwd)
            for c in b.candidates { try a.agent.addRemoteCandidate(c) }
            for c in a.candidates { try b.agent.addRemoteCandidate(c) }
        }
        try await connect()
        #expect(await a.waitState(.connected))
        let (oldUfrag, oldPwd) = (a.agent.localUfrag, a.agent.localPwd)
        let eventsBefore = a.lock.withLock { a.events.count }
        let (newUfrag, newPwd) = a.agent.restart()
        _ = b.agent.restart()
        #expect(newUfrag != oldUfrag && newPwd != oldPwd)
        #expect(a.agent.localUfrag == newUfrag)
        a.lock.withLock { a.received.removeAll() }
        b.lock.withLock { b.received.removeAll() }
        // libnice keeps the local candidates over a restart: signal them again.
        let seenA = a.candidates.count, seenB = b.candidates.count
        a.agent.setRemoteCredentials(ufrag: b.agent.localUfrag, pwd: b.agent.localPwd)
        b.agent.setRemoteCredentials(ufrag: a.agent.localUfrag, pwd: a.agent.localPwd)
        for c in b.candidates.prefix(seenB) { try? a.agent.addRemoteCandidate(c) }
        for c in a.candidates.prefix(seenA) { try? b.agent.addRemoteCandidate(c) }
        // After the restart the agent checks again and connects again.
        #expect(await a.wait(10) { events in
            let after = events.dropFirst(eventsBefore)
            guard let checking = after.firstIndex(of: .state(.checking)) else { return false }
            return after[checking...].contains(.state(.connected))
        }, "\(a.states)")
        await exchange(a, b, count: 100)
    }
}
