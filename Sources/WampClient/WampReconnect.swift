// Losing and regaining a WAMP session: the transport dropping, the router's GOODBYE
// (WAMP Basic Profile §Session Closing), reconnecting with capped exponential backoff,
// re-subscribing and re-registering, and the status a session reports over its life.
import Foundation

/// Capped exponential backoff with jitter for reconnecting after the transport drops.
public struct ReconnectPolicy: Sendable, Equatable {
    /// Delay before the first attempt, ms.
    public var initialDelayMs: Double = 250
    /// Upper bound of the delay, ms.
    public var maxDelayMs: Double = 5_000
    /// Growth factor per failed attempt.
    public var multiplier: Double = 2
    /// Random spread, as a fraction of the delay (0.2 = ±20 %).
    public var jitter: Double = 0.2
    /// Give up after this many failed attempts (nil: never).
    public var maxAttempts: Int?

    /// A policy; the defaults retry after 250 ms, 500 ms, 1 s … up to 5 s, forever.
    public init(initialDelayMs: Double = 250, maxDelayMs: Double = 5_000, multiplier: Double = 2,
                jitter: Double = 0.2, maxAttempts: Int? = nil) {
        self.initialDelayMs = initialDelayMs; self.maxDelayMs = maxDelayMs; self.multiplier = multiplier
        self.jitter = jitter; self.maxAttempts = maxAttempts
    }

    /// The delay before attempt `attempt` (0-based), ms, jitter included.
    public func delay(attempt: Int) -> Double {
        let base = min(maxDelayMs, initialDelayMs * pow(max(multiplier, 1), Double(min(attempt, 64))))
        let spread = min(max(jitter.isFinite ? jitter : 0, 0), 1)
        let delay = base * (1 + Double.random(in: -spread...spread))
        return delay.isFinite ? max(0, delay) : maxDelayMs
    }
}

/// What happens to a session over its life, in order.
public enum WampStatus: Sendable, Equatable {
    /// The transport dropped or the router sent something broken; `reason` says which.
    case disconnected(reason: String)
    /// Joined again after a drop, with a new session id; subscriptions and
    /// registrations are in place again. Callers republish their state here.
    case reconnected(session: UInt64)
    /// A reconnect attempt failed; another follows unless attempts are exhausted.
    case reconnectFailed(attempt: Int, error: WampError)
    /// After a reconnect, subscribing to or registering `uri` again failed.
    case restoreFailed(uri: String, error: WampError)
    /// The router ended the session with GOODBYE (answered with
    /// `wamp.close.goodbye_and_out`). For `wamp.close.system_shutdown` the session
    /// reconnects after `reconnectInMs` (the policy's longest delay: the router is going
    /// down), with backoff after that; for any other reason (`wamp.close.killed`,
    /// `wamp.close.close_realm` …) `reconnectInMs` is nil and ``closed(reason:)`` follows.
    case goodbye(reason: String, message: String?, reconnectInMs: Double?)
    /// The session ended for good (left, the router said goodbye, or reconnecting gave up).
    case closed(reason: String)
}

extension WampSession {
    /// The router closed the session in order (GOODBYE, WAMP Basic Profile §Session
    /// Closing; already answered). Not a lost connection: pending requests fail with the
    /// router's reason, and only a system shutdown is followed by a reconnect, after the
    /// policy's longest delay.
    func routerSaidGoodbye(reason: String, message: String?) {
        guard state.joined else { return }
        state.joined = false
        dropSocket(code: 1000, reason: "goodbye")
        let text = "router said goodbye: \(reason)" + (message.map { " (\($0))" } ?? "")
        failPending(text)
        guard reason == "wamp.close.system_shutdown", let policy = configuration.reconnect else {
            statusContinuation.yield(.goodbye(reason: reason, message: message, reconnectInMs: nil))
            end(text)
            return
        }
        let step = Self.attemptAtLongestDelay(policy)
        let delay = min(max(policy.delay(attempt: step), 0), 3_600_000)
        statusContinuation.yield(.goodbye(reason: reason, message: message, reconnectInMs: delay))
        scheduleReconnect(attempt: 0, policy: policy, firstDelayMs: delay, minimumStep: step)
    }

