// A lost connectivity check re-checked at once (RFC 8445 §7.3.1.4) instead of after libnice's 500 ms: the Binding requests CheckTriggers sends before the first connection, and the round trip the agent measures on its checks (CheckRoundTrip).
import Foundation
import Testing
import TestSupport
@testable import ICE

@Suite(.serialized) struct CheckTriggerTests {
    /// Two agents on 127.0.0.1 (UDP only, the restart of failed checks off: this feature
    /// alone). For the first 200 ms every STUN Binding request arriving at the controlled
    /// agent's port is dropped: the controlling side's checks, which carry its nomination,
    /// are lost, while the controlled side's check gets its answer and waits for a
    /// nomination. libnice sends the controlling side's check again only after 500 ms.
    /// With requests every 50 ms from the controlled side, one reaching the controlling
    /// side once the rule is out makes it check again at once, and both connect within a
    /// few request intervals of the rule's end; without them, not before libnice's 500 ms.
    @Test(arguments: [50, 0] as [UInt32])
    func aLostNominatingCheckIsSentAgainAtOnce(intervalMs: UInt32) async throws {
        let adjust: (inout IceAgent.Configuration) -> Void = {
            $0.checkTriggerIntervalMs = intervalMs
            $0.restartsFailedChecks = false
        }
        let a = try Peer(.udpLoopback(controlling: true, adjust))
        let b = try Peer(.udpLoopback(controlling: false, adjust))
        defer { a.agent.close(); b.agent.close() }
        try await Peer.gather(a, b)
        let port = try #require(b.candidates.first { $0.transport.lowercased() == "udp" }?.port)
        let rule = await StunDropRule(port: port, messageType: 0x0001)
        let start = Date()
        try Peer.introduce(a, b)
        try await Task.sleep(for: .milliseconds(200))
        await rule.remove()
        let ruleOut = Date()
        #expect(await a.waitState(.connected, 5), "\(a.states)")
        #expect(await b.waitState(.connected, 5), "\(b.states)")
        let connected = [a, b].compactMap { $0.time(of: .state(.connected)) }.max() ?? Date()
        let sent = b.agent.checkTriggersSent
        print("check triggers every \(intervalMs) ms: both connected \(Int(connected.timeIntervalSince(start) * 1000)) ms after "
              + "checks started, \(Int(connected.timeIntervalSince(ruleOut) * 1000)) ms after the rule's end; "
              + "\(sent) requests from the controlled side; round trip a \(String(describing: a.agent.roundTripMs)), "
              + "b \(String(describing: b.agent.roundTripMs))")
        if intervalMs > 0 {
            #expect(sent >= 2, "requests in 200 ms at 50 ms: \(sent)")
            // A request at most 50 ms after the rule's end, then a round trip; room for load.
            #expect(connected.timeIntervalSince(ruleOut) < 0.3, "connected \(connected.timeIntervalSince(ruleOut)) s after the rule's end")
            // Connected: no more requests.
            let after = sent
            try await Task.sleep(for: .milliseconds(300))
            #expect(b.agent.checkTriggersSent == after)
            // The checks' time holds the outage: no round trip to measure.
            #expect(a.agent.roundTripMs == nil && b.agent.roundTripMs == nil)
        } else {
            #expect(sent == 0)
            #expect(connected.timeIntervalSince(start) >= 0.45, "connected \(connected.timeIntervalSince(start)) s after start")
            // The controlling side waited for libnice's resend: no round trip to measure.
            #expect(a.agent.roundTripMs == nil)
        }
    }

    /// Without loss the agents measure their checks' round trip (from `checking` with the
    /// remote credentials to `connected`: on loopback a few ms, libnice's pacing and this
    /// machine's scheduling), and an ICE restart forgets it until the new checks connect.
    /// (Requests of CheckTriggers would void the sample; their first comes after 500 ms
    /// here, so that a loaded machine's slow set-up still gives one.)
    @Test func theChecksRoundTripIsMeasuredAndForgottenOnRestart() async throws {
        let adjust: (inout IceAgent.Configuration) -> Void = { $0.checkTriggerIntervalMs = 500 }
        let a = try Peer(.udpLoopback(controlling: true, adjust))
        let b = try Peer(.udpLoopback(controlling: false, adjust))
        defer { a.agent.close(); b.agent.close() }
        #expect(a.agent.roundTripMs == nil)
        try await Peer.gather(a, b)
        try Peer.introduce(a, b)
        #expect(await a.waitState(.connected))
        #expect(await b.waitState(.connected))
        let rtt = try #require(a.agent.roundTripMs), rttB = try #require(b.agent.roundTripMs)
        print("checks' round trip on loopback: controlling \(rtt) ms, controlled \(rttB) ms")
        #expect(rtt > 0 && rtt < 250 && rttB > 0 && rttB < 250)
        _ = a.agent.restart()
        #expect(a.agent.roundTripMs == nil)
    }
}
