// Connectivity-check retransmission under a long outage at set-up (RFC 8445 §14.3):
// with 6 sends per check a controlling side that hears nothing for its first 6 s still
// connects; with libnice's 3 (the default, see checkRetransmissions) and no restart of
// failed checks (restartsFailedChecks off: libnice's own behaviour) the same call fails.
import Foundation
import Testing
import TestSupport
@testable import ICE

@Suite(.serialized) struct CheckRetransmissionTests {
    /// Runs `iptables` in this network namespace; true on success.
    static func iptables(_ args: [String]) async -> Bool {
        ((try? await TestServices.run("/usr/sbin/iptables", args, timeout: 10))?.status ?? -1) == 0
    }

    /// Two agents on 127.0.0.1 (UDP only). Every datagram to the controlling agent's port
    /// is dropped for its first 6 s of checks (an iptables rule on that port), so each of
    /// its checks and each triggered check of the controlled side is lost until then.
    /// With 6 sends of a check (at 0, 0.5, 1.5, 3.5, 7.5 and 15.5 s) and a 30 s idle
    /// limit, the send at 7.5 s gets through and both connect. With libnice's defaults
    /// (3 sends: 0, 0.5, 1.5 s, the check failing at 2 s; 5 s idle) and the restarts off
    /// both sides fail: their checks are over before the outage is.
    @Test(arguments: [6, 3])
    func aControllingSideDeafForSixSeconds(sends: UInt32) async throws {
        let connects = sends == 6
        let adjust: (inout IceAgent.Configuration) -> Void = {
            $0.checkRetransmissions = sends
            $0.idleTimeoutMs = connects ? 30_000 : 5_000
            $0.restartsFailedChecks = false  // libnice's own behaviour (FailedCheckRestartTests has the rest)
            $0.checkTriggerIntervalMs = 0  // and CheckTriggerTests
        }
        let a = try Peer(.udpLoopback(controlling: true, adjust))
        let b = try Peer(.udpLoopback(controlling: false, adjust))
        defer { a.agent.close(); b.agent.close() }
        try a.agent.gather()
        try b.agent.gather()
        #expect(await a.waitGathered())
        #expect(await b.waitGathered())
        let port = try #require(a.candidates.first { $0.transport.lowercased() == "udp" }?.port)
        let rule = ["INPUT", "-p", "udp", "-d", "127.0.0.1", "--dport", String(port), "-j", "DROP"]
        #expect(await Self.iptables(["-I"] + rule), "iptables could not add the rule (needs root)")
        var ruleIn = true
        defer { if ruleIn { _ = try? TestServices.runBlocking("/usr/sbin/iptables", ["-D"] + rule, timeout: 10) } }
        a.agent.setRemoteCredentials(ufrag: b.agent.localUfrag, pwd: b.agent.localPwd)
        b.agent.setRemoteCredentials(ufrag: a.agent.localUfrag, pwd: a.agent.localPwd)
        let start = Date()
        for c in b.candidates { try a.agent.addRemoteCandidate(c) }
        for c in a.candidates { try b.agent.addRemoteCandidate(c) }
        try await Task.sleep(for: .seconds(6))
        #expect(!a.states.contains(.connected), "nothing reached the controlling side, yet it connected")
        #expect(await Self.iptables(["-D"] + rule))
        ruleIn = false
        if connects {
            #expect(await a.waitState(.connected, 15), "\(a.states)")
            #expect(await b.waitState(.connected, 15), "\(b.states)")
            let connectedAt = a.time(of: .state(.connected)).map { $0.timeIntervalSince(start) } ?? -1
            print("connected \(String(format: "%.1f", connectedAt)) s after checks started (the 6th send is at 7.5 s)")
            #expect(connectedAt > 6 && connectedAt < 10, "connected at \(connectedAt) s")
        } else {
            // libnice's defaults: the last send was at 1.5 s, the checks were over at
            // 2 s, and 5 s idle later each side fails.
            #expect(await a.waitState(.failed, 15), "\(a.states)")
            #expect(await b.waitState(.failed, 15), "\(b.states)")
            #expect(!a.states.contains(.connected) && !b.states.contains(.connected))
        }
    }
}
