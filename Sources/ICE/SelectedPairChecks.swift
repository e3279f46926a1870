// Connectivity checks of the selected pair, sent until the peer's first datagram arrives,
// so a peer whose own check failed checks again (RFC 8445 §7.2.2, §7.3.1.4; RFC 7675 §5.1).
import CGLib
import EventLoop

/// Sends STUN Binding requests (``BindingRequestWriter``, USE-CANDIDATE when controlling)
/// on the selected pair every ``intervalMs`` while the agent is connected and nothing but
/// STUN has come from the peer.
///
/// Why: ICE may connect on one side only. Under loss the controlling side's nominating
/// check succeeds while the response to the controlled side's check is lost three times;
/// libnice then fails that pair there, and a connected libnice agent sends no further
/// check (only a binding indication every 25 s), so the peer never connects. A request
/// arriving on a failed pair makes the peer check it again (§7.3.1.4), so these requests
/// rescue it; they stop at the peer's first DTLS or media datagram, which proves it has
/// a selected pair. Responses to them are unmatched and dropped by libnice. Browsers do
/// the same in effect: libwebrtc keeps pinging the selected connection throughout.
/// Under loss the same holds for a peer whose nominating check or its answer was lost:
/// a request makes it check again at once, not after libnice's 500 ms.
///
/// Confined to the loop thread of its agent (every method is called there): the mutable
/// state and the STUN library's buffers are in a ``LoopBound`` that checks it.
final class SelectedPairChecks: Sendable {
    /// The requests sent, the timer, the current run and the request writer: loop thread only.
    private final class State {
        var sent = 0
        var timer: UInt32 = 0
        var startedUs: gint64 = 0
        var credentials: BindingRequestWriter.Credentials?
        let writer = BindingRequestWriter()
    }

    /// Time between requests, ms (``IceAgent/Configuration/selectedPairCheckIntervalMs``).
    let intervalMs: UInt32
    /// Requests stop this long after they started even if the peer stays silent, ms.
    let limitMs: UInt32
    private let loop: EventLoop
    private let send: @Sendable ([UInt8]) -> Bool
    private let confined: LoopBound<State>

    /// The mutable state. Precondition: called on the loop thread.
    private var state: State { confined.value }
    /// Requests sent so far (all runs). Precondition: called on the loop thread.
    var sent: Int { state.sent }

    /// - Parameters: `send` sends one datagram on the selected pair (false when it cannot).
    init(loop: EventLoop, intervalMs: UInt32 = 50, limitMs: UInt32, send: @escaping @Sendable ([UInt8]) -> Bool) {
        self.loop = loop
        self.intervalMs = intervalMs
        self.limitMs = limitMs
        self.send = send
        confined = LoopBound(State(), loop: loop)
    }

    /// Starts sending (the first request after ``intervalMs``), or updates the
    /// credentials if already sending.
    func start(_ credentials: BindingRequestWriter.Credentials) {
        let state = self.state
        state.credentials = credentials
        guard state.timer == 0 else { return }
        state.startedUs = g_get_monotonic_time()
        schedule()
    }

    /// Stops sending; ``start(_:)`` may start again (after an ICE restart).
    func stop() {
        let state = self.state
        loop.cancelTimer(state.timer)
        state.timer = 0
        state.credentials = nil
    }

    /// Sets the timer of the next request (loop thread).
    private func schedule() {
        state.timer = loop.after(milliseconds: intervalMs) { [weak self] in
            guard let self else { return }
            let state = self.state
            state.timer = 0
            guard let credentials = state.credentials,
                  (g_get_monotonic_time() - state.startedUs) / 1000 < gint64(self.limitMs) else { return }
            if let request = state.writer.request(credentials, nominate: true), self.send(request) { state.sent += 1 }
            if state.timer == 0 { self.schedule() }
        }
    }
}
