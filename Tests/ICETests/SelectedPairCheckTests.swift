// ICE connected on one side only (RFC 8445 §7.3.1.4): the controlled side's checks all
// lose their responses, the controlling side connects; its Binding requests on the
// selected pair (SelectedPairChecks) make the controlled side check again and connect.
import Foundation
import Testing
import TestSupport
@testable import ICE

@Suite(.serialized) struct SelectedPairCheckTests {
    /// Two agents on 127.0.0.1 (UDP only). For the first 3 s every STUN success response
    /// (type 0x0101, the first two bytes of the UDP payload, matched with iptables `u32`)
    /// arriving at the controlled agent's port is dropped: the controlling side's
    /// nominating check succeeds at once, each check of the controlled side fails (three
    /// sends, 0–2 s). With requests on the selected pair every 250 ms the controlled side
    /// checks again after the outage and connects within about 1 s of its end; with them
    /// off (interval 0) a connected libnice agent sends no further check, so the
    /// controlled side is still not connected 3 s after the outage.
    @Test(arguments: [250, 0] as [UInt32])
    func aControlledSideWhoseChecksFailedConnects(intervalMs: UInt32) async throws {
        let adjust: (inout IceAgent.Configuration) -> Void = {
            $0.selectedPairCheckIntervalMs = intervalMs
            $0.restartsFailedChecks = false  // this feature alone (FailedCheckRestartTests has the other)
            $0.checkTriggerIntervalMs = 0  // and CheckTriggerTests
        }
        let a = try Peer(.udpLoopback(controlling: true, adjust))
        let b = try Peer(.udpLoopback(controlling: false, adjust))
        defer { a.agent.close(); b.agent.close() }
        try await Peer.gather(a, b)
        let port = try #require(b.candidates.first { $0.transport.lowercased() == "udp" }?.port)
        let rule = await StunDropRule(port: port, messageType: 0x0101)
        try Peer.introduce(a, b)
        #expect(await a.waitState(.connected, 2), "the controlling side's check had its response: \(a.states)")
        try await Task.sleep(for: .seconds(3))
        #expect(!b.states.contains(.connected), "every response to the controlled side was dropped, yet it connected")
        await rule.remove()
        let outageEnd = Date()
        let sentDuringOutage = a.agent.selectedPairChecksSent
        if intervalMs > 0 {
            #expect(sentDuringOutage >= 6, "requests sent in ~3 s at 250 ms: \(sentDuringOutage)")
            #expect(await b.waitState(.connected, 3), "\(b.states)")
            let after = b.time(of: .state(.connected)).map { $0.timeIntervalSince(outageEnd) } ?? -1
            print("controlled side connected \(String(format: "%.2f", after)) s after the outage; "
                  + "\(sentDuringOutage) requests on the selected pair during it")
            #expect(after < 2, "connected \(after) s after the outage")
            // Both connected and no datagram came from the peer: the requests go on, at
            // most one per 250 ms.
            try await Task.sleep(for: .milliseconds(600))
            let more = a.agent.selectedPairChecksSent
            #expect(more > sentDuringOutage && more <= sentDuringOutage + 20)
        } else {
            #expect(sentDuringOutage == 0)
            #expect(!(await b.waitState(.connected, 3)), "connected without requests on the selected pair: \(b.states)")
        }
    }

    /// A datagram from the peer (DTLS or media, here 10 bytes of 0x80 RTP-looking data)
    /// ends the requests: the peer has a selected pair.
    @Test func requestsStopWhenThePeerSends() async throws {
        let a = try Peer.loopback(controlling: true, trickle: false)
        let b = try Peer.loopback(controlling: false, trickle: false)
        defer { a.agent.close(); b.agent.close() }
        try await Peer.gather(a, b)
        try Peer.introduce(a, b)
        #expect(await a.waitState(.connected, 5))
        #expect(await b.waitState(.connected, 5))
        try await Task.sleep(for: .milliseconds(700))
        let before = a.agent.selectedPairChecksSent
        #expect(before >= 1, "connected 700 ms with a silent peer: at least one request")
        #expect(b.agent.send([UInt8](repeating: 0x80, count: 10)))
        #expect(await eventually(within: 5) { a.receivedCount == 1 })
        let stopped = a.agent.selectedPairChecksSent
        try await Task.sleep(for: .milliseconds(800))
        #expect(a.agent.selectedPairChecksSent == stopped, "requests after the peer's datagram")
        #expect(stopped <= before + 1)
    }
}
