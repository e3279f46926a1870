// ConnectionStateMachine: the W3C connection state from ICE and DTLS (webrtc-pc §4.3.3), its failure reasons and set-up times.
import DTLS
import ICE
import Testing
@testable import PeerAgent
@testable import PeerCall

@Suite struct ConnectionStateMachineTests {
    /// The connection states among `events`, in order.
    static func states(_ events: [PeerConnectionEvent]) -> [PeerConnectionState] {
        events.compactMap { if case let .connectionState(s, _) = $0 { s } else { nil } }
    }

    /// new → connecting (ICE checking) → connecting (ICE connected, DTLS connecting) →
    /// connected (both); the first ICE and DTLS connections are flagged once, and the
    /// timings count from the first description.
    @Test func aCallThatConnects() {
        var m = ConnectionStateMachine(iceCheckingTimeoutMs: 30_000)
        m.descriptionSet(now: 1_000)
        m.descriptionSet(now: 1_500)  // the clock starts once
        var r = m.iceChanged(.checking, now: 1_010, dtlsError: nil)
        #expect(Self.states(r.events) == [.connecting] && !r.firstConnected)
        r = m.iceChanged(.connected, now: 1_070, dtlsError: nil)
        #expect(Self.states(r.events).isEmpty && r.firstConnected)
        r = m.dtlsChanged(.connecting, error: nil, now: 1_080)
        #expect(Self.states(r.events).isEmpty && !r.firstConnected)
        r = m.dtlsChanged(.connected, error: nil, now: 1_110)
        #expect(Self.states(r.events) == [.connected] && r.firstConnected)
        r = m.iceChanged(.completed, now: 1_200, dtlsError: nil)
        #expect(Self.states(r.events).isEmpty && !r.firstConnected)
        let t = m.timings(firstFrameMs: 1_127)
        #expect(t.iceConnectedMs == 70 && t.dtlsConnectedMs == 110 && t.firstRemoteFrameMs == 127)
    }

    /// ICE failing before any pair worked names the time since the description and the
    /// limit; after it had worked, the lost path; DTLS failing carries its error.
    @Test func failureReasonsNameTheStep() {
        var a = ConnectionStateMachine(iceCheckingTimeoutMs: 4_000)
        a.descriptionSet(now: 0)
        _ = a.iceChanged(.checking, now: 10, dtlsError: nil)
        let failed = a.iceChanged(.failed, now: 4_020, dtlsError: nil)
        #expect(Self.states(failed.events) == [.failed])
        #expect(a.failure == "ICE failed: no candidate pair worked, 4020 ms after the offer/answer, limit 4000 ms "
            + "(every pair's checks went unanswered, or the limit passed)")

        var b = ConnectionStateMachine(iceCheckingTimeoutMs: 4_000)
        _ = b.iceChanged(.connected, now: 10, dtlsError: nil)
        _ = b.dtlsChanged(.connected, error: nil, now: 20)
        _ = b.iceChanged(.disconnected, now: 5_000, dtlsError: nil)
        #expect(b.state == .disconnected)
        _ = b.iceChanged(.failed, now: 35_000, dtlsError: nil)
        #expect(b.failure?.hasPrefix("ICE failed: the path to the peer stopped working") == true)

        var c = ConnectionStateMachine(iceCheckingTimeoutMs: 4_000)
        _ = c.iceChanged(.connected, now: 10, dtlsError: nil)
        let d = c.dtlsChanged(.failed, error: .noPeerCertificate, now: 30)
        #expect(Self.states(d.events) == [.failed])
        #expect(c.failure == "DTLS failed: \(DTLSError.noPeerCertificate)")
    }

    /// `failed` is final (a later ICE recovery does not move it), and the peer's
    /// close_notify on a connected call closes it without a failure.
    @Test func failedIsFinalAndCloseNotifyCloses() {
        var m = ConnectionStateMachine(iceCheckingTimeoutMs: 1_000)
        _ = m.fail("no m-section was accepted")
        #expect(m.fail("again").isEmpty)
        _ = m.iceChanged(.connected, now: 5, dtlsError: nil)
        #expect(m.state == .failed && m.failure == "no m-section was accepted")

        var n = ConnectionStateMachine(iceCheckingTimeoutMs: 1_000)
        _ = n.iceChanged(.connected, now: 5, dtlsError: nil)
        _ = n.dtlsChanged(.connected, error: nil, now: 6)
        let closed = n.dtlsChanged(.closed, error: nil, now: 9_000)
        #expect(closed.events.contains(.connectionState(.closed, reason: "closed by the peer (DTLS close_notify)")))
        #expect(n.isClosed && n.failure == nil)
    }
}
