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
        let adjust: (inout IceAgent.Configuration) -> Void = {
            $0.restartsFailedChecks = restarts
            $0.checkTriggerIntervalMs = 0  // this feature alone (CheckTriggerTests has the other)
        }
        let a = try Peer(.udpLoopback(controlling: true, adjust))
        let b = try Peer(.udpLoopback(controlling: false, adjust))
        defer { a.agent.close(); b.agent.close() }
        try await Peer.gather(a, b)
        let port = try #require(b.candidates.first { $0.transport.lowercased() == "udp" }?.port)
        let rule = await StunDropRule(port: port, messageType: 0x0001)
        let start = Date()
        try Peer.introduce(a, b)
        try await Task.sleep(for: .seconds(3))
        #expect(!a.states.contains(.connected) && !b.states.contains(.connected), "a \(a.states), b \(b.states)")
        await rule.remove()
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
