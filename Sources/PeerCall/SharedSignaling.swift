// SharedSignaling: one joined WAMP session that many calls of one process signal over (`peer load`) — each call's subscriptions on it, its router status handed to every call.
import Foundation
import Synchronization
import WampClient

/// One joined ``WampSession`` shared by many ``Call``s (`peer load`: hundreds of calls,
/// one WebSocket). Each call subscribes its own topics on the session and unsubscribes
/// them when it ends (it never leaves the session); the session's reconnect (WAMP
/// Basic Profile, ``ReconnectPolicy``) re-subscribes every call's topics at once.
///
/// A session's ``WampSession/status`` has one consumer: this object reads it and hands
/// each status to every call listening (``listen(_:)``) and to ``history``, so each call
/// reports the router going and coming back as a call of its own would. Thread-safe: the
/// listeners and the history are behind one `Mutex`, held only to read or change them;
/// a listener is called outside it.
public final class SharedSignaling: Sendable {
    /// One status of the session and when it came (`ProcessInfo.systemUptime`, s).
    public struct StatusRecord: Sendable {
        /// When it came.
        public var at: TimeInterval
        /// What happened.
        public var status: WampStatus
    }

    /// The joined session every call publishes and subscribes on.
    public let session: WampSession
    /// When the session joined (`systemUptime`, s).
    public let joinedAt: TimeInterval
    private struct State {
        var listeners: [UInt64: @Sendable (WampStatus) -> Void] = [:]
        var next: UInt64 = 0
        var history: [StatusRecord] = []
        var connected = true
        /// Waiting for the session to be joined again (``waitUntilConnected(within:)``).
        var waiters: [UInt64: CheckedContinuation<Bool, Never>] = [:]
    }
    private let state = Mutex(State())
    /// Statuses kept in ``history`` at most (the oldest dropped first): a router that comes
    /// and goes for hours cannot grow memory without bound.
    public static let maximumHistory = 1_000

    /// Joins the router with `configuration` (its reconnect policy included).
    /// - Throws: the join's ``WampError`` (router unreachable, refused, timed out).
    public static func join(_ configuration: WampConfiguration) async throws(WampError) -> SharedSignaling {
        let session = try await WampSession.join(configuration)
        return SharedSignaling(session: session)
    }

    /// Shares `session`, which must be joined and whose ``WampSession/status`` nobody
    /// else reads.
    public init(session: WampSession) {
        self.session = session
        joinedAt = ProcessInfo.processInfo.systemUptime
        Task { [self] in
            for await status in session.status {
                let listeners = self.state.withLock { s in
                    s.history.append(StatusRecord(at: ProcessInfo.processInfo.systemUptime, status: status))
                    if s.history.count > Self.maximumHistory { s.history.removeFirst(s.history.count - Self.maximumHistory) }
                    var woken: [CheckedContinuation<Bool, Never>] = []
                    switch status {
                    case .disconnected, .goodbye: s.connected = false
                    case .closed:
                        s.connected = false
                        woken = Array(s.waiters.values)  // never again: they stop waiting (false)
                        s.waiters = [:]
                    case .reconnected:
                        s.connected = true
                        woken = Array(s.waiters.values)
                        s.waiters = [:]
                    case .reconnectFailed, .restoreFailed: break
                    }
                    return (Array(s.listeners.values), woken, s.connected)
                }
                for waiter in listeners.1 { waiter.resume(returning: listeners.2) }
                for listener in listeners.0 { listener(status) }
            }
        }
    }

    /// Calls `listener` with every status from now on (on the task reading the session's
    /// status, in order) until ``stopListening(_:)`` with the returned token.
    public func listen(_ listener: @escaping @Sendable (WampStatus) -> Void) -> UInt64 {
        state.withLock { s in
            defer { s.next += 1 }
            s.listeners[s.next] = listener
            return s.next
        }
    }

    /// Ends what ``listen(_:)`` with `token` started.
    public func stopListening(_ token: UInt64) {
        _ = state.withLock { $0.listeners.removeValue(forKey: token) }
    }

    /// Every status so far, oldest first (at most ``maximumHistory``).
    public var history: [StatusRecord] { state.withLock { $0.history } }

    /// False from the session's loss until it is joined again.
    public var isConnected: Bool { state.withLock { $0.connected } }

    /// Returns at once when the session is joined; else waits until it is joined again
    /// (true), it ended for good (false) or `seconds` passed (false). A call that starts
    /// while the router is down waits here to subscribe instead of failing.
    public func waitUntilConnected(within seconds: Double) async -> Bool {
        let id = state.withLock { s in defer { s.next += 1 }; return s.next }
        return await withCheckedContinuation { (c: CheckedContinuation<Bool, Never>) in
            let now = state.withLock { s -> Bool in
                if s.connected { return true }
                s.waiters[id] = c
                return false
            }
            if now { return c.resume(returning: true) }
            Task { [self] in
                try? await Task.sleep(nanoseconds: UInt64(max(0, seconds) * 1e9))
                state.withLock { $0.waiters.removeValue(forKey: id) }?.resume(returning: false)
            }
        }
    }

    /// Leaves the router (GOODBYE); the calls must have ended. The listeners are told
    /// nothing of it (the session's own end is no news to them); ``history`` keeps it.
    public func leave() async {
        state.withLock { $0.listeners = [:] }
        await session.leave()
    }
}