    /// The first attempt index whose delay reaches the policy's cap (before jitter).
    static func attemptAtLongestDelay(_ policy: ReconnectPolicy) -> Int {
        guard policy.multiplier > 1, policy.initialDelayMs > 0, policy.maxDelayMs > policy.initialDelayMs else { return 0 }
        let steps = (log(policy.maxDelayMs / policy.initialDelayMs) / log(policy.multiplier)).rounded(.up)
        return steps.isFinite ? Int(min(max(steps, 0), 64)) : 0
    }

    /// The transport dropped or the router broke the protocol (loop thread): requests in
    /// flight fail with `reason`; unless leaving, ``WampStatus/disconnected(reason:)``
    /// and a reconnect follow (or the end, without a policy).
    func lost(_ reason: String) {
        let state = self.state
        guard state.joined else { return }
        state.joined = false
        dropSocket()
        failPending(reason)
        if state.leaving {
            state.goodbyeCompletion?()
            state.goodbyeCompletion = nil
            return
        }
        statusContinuation.yield(.disconnected(reason: reason))
        guard let policy = configuration.reconnect else {
            end(reason)
            return
        }
        scheduleReconnect(attempt: 0, policy: policy)
    }

    /// Ends the session for good: ``WampStatus/closed(reason:)``, then the status and
    /// every subscription's events finish. Only the first call counts.
    func end(_ reason: String) {
        let state = self.state
        guard !state.finished else { return }
        state.finished = true
        statusContinuation.yield(.closed(reason: reason))
        statusContinuation.finish()
        state.subscriptions.forEach { $0.continuation.finish() }
    }

    /// Reconnect attempt `attempt` (0-based, counted against `maxAttempts`) after
    /// `firstDelayMs` or the policy's delay for backoff step max(attempt, minimumStep).
    func scheduleReconnect(attempt: Int, policy: ReconnectPolicy, firstDelayMs: Double? = nil, minimumStep: Int = 0) {
        let delay = firstDelayMs ?? min(max(policy.delay(attempt: max(attempt, minimumStep)), 0), 3_600_000)
        loop.after(milliseconds: UInt32(delay)) { [weak self] in
            guard let self, !self.state.leaving else { return }
            Task { [weak self] in
                do throws(WampError) {
                    try await self?.connectAndJoin()
                    await self?.restoreAfterReconnect()
                } catch {
                    guard let self else { return }
                    self.loop.async {
                        self.statusContinuation.yield(.reconnectFailed(attempt: attempt + 1, error: error))
                        if let max = policy.maxAttempts, attempt + 1 >= max {
                            self.end("gave up reconnecting after \(attempt + 1) attempts")
                        } else {
                            self.scheduleReconnect(attempt: attempt + 1, policy: policy, minimumStep: minimumStep)
                        }
                    }
                }
            }
        }
    }

    /// Subscribes and registers again what the session had before the drop; what
    /// fails is reported as ``WampStatus/restoreFailed(uri:error:)``, then
    /// ``WampStatus/reconnected(session:)`` follows.
    func restoreAfterReconnect() async {
        let topics = loop.sync { state.subscriptions.map(\.topic) }
        for topic in Set(topics).sorted() {
            let again = loop.sync { state.subscriptions.filter { $0.topic == topic } }
            do {
                let _: UInt64 = try await request(timeoutName: "SUBSCRIBE \(topic)") { id, k in
                    (.subscribe(request: id, options: [:], topic: topic), .subscribe(again, topic, k))
                }
            } catch {
                loop.async { self.statusContinuation.yield(.restoreFailed(uri: topic, error: error)) }
            }
        }
        let procedures = loop.sync { state.registrations.map { ($0.procedure, $0.handler) } }
        for (procedure, handler) in procedures {
            do {
                let _: UInt64 = try await request(timeoutName: "REGISTER \(procedure)") { id, k in
                    (.register(request: id, options: [:], procedure: procedure), .register(procedure, handler, k))
                }
            } catch {
                loop.async { self.statusContinuation.yield(.restoreFailed(uri: procedure, error: error)) }
            }
        }
        loop.async { self.statusContinuation.yield(.reconnected(session: self.sessionId)) }
    }
}
