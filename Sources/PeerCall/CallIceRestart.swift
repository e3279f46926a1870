// CallIceRestart: the automatic ICE restart of a call, as browser applications do it — the side that offered first re-offers with new credentials when ICE stays disconnected 5 s or fails; the call fails only when that restart does not connect in 15 s (RFC 8445 §9, RFC 8829 §5.2.2).
import PeerAgent
import Foundation

extension CallRun {
    /// How long ICE stays `disconnected` before the first offerer restarts it, seconds.
    static let iceRestartAfterSeconds = 5.0
    /// How long a restart has to connect before the call fails (exit 5), seconds.
    static let iceRestartLimitSeconds = 15.0
    /// After ICE `failed`, how long the first offerer waits before restarting, seconds: a
    /// peer that hangs up closes its agent (libnice fails our component at once) just
    /// after publishing `close`, which ends the call instead.
    static let iceRestartAfterFailureSeconds = 1.0

    /// The peer restarted ICE (its re-offer applied) during an outage: from now the restart
    /// has ``iceRestartLimitSeconds`` to connect, as ours would.
    func peerRestartedIce(_ link: CallLink) {
        guard link.iceDisconnectedSince != nil, link.iceRestartStartedAt == nil else { return }
        link.iceRestartStartedAt = Date()
    }

    /// ICE connected again on `link`: the outage (and any restart) is over.
    func iceReconnected(_ link: CallLink) {
        guard let since = link.iceDisconnectedSince else { return }
        link.iceDisconnectedSince = nil
        link.iceFailedAt = nil
        let restarted = link.iceRestartStartedAt != nil
        link.iceRestartStartedAt = nil
        onEvent(.iceRecovered(peer: link.peer, seconds: Date().timeIntervalSince(since), restarted: restarted))
    }

    /// The connection of an established call failed for ICE (`reason`): with automatic
    /// restarts on and no restart tried in this outage, the first offerer restarts
    /// ``iceRestartAfterFailureSeconds`` later (``iceRestartTick(_:)``) and either side waits
    /// for the restart instead of ending the call; returns true when it waits.
    func restartsIce(after reason: String, on link: CallLink) -> Bool {
        // A restart that failed too (its checks found nothing in 15 s) ends the call.
        guard options.restartsIce, link.established, !finishing, link.iceRestartStartedAt == nil else { return false }
        let now = Date()
        if link.iceDisconnectedSince == nil { link.iceDisconnectedSince = now }
        if link.iceFailedAt == nil { link.iceFailedAt = now }
        return true
    }

    /// Each tick: restarts ICE on links disconnected for ``iceRestartAfterSeconds`` (when we
    /// offered first), and ends the call (or the room link) whose restart did not connect
    /// within ``iceRestartLimitSeconds`` — for the side that waits for the peer's restart,
    /// counted from the outage plus the peer's 5 s.
    func iceRestartTick(_ now: Date) async -> CallResult? {
        guard options.restartsIce, !finishing else { return nil }
        for link in links.values.sorted(by: { $0.peer < $1.peer }) where link.established {
            guard let since = link.iceDisconnectedSince else { continue }
            if link.offerer, link.iceRestartStartedAt == nil {
                if now.timeIntervalSince(since) >= Self.iceRestartAfterSeconds {
                    await restartIce(link, because: "ICE disconnected for \(formatSeconds(Self.iceRestartAfterSeconds)) s")
                } else if let failed = link.iceFailedAt, now.timeIntervalSince(failed) >= Self.iceRestartAfterFailureSeconds {
                    await restartIce(link, because: "ICE failed")
                }
            }
            // (A backstop: the connection itself fails when the restarted checks run out.)
            let deadline = link.iceRestartStartedAt.map { $0.addingTimeInterval(Self.iceRestartLimitSeconds + 1) }
                ?? (link.offerer ? nil : since.addingTimeInterval(Self.iceRestartAfterSeconds + Self.iceRestartLimitSeconds + 1))
            guard let deadline, now >= deadline else { continue }
            let reason = link.iceRestartStartedAt != nil
                ? "ICE restart did not connect within \(formatSeconds(Self.iceRestartLimitSeconds)) s"
                : "ICE did not recover within \(formatSeconds(Self.iceRestartAfterSeconds + Self.iceRestartLimitSeconds)) s (no ICE restart from \(link.peer) connected)"
            link.failed = (ExitCode.ice, reason)
            guard profile.isMesh else { return await end(code: ExitCode.ice, state: .failed, reason: reason) }
            report(.failed, link.peer, reason)
            closeLink(link)
        }
        return nil
    }

    /// `link`'s peer announced itself again (room `callme`) while we are in a call with it:
    /// its process restarted or its page reloaded, with a new certificate. We restart ICE
    /// on the existing connection at once — a re-offer with new credentials, which its new
    /// connection answers with its new fingerprint: a new DTLS association in the same
    /// connection (RFC 8829 §5.11), so recordings and stats go on. A pending ICE restart of
    /// ours is published again now (its answer is the new session's); any other pending
    /// re-offer is rolled back and its change carried by the restart.
    func peerRejoined(_ link: CallLink) async {
        if let pending = link.reoffer {
            if pending.restartsIce {
                link.reoffer?.lastPublish = Date()
                await publish(pending.offer, on: link)
                return
            }
            link.reoffer = nil
            try? link.pc.rollback()
            link.wanted.append(pending.reason)
        }
        if link.isDown, link.iceRestartStartedAt == nil { link.iceRestartStartedAt = Date() }
        onEvent(.iceRestarting(peer: link.peer, reason: "\(link.peer) announced itself again (callme): a new session of it"))
        link.pc.restartIce()
        await renegotiate(link, reason: "ice-restart")
    }

    /// Starts our ICE restart on `link` (W3C `restartIce()` and a re-offer).
    private func restartIce(_ link: CallLink, because why: String) async {
        link.iceRestartStartedAt = Date()
        onEvent(.iceRestarting(peer: link.peer, reason: why))
        link.pc.restartIce()
        await renegotiate(link, reason: "ice-restart")
    }
}
