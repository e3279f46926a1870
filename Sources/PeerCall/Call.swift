// Call: one call over a WAMP router — its task, the connections to its peers, their events and its ending; the wire is a SignalingProfile's (shared/PROTOCOL.md).
import PeerAgent
import DTLS
import EventLoop
import Foundation
import ICE
import SDP
import Synchronization
import WampClient

/// A call over a WAMP router with a signaling profile of `shared/PROTOCOL.md`:
/// ``LegacyProfile`` (one call per prefix; offer/answer/candidate/close topics; vanilla or
/// trickle ICE) or ``RoomProfile`` (a mesh: one peer connection per remote user). The
/// profile owns the topics, payload forms, and busy and glare rules; the call owns the
/// connections (``CallLink``), their events, the timers and the ending.
///
/// All call state lives in the task running ``run()`` (a ``CallRun``, which is not
/// `Sendable`, so the compiler keeps it there): router events, peer connection events,
/// timers and hang-up requests are queued into one stream and handled in order, so
/// nothing needs a lock. What this object holds is immutable or atomic. Nothing in it
/// waits by polling: joining the router is raced against ``hangUp(interrupted:)``
/// (``HangUpRequest``), a vanilla-ICE description is published on the connection's
/// gathering-complete event, and the deadlines (`--duration`, `--timeout`, offer repeats,
/// the 10 s gathering wait) are checked on a 250 ms tick input.
public final class Call: Sendable {
    /// The options given at init.
    public let options: CallOptions
    /// Where the call's events go (called from the run task, in order).
    let onEvent: @Sendable (CallEvent) -> Void
    /// The run task's inputs, in arrival order.
    let inputs: AsyncStream<Input>
    /// The end of ``inputs`` other tasks and threads feed (router and connection events,
    /// ticks, hang-ups).
    let feed: AsyncStream<Input>.Continuation
    /// The signaling profile `options.role` picks (legacy or room).
    let profile: any SignalingProfile
    /// The joined session this call shares with others (`peer load`), or nil: the call
    /// joins a session of its own and leaves it at its end.
    let shared: SharedSignaling?
    /// Set by ``hangUp(interrupted:)`` from any thread, for the wait before the main loop.
    let hangUpRequest = HangUpRequest()
    /// Router events queued for the run task but not yet handled, and those dropped because
    /// ``maximumQueuedMessages`` were waiting: a router flooding our topics (10,000 events
    /// a second) cannot grow memory without bound. Connection events are never dropped.
    let queuedMessages = Atomic<Int>(0)
    let droppedMessages = Atomic<Int>(0)
    /// Router events waiting at most; more are dropped and counted (a `signalingError`).
    public static let maximumQueuedMessages = 1_000
    /// Seconds a vanilla-ICE description waits for gathering before it is published anyway.
    static let gatheringWaitSeconds: TimeInterval = 10

    /// One input of the run task.
    enum Input: Sendable {
        /// A router event and when it came (`systemUptime`, s).
        case message(topic: String, event: WampEvent, at: TimeInterval)
        /// A connection's event and when the loop thread handed it on (`systemUptime`, s).
        case connection(peer: String, event: PeerConnectionEvent, at: TimeInterval)
        case routerStatus(WampStatus)
        case tick
        case hangUp(reason: String, interrupted: Bool)
        /// An action from `--at` or `--control` (``Call/perform(_:origin:)``).
        case action(CallAction, origin: String)
        /// A message to send on data channels (``Call/send(_:origin:)``).
        case send(DataSend, origin: String)
    }

    /// A call with `options`; events go to `onEvent` (from the run task, in order).
    /// With `signaling` the call does not join the router itself: it subscribes its
    /// topics on that shared, joined session, unsubscribes them when it ends and never
    /// leaves it (``SharedSignaling``; `options.wamp` is then unused); the session's
    /// reconnect restores its subscriptions with every other call's.
    public init(options: CallOptions, signaling: SharedSignaling? = nil, onEvent: @escaping @Sendable (CallEvent) -> Void = { _ in }) {
        self.options = options
        self.onEvent = onEvent
        shared = signaling
        profile = options.role == .room
            ? RoomProfile(prefix: options.prefix, room: options.room, user: options.user)
            : LegacyProfile(prefix: options.prefix, offers: options.role == .offer, descriptionAsString: options.descriptionAsString)
        (inputs, feed) = AsyncStream.makeStream(bufferingPolicy: .unbounded)
    }

    /// Ends the call from outside (a signal handler, a test): publishes `close`, closes
    /// every connection and file, and makes ``run()`` return exit code 130 when
    /// `interrupted`, else 0/7 as for a normal end. Safe from any thread.
    public func hangUp(interrupted: Bool = true) {
        hangUpRequest.set(interrupted ? .interrupted : .hungUp)
        feed.yield(.hangUp(reason: interrupted ? "interrupted" : "hung up", interrupted: interrupted))
    }

    /// Asks the running call to take `action` (`--control`; `--at` actions are taken by the
    /// call itself). Its result comes as a ``CallEvent/action(_:ok:detail:origin:)`` event
    /// carrying `origin`. Safe from any thread; an action before `established` is refused
    /// in that event.
    public func perform(_ action: CallAction, origin: String) {
        feed.yield(.action(action, origin: origin))
    }

    /// Sends `request`'s message on every open data channel with its label (a `send`
    /// control command); the result comes as a ``CallEvent/dataSendResult(label:ok:detail:origin:)``
    /// event carrying `origin`. Safe from any thread.
    public func send(_ request: DataSend, origin: String) {
        feed.yield(.send(request, origin: origin))
    }

    /// Runs the call to its end and returns the outcome. Never throws: every failure is
    /// an exit code with a reason. Called once per call (the inputs are consumed).
    public func run() async -> CallResult { await CallRun(call: self).run() }

    /// The `o=` session id and version of an SDP as numbers, nil when there is no usable
    /// `o=` line (RFC 8866 §5.2; a version beyond 64 bits counts as the largest).
    static func session(_ sdp: String) -> (id: String, version: UInt64)? {
        guard let identity = identity(sdp) else { return nil }
        let parts = identity.split(separator: " ")
        guard parts.count == 2 else { return nil }
        let version = UInt64(parts[1]) ?? (parts[1].allSatisfy(\.isNumber) ? UInt64.max : 0)
        return (String(parts[0]), version)
    }

    /// The `o=` session id and version of an SDP, which identify an offer (RFC 8866 §5.2).
    static func identity(_ sdp: String) -> String? {
        guard let line = sdp.split(whereSeparator: \.isNewline).first(where: { $0.hasPrefix("o=") }) else { return nil }
        let fields = line.dropFirst(2).split(separator: " ")
        guard fields.count >= 3 else { return nil }
        return "\(fields[1]) \(fields[2])"
    }
}

func formatSeconds(_ s: Double) -> String { s == s.rounded() ? String(Int(s)) : String(s) }
