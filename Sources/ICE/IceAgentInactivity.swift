// IceAgent's inactivity watch: `disconnected` after a silence while traffic is expected, `failed` after a longer one, and back when datagrams return (W3C RTCIceConnectionState; RFC 7675 §5.1's consent lifetime as the limit).
import CGLib

extension IceAgent {
    /// Says whether the remote is expected to send all the time (media negotiated toward
    /// us, so RTP/RTCP arrive at least every second): only then does a silence of
    /// ``Configuration/inactivityTimeoutMs`` mean `disconnected`. Does not wait.
    public func setExpectsTraffic(_ value: Bool) {
        _ = loop.async { [weak self] in
            guard let self, !self.isClosed else { return }
            self.expectsTraffic = value
            if value { self.lastReceiveUs = max(self.lastReceiveUs, g_get_monotonic_time()) }
            self.watchInactivity()
        }
    }

    /// Wakes when the silence would reach the next limit (``Configuration/inactivityTimeoutMs``
    /// while connected, ``Configuration/inactivityFailureMs`` while disconnected), so
    /// `disconnected` comes within a few ms of the timeout after the last datagram, with one
    /// wake-up per timeout while datagrams flow (loop thread).
    func watchInactivity() {
        guard inactivityTimer == 0, expectsTraffic, !isClosed, wasConnected, _state != .failed else { return }
        let silentMs = max(0, (g_get_monotonic_time() - lastReceiveUs) / 1000)
        let limit = gint64(_state == .disconnected ? configuration.inactivityFailureMs : configuration.inactivityTimeoutMs)
        let waitMs = UInt32(clamping: max(10, limit - silentMs))
        inactivityTimer = loop.after(milliseconds: waitMs) { [weak self] in
            guard let self else { return }
            self.inactivityTimer = 0
            guard !self.isClosed, self.expectsTraffic else { return }
            let silentMs = (g_get_monotonic_time() - self.lastReceiveUs) / 1000
            if silentMs >= gint64(self.configuration.inactivityFailureMs), self._state == .disconnected {
                self.stateBeforeInactivity = nil
                self.transition(to: .failed)
                return
            }
            if silentMs >= gint64(self.configuration.inactivityTimeoutMs), self._state == .connected || self._state == .completed {
                self.stateBeforeInactivity = self._state
                self.transition(to: .disconnected)
            }
            self.watchInactivity()
        }
    }
}
