// Checks that libnice failed start over until the time limit (IceAgent.Configuration
// .restartsFailedChecks): the stall at set-up under loss where the controlled side's check
// succeeded and waits for a nomination while every send of the controlling side's was lost.
import Foundation
import Testing
import TestSupport
@testable import ICE

@Suite(.serialized) struct FailedCheckRestartTests {
    /// Two agents on 127.0.0.1 (UDP only). For the first 3 s every STUN Binding request
    /// arriving at the controlled agent's port is dropped (iptables `u32` on the first two
    /// bytes of the UDP payload, 0x0001): the controlling side's checks (three sends,
    /// 0–2 s), which carry its nomination, are all lost, while the controlled side's check
    /// gets its response and waits for a nomination that never comes, sending nothing more. libnice alone fails both (the controlled side after its
    /// 5 s idle limit). With the restarts, the controlled side's checks start over when
    /// libnice fails them; its new request reaches the controlling side, whose failed pair
    /// is checked again (RFC 8445 §7.3.1.4), now answered, and nominated.
    @Test(arguments: [true, false])
    func aStallWhereNeitherSideChecksAnyMoreEnds(restarts: Bool) async throws {
        func configuration(controlling: Bool) -> IceAgent.Configuration {
            var c = IceAgent.Configuration(controlling: controlling)
            c.localAddresses = ["127.0.0.1"]
            c.trickle = false
            c.tcp = false
            c.restartsFailedChecks = restarts
            return c
        }
        let a = try Peer(configuration(controlling: true))
        let b = try Peer(configuration(controlling: false))
        defer { a.agent.close(); b.agent.close() }
        try await Peer.gather(a, b)
        let port = try #require(b.candidates.first { $0.transport.lowercased() == "udp" }?.port)
        let rule = ["INPUT", "-p", "udp", "-d", "127.0.0.1", "--dport", String(port),
                    "-m", "u32", "--u32", "0>>22&0x3C@8>>16=0x0001", "-j", "DROP"]
        #expect(await CheckRetransmissionTests.iptables(["-I"] + rule), "iptables could not add the rule (needs root, xt_u32)")
        var ruleIn = true
        defer { if ruleIn { _ = try? TestServices.runBlocking("/usr/sbin/iptables", ["-D"] + rule, timeout: 10) } }
        let start = Date()
        try Peer.introduce(a, b)
        try await Task.sleep(for: .seconds(3))
        #expect(!a.states.contains(.connected) && !b.states.contains(.connected), "a \(a.states), b \(b.states)")
        #expect(await CheckRetransmissionTests.iptables(["-D"] + rule))
        ruleIn = false
        if restarts {
            #expect(await a.waitState(.connected, 12), "\(a.states)")
            #expect(await b.waitState(.connected, 12), "\(b.states)")
            let at = [a, b].compactMap { $0.time(of: .state(.connected)) }.max().map { $0.timeIntervalSince(start) } ?? -1
            let restarted = a.agent.checkRestarts + b.agent.checkRestarts
            print("both connected \(String(format: "%.1f", at)) s after checks started; checks started over \(restarted) time(s)")
            #expect(restarted >= 1)
            #expect(!a.states.contains(.failed) && !b.states.contains(.failed), "a \(a.states), b \(b.states)")
        } else {
            #expect(await a.waitState(.failed, 12), "\(a.states)")
            #expect(await b.waitState(.failed, 12), "\(b.states)")
            #expect(!a.states.contains(.connected) && !b.states.contains(.connected))
            #expect(a.agent.checkRestarts == 0 && b.agent.checkRestarts == 0)
        }
    }
}
