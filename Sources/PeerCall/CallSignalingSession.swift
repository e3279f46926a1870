// CallSignalingSession: how a call run comes to its router session and leaves it — its own session joined (raced against a hang-up) or a shared one taken (`peer load`), the profile's topics subscribed, router status fed in, and the end (leave, or unsubscribe only).
import DTLS
import EventLoop
import Foundation
import Media
import PeerAgent
import WampClient

extension CallRun {
    /// Comes to the router: joins a session of the call's own (within `--timeout`, raced
    /// against a hang-up) or takes the shared one (``Call/shared``), hands its status
    /// changes to the run's inputs and subscribes the profile's topics. Returns nil when
    /// the call may go on, else the result it ends with (exit code 3 for a router that
    /// cannot be joined or refuses a subscription; 0 or 130 for a hang-up while joining).
    func comeToRouter() async -> CallResult? {
        let joined: WampSession
        if let shared = call.shared {
            joined = shared.session
            statusToken = shared.listen { [feed] status in feed.yield(.routerStatus(status)) }
            onEvent(.milestone("joined", peer: nil, at: shared.joinedAt))
        } else {
            switch await joinOwnSession() {
            case let .success(session): joined = session
            case let .failure(end): return end.result
            }
            onEvent(.milestone("joined", peer: nil, at: ProcessInfo.processInfo.systemUptime))
            prepareAhead()
            statusTask = Task { [feed] in
                for await status in joined.status { feed.yield(.routerStatus(status)) }
            }
        }
        session = joined
        do {
            for topic in profile.topics {
                let subscription = try await subscribe(topic, on: joined)
                subscriptions.append(subscription)
                subscriptionTasks.append(Task { [feed, call] in
                    for await event in subscription {
                        guard call.queuedMessages.add(1, ordering: .relaxed).newValue <= Call.maximumQueuedMessages else {
                            call.queuedMessages.subtract(1, ordering: .relaxed)
                            call.droppedMessages.add(1, ordering: .relaxed)
                            continue
                        }
                        feed.yield(.message(topic: topic, event: event, at: ProcessInfo.processInfo.systemUptime))
                    }
                })
            }
        } catch {
            await leaveRouter()
            return finish(code: ExitCode.router, state: .failed, reason: "router \(options.wamp.url): subscribe: \(error)")
        }
        return nil
    }

    /// Subscribes `topic` on `session`. On a shared session that is reconnecting (the
    /// router went away), waits for it to be joined again (at most `--timeout`) and
    /// tries once more, so a call started while the router is down takes part once it is
    /// back instead of failing.
    /// - Throws: the subscription's ``WampError``.
    private func subscribe(_ topic: String, on session: WampSession) async throws(WampError) -> WampSubscription {
        let deadline = ProcessInfo.processInfo.systemUptime + options.timeoutSeconds
        while true {
            do {
                return try await session.subscribe(topic)
            } catch {
                let left = deadline - ProcessInfo.processInfo.systemUptime
                guard let shared = call.shared, case let .notJoined(reason) = error, reason == "reconnecting", left > 0,
                      hangUpRequest.kind == nil, await shared.waitUntilConnected(within: left) else { throw error }
                // The session's status comes a moment after the session itself changed.
                try? await Task.sleep(nanoseconds: 100_000_000)
            }
        }
    }

    /// Joins a session of the call's own; a hang-up first ends the call (the join goes on
    /// and the session it may still make is left).
    private func joinOwnSession() async -> Result<WampSession, CallRunEnd> {
        var wamp = options.wamp
        wamp.joinTimeoutMs = UInt32(max(1, min(options.timeoutSeconds, 3_600)) * 1000)
        // Joining may take up to --timeout: race it against a hang-up (SIGINT/SIGTERM).
        let joining = Task { () -> Result<WampSession, WampError> in
            do throws(WampError) { return .success(try await WampSession.join(wamp)) } catch { return .failure(error) }
        }
        switch await firstOf(joining, or: hangUpRequest) {
        case let .success(session)?: return .success(session)
        case let .failure(error)?:
            return .failure(CallRunEnd(finish(code: ExitCode.router, state: .failed, reason: "router \(options.wamp.url): \(error)")))
        case nil:
            Task { if case let .success(late) = await joining.value { await late.leave() } }
            let interrupted = hangUpRequest.kind == .interrupted
            return .failure(CallRunEnd(finish(code: interrupted ? ExitCode.interrupted : ExitCode.ok, state: .finished,
                                              reason: interrupted ? "interrupted while joining the router" : "hung up while joining the router")))
        }
    }

    /// Once joined (not during it: NSS's libraries load under the loader's lock), what the
    /// first connection would otherwise make on an answerer's critical path: the DTLS
    /// certificate (~5 ms), libsrtp's NSS set-up (~4 ms), and while it waits for a peer the
    /// VP8 encoder (6–37 ms) and decoder (PreparedCodecs; an offerer makes its encoder at
    /// once, ahead of the answer, and would only make it twice). A call on a shared
    /// session does none of it: `peer load` makes the certificate and NSS once for all.
    private func prepareAhead() {
        let needsCertificate = options.connectionConfiguration.certificate == nil
        let waits = options.role != .offer
        Task.detached(priority: .medium) { [options] in
            if needsCertificate { _ = try? Certificate.shared() }
            SRTPSession.prepare()
            guard waits else { return }
            if let source = try? options.video.makeSource() { PreparedCodecs.prepare(encoder: options.encoding.vp8Configuration(for: source)) }
            if options.decode { PreparedCodecs.prepareDecoder() }
        }
    }

    /// The join's outcome, or nil when a hang-up comes first (then the join goes on in
    /// `joining`, and the session it may still make is left by the caller).
    private func firstOf(_ joining: Task<Result<WampSession, WampError>, Never>,
                         or hangUp: HangUpRequest) async -> Result<WampSession, WampError>? {
        await withCheckedContinuation { continuation in
            let first = Once<Result<WampSession, WampError>?>(continuation)
            let waiter = Task {
                _ = await hangUp.wait()
                first.resume(nil)
            }
            Task {
                let outcome = await joining.value
                first.resume(outcome)
                waiter.cancel()
            }
        }
    }

    /// Leaves the router: a session of the call's own is left (GOODBYE); on a shared one
    /// the call's subscriptions end (UNSUBSCRIBE, not awaited: a router that is down or
    /// slow does not hold the call's end) and the session stays for the other calls.
    func leaveRouter() async {
        statusTask?.cancel()
        statusTask = nil
        for task in subscriptionTasks { task.cancel() }
        subscriptionTasks = []
        guard let session else { return }
        self.session = nil
        if let shared = call.shared {
            if let token = statusToken { shared.stopListening(token) }
            statusToken = nil
            let ended = subscriptions
            Task { for s in ended { try? await session.unsubscribe(s) } }
        } else {
            await session.leave()
        }
        subscriptions = []
    }
}

/// A ``CallResult`` a run ended with before it began (for a `Result`'s failure).
struct CallRunEnd: Error {
    let result: CallResult
    init(_ result: CallResult) { self.result = result }
}
