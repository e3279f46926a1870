import EventLoop
import Foundation

/// How a session authenticates when it joins (WAMP Advanced Profile §Authentication).
public enum WampAuth: Sendable, Equatable {
    /// No authentication (`authmethods` not sent).
    case anonymous
    /// Ticket-based: the router's CHALLENGE is answered with `ticket`.
    case ticket(authid: String, ticket: String)
    /// WAMP-CRA: the challenge is signed with `secret` (salted when the router says so).
    case cra(authid: String, secret: String)
}

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

/// Where and how to join.
public struct WampConfiguration: Sendable {
    /// Router URL, `ws://` or `wss://`.
    public var url: String
    /// Realm to join, e.g. "realm1".
    public var realm: String
    /// How to authenticate (anonymous by default).
    public var auth: WampAuth = .anonymous
    /// TLS: a private CA (PEM) to trust, or no certificate check at all.
    public var caFile: String?
    /// Accept any server certificate (wss only); off by default.
    public var insecure = false
    /// Time allowed for connect + HELLO … WELCOME, ms.
    public var joinTimeoutMs: UInt32 = 10_000
    /// Time allowed for each request (subscribe, publish with acknowledge, call, register), ms.
    public var requestTimeoutMs: UInt32 = 10_000
    /// Reconnect after the transport drops; nil: do not.
    public var reconnect: ReconnectPolicy? = ReconnectPolicy()
    /// Largest incoming message, bytes (default 1 MiB: signaling messages are a few KiB
    /// and an SDP is at most 256 KiB). libsoup refuses a larger one from its frame header
    /// and closes the WebSocket (1009, RFC 6455 §7.4.1), reported as
    /// ``WampStatus/disconnected(reason:)``; the session reconnects. So no more than this
    /// is ever buffered per message.
    public var maxMessageBytes: UInt64 = 1 << 20
    /// WebSocket keep-alive ping interval, seconds.
    public var keepaliveSeconds: UInt32 = 20

    /// A configuration for `url` and `realm` with the defaults above.
    public init(url: String, realm: String = "realm1", auth: WampAuth = .anonymous) {
        self.url = url; self.realm = realm; self.auth = auth
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

/// An event received on a subscription (EVENT, WAMP Basic Profile §Publish & Subscribe).
public struct WampEvent: Sendable, Equatable {
    /// The router's publication id.
    public var publication: UInt64
    /// Positional and keyword payload (empty when the publisher sent none).
    public var args: [JSONValue]
    public var kwargs: WampDict
    /// EVENT details (e.g. `topic` for pattern subscriptions).
    public var details: WampDict
}

/// Positional and keyword results of a call, or of an invocation handler.
public struct WampResult: Sendable, Equatable {
    /// Positional results.
    public var args: [JSONValue]
    /// Keyword results.
    public var kwargs: WampDict
    /// A result with the given arguments.
    public init(args: [JSONValue] = [], kwargs: WampDict = [:]) { self.args = args; self.kwargs = kwargs }
}

/// A call received by a registered procedure (INVOCATION).
public struct WampInvocation: Sendable, Equatable {
    /// Positional and keyword arguments of the call.
    public var args: [JSONValue]
    public var kwargs: WampDict
    /// INVOCATION details from the router.
    public var details: WampDict
}

/// Errors of a WAMP session. Each names what failed and carries the router's words.
public enum WampError: Error, Equatable, CustomStringConvertible {
    /// The WebSocket could not be opened (refused, HTTP status such as 404, TLS, timeout …).
    case connect(WebSocketError)
    /// The router refused the join (ABORT), e.g. `wamp.error.no_such_realm`.
    case aborted(reason: String, message: String?)
    /// The router refused our credentials (ABORT with an authentication reason).
    case authenticationFailed(reason: String, message: String?)
    /// The router asked for an authentication method we were not configured for.
    case unsupportedAuthMethod(String)
    /// The peer broke the protocol; the session was aborted.
    case protocolViolation(WampProtocolError)
    /// An ERROR reply: `error` URI with arguments (e.g. from a failing callee).
    case application(error: String, args: [JSONValue], kwargs: WampDict)
    /// No answer to `operation` within `milliseconds`.
    case timeout(operation: String, milliseconds: UInt32)
    /// The session is not joined (transport closed, left, or reconnecting).
    case notJoined(reason: String)
    /// The WebSocket closed before the join completed: `code` per RFC 6455 §7.4
    /// (1009: a message over the size limit), `reason` as sent.
    case connectionClosed(code: UInt16, reason: String)

    public var description: String {
        switch self {
        case .connect(let e): return "cannot connect to the router: \(e)"
        case let .aborted(reason, message): return "router aborted the session: \(reason)" + (message.map { " (\($0))" } ?? "")
        case let .authenticationFailed(reason, message): return "authentication refused: \(reason)" + (message.map { " (\($0))" } ?? "")
        case .unsupportedAuthMethod(let m): return "router asked for authentication method \"\(m)\", which is not configured"
        case .protocolViolation(let e): return e.description
        case let .application(error, args, _): return "\(error)" + (args.isEmpty ? "" : " \(JSONValue.array(args))")
        case let .timeout(operation, ms): return "no answer to \(operation) within \(ms) ms"
        case .notJoined(let reason): return "not joined: \(reason)"
        case let .connectionClosed(code, reason): return "WebSocket closed with \(code)" + (reason.isEmpty ? "" : " (\(reason))") + " before the join completed"
        }
    }
}

/// A live subscription: an `AsyncSequence` of ``WampEvent``s that survives reconnects.
/// One consumer; at most 10 000 unread events are kept (the oldest are dropped);
/// cancelling the consuming task ends the sequence.
public final class WampSubscription: AsyncSequence, @unchecked Sendable {
    // `id` is touched on the loop thread only.
    public typealias Element = WampEvent
    /// The topic URI.
    public let topic: String
    var id: UInt64
    let stream: AsyncStream<WampEvent>
    let continuation: AsyncStream<WampEvent>.Continuation

    init(topic: String, id: UInt64) {
        self.topic = topic
        self.id = id
        (stream, continuation) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(10_000))
    }

    /// The iterator over received events.
    public func makeAsyncIterator() -> AsyncStream<WampEvent>.Iterator { stream.makeAsyncIterator() }
}

/// A WAMP v2 client session (Basic Profile roles publisher, subscriber, caller,
/// callee; WAMP-CRA and ticket authentication) over ``WebSocket`` with JSON
/// serialization (`wamp.2.json`).
///
/// All protocol state lives on the ``EventLoop`` thread; the public methods are
/// async and may be called from anywhere. When the transport drops and a
/// ``ReconnectPolicy`` is set, the session reconnects with backoff, joins again,
/// re-subscribes and re-registers, and reports it on ``status``.
public final class WampSession: @unchecked Sendable {
    // Everything mutable below is confined to the loop thread.
    /// Answers one invocation of a registered procedure.
    public typealias Handler = @Sendable (WampInvocation) async throws -> WampResult

    private enum Pending {
        case subscribe([WampSubscription], String, (Result<UInt64, WampError>) -> Void)
        case publish((Result<UInt64?, WampError>) -> Void)
        case call((Result<WampResult, WampError>) -> Void)
        case register(String, Handler, (Result<UInt64, WampError>) -> Void)
        case unsubscribe((Result<Void, WampError>) -> Void)
        case unregister((Result<Void, WampError>) -> Void)

        func fail(_ error: WampError) {
            switch self {
            case .subscribe(_, _, let k): k(.failure(error))
            case .publish(let k): k(.failure(error))
            case .call(let k): k(.failure(error))
            case .register(_, _, let k): k(.failure(error))
            case .unsubscribe(let k): k(.failure(error))
            case .unregister(let k): k(.failure(error))
            }
        }
    }

    private final class Registration {
        let procedure: String
        let handler: Handler
        var id: UInt64
        init(procedure: String, handler: @escaping Handler, id: UInt64) { self.procedure = procedure; self.handler = handler; self.id = id }
    }

    /// The configuration the session was joined with.
    public let configuration: WampConfiguration
    let loop: EventLoop
    private var socket: WebSocket?
    private var joinCompletion: ((Result<UInt64, WampError>) -> Void)?
    private var joinTimer: UInt32 = 0
    private var goodbyeCompletion: (() -> Void)?
    private var pending: [UInt64: Pending] = [:]
    private var subscriptions: [WampSubscription] = []
    private var registrations: [Registration] = []
    private var nextRequest: UInt64 = 1
    private var joined = false
    private var leaving = false
    private var finished = false
    private var generation = 0

    /// The router-assigned session id of the current join (changes on reconnect).
    public private(set) var sessionId: UInt64 = 0
    /// The WELCOME details of the current join (authid, authrole, roles …).
    public private(set) var welcomeDetails: WampDict = [:]
    /// Status changes after the first join, in order (single consumer).
    public let status: AsyncStream<WampStatus>
    private let statusContinuation: AsyncStream<WampStatus>.Continuation

    private init(configuration: WampConfiguration, loop: EventLoop) {
        self.configuration = configuration
        self.loop = loop
        (status, statusContinuation) = AsyncStream.makeStream()
    }

    /// Connects to the router and joins the realm.
    /// - Throws: ``WampError/connect(_:)`` (refused, HTTP status, TLS, subprotocol,
    ///   timeout), ``WampError/aborted(reason:message:)`` (e.g. no such realm),
    ///   ``WampError/authenticationFailed(reason:message:)``,
    ///   ``WampError/protocolViolation(_:)``, ``WampError/timeout(operation:milliseconds:)``.
    public static func join(_ configuration: WampConfiguration, loop: EventLoop = .shared) async throws(WampError) -> WampSession {
        let session = WampSession(configuration: configuration, loop: loop)
        try await session.connectAndJoin()
        return session
    }

    private func connectAndJoin() async throws(WampError) {
        var options = WebSocket.Options(url: configuration.url)
        options.caFile = configuration.caFile
        options.insecure = configuration.insecure
        options.keepaliveSeconds = configuration.keepaliveSeconds
        options.maxMessageBytes = configuration.maxMessageBytes
        options.connectTimeoutMs = configuration.joinTimeoutMs
        let socketOptions = options
        let result: Result<UInt64, WampError> = await withCheckedContinuation { continuation in
            let queued = loop.async { [self] in
                generation += 1
                let generation = self.generation
                joinCompletion = { continuation.resume(returning: $0) }
                // The socket is set and HELLO sent in the loop turn that opened it, so no
                // event of the connection can arrive before the join state exists.
                WebSocket.open(socketOptions, loop: loop, handler: { [weak self] event in
                    self?.handle(event, generation: generation)
                }, completion: { [weak self] result in
                    guard let self else { return }
                    switch result {
                    case .failure(let error):
                        self.finishJoin(.failure(.connect(error)))
                    case .success(let socket):
                        guard generation == self.generation, self.joinCompletion != nil else {
                            socket.close(code: 1000, reason: "no longer needed")
                            return
                        }
                        self.socket = socket
                        self.joinTimer = self.loop.after(milliseconds: self.configuration.joinTimeoutMs) { [weak self] in
                            guard let self else { return }
                            self.failJoin(.timeout(operation: "HELLO (join \(self.configuration.realm))",
                                                   milliseconds: self.configuration.joinTimeoutMs))
                        }
                        self.send(.hello(realm: self.configuration.realm, details: self.helloDetails()))
                    }
                })
            }
            if !queued { continuation.resume(returning: .failure(.notJoined(reason: "event loop stopped"))) }
        }
        _ = try result.get()
    }

    /// Ends a join attempt with `error`: closes its socket and ignores its later events.
    private func failJoin(_ error: WampError, closeCode: UInt16 = 1000) {
        finishJoin(.failure(error))
        dropSocket(code: closeCode)
    }

    /// Drops the current transport: closes it and ignores its later events.
    private func dropSocket(code: UInt16 = 1000, reason: String = "") {
        socket?.close(code: code, reason: reason)
        socket = nil
        generation += 1
    }

    /// Fails every request in flight with ``WampError/notJoined(reason:)``.
    private func failPending(_ reason: String) {
        let failed = pending
        pending = [:]
        failed.values.forEach { $0.fail(.notJoined(reason: reason)) }
    }

    /// The next session-scope request id (WAMP: 1, 2, … wrapping at 2^53).
    private func takeRequestId() -> UInt64 {
        let id = nextRequest
        nextRequest = nextRequest >= WampMessage.maxID ? 1 : nextRequest + 1
        return id
    }

    private func helloDetails() -> WampDict {
        var details: WampDict = [
            "agent": .string("peer-wamp/0.1"),
            "roles": .object([
                "publisher": .object(["features": .object(["publisher_exclusion": .bool(true)])]),
                "subscriber": .object([:]),
                "caller": .object([:]),
                "callee": .object([:]),
            ]),
        ]
        switch configuration.auth {
        case .anonymous: break
        case let .ticket(authid, _):
            details["authmethods"] = .array([.string("ticket")])
            details["authid"] = .string(authid)
        case let .cra(authid, _):
            details["authmethods"] = .array([.string("wampcra")])
            details["authid"] = .string(authid)
        }
        return details
    }

    private func finishJoin(_ result: Result<UInt64, WampError>) {
        guard let completion = joinCompletion else { return }
        joinCompletion = nil
        loop.cancelTimer(joinTimer)
        completion(result)
    }

    private func send(_ message: WampMessage) {
        socket?.send(message.serialized)
    }

    // MARK: incoming (loop thread)

    private func handle(_ event: WebSocket.Event, generation: Int) {
        guard generation == self.generation else { return }  // a stale socket of an earlier join
        switch event {
        case .text(let text):
            do {
                handle(try WampMessage(parsing: text))
            } catch {
                violation(error)
            }
        case .binary:
            violation(WampProtocolError(reason: "binary message on a wamp.2.json transport", message: ""))
        case let .error(code, text):
            if joinCompletion != nil { return failJoin(.connectionClosed(code: code ?? 1006, reason: text), closeCode: code ?? 1011) }
            lost("WebSocket error: \(text)")
        case let .closed(code, reason):
            if joinCompletion != nil { return failJoin(.connectionClosed(code: code, reason: reason)) }
            lost("WebSocket closed with \(code)" + (reason.isEmpty ? "" : " \(reason)"))
        }
    }

    private func violation(_ error: WampProtocolError) {
        send(.abort(details: ["message": .string(error.reason)], reason: "wamp.error.protocol_violation"))
        if joinCompletion != nil { return failJoin(.protocolViolation(error), closeCode: 1002) }
        socket?.close(code: 1002, reason: "protocol violation")
        lost("protocol violation: \(error.reason)")
    }

    private func handle(_ message: WampMessage) {
        switch message {
        case let .welcome(session, details):
            guard joinCompletion != nil else { return violation(WampProtocolError(reason: "WELCOME while joined", message: message.serialized)) }
            if leaving {  // left while this (re)join was under way
                send(.goodbye(details: [:], reason: "wamp.close.close_realm"))
                return failJoin(.notJoined(reason: "left the session"))
            }
            sessionId = session
            welcomeDetails = details
            joined = true
            finishJoin(.success(session))
        case let .abort(details, reason):
            let text = details["message"]?.stringValue
            let authReasons = ["wamp.error.not_authorized", "wamp.error.authentication_failed", "wamp.error.no_such_principal",
                               "wamp.error.authorization_failed", "wamp.error.no_auth_method"]
            let error: WampError = authReasons.contains(reason) || reason.contains("auth")
                ? .authenticationFailed(reason: reason, message: text) : .aborted(reason: reason, message: text)
            if joinCompletion != nil {
                failJoin(error)
            } else {
                lost("router aborted: \(reason)")
            }
        case let .challenge(method, extra):
            answerChallenge(method: method, extra: extra)
        case let .goodbye(details, reason):
            if leaving {
                goodbyeCompletion?()
                goodbyeCompletion = nil
            } else {
                send(.goodbye(details: [:], reason: "wamp.close.goodbye_and_out"))
                routerSaidGoodbye(reason: reason, message: details["message"]?.stringValue)
            }
        case let .error(_, request, _, error, args, kwargs):
            pending.removeValue(forKey: request)?.fail(.application(error: error, args: args ?? [], kwargs: kwargs ?? [:]))
        case let .subscribed(request, subscription):
            guard case let .subscribe(existing, topic, k)? = pending.removeValue(forKey: request) else { return }
            if existing.isEmpty {
                subscriptions.append(WampSubscription(topic: topic, id: subscription))
            } else {
                existing.forEach { $0.id = subscription }
            }
            k(.success(subscription))
        case let .published(request, publication):
            guard case let .publish(k)? = pending.removeValue(forKey: request) else { return }
            k(.success(publication))
        case let .event(subscription, publication, details, args, kwargs):
            let event = WampEvent(publication: publication, args: args ?? [], kwargs: kwargs ?? [:], details: details)
            for s in subscriptions where s.id == subscription { s.continuation.yield(event) }
        case let .result(request, _, args, kwargs):
            guard case let .call(k)? = pending.removeValue(forKey: request) else { return }
            k(.success(WampResult(args: args ?? [], kwargs: kwargs ?? [:])))
        case let .registered(request, registration):
            guard case let .register(procedure, handler, k)? = pending.removeValue(forKey: request) else { return }
            if let existing = registrations.first(where: { $0.procedure == procedure }) {
                existing.id = registration
            } else {
                registrations.append(Registration(procedure: procedure, handler: handler, id: registration))
            }
            k(.success(registration))
        case let .unsubscribed(request):
            guard case let .unsubscribe(k)? = pending.removeValue(forKey: request) else { return }
            k(.success(()))
        case let .unregistered(request):
            guard case let .unregister(k)? = pending.removeValue(forKey: request) else { return }
            k(.success(()))
        case let .invocation(request, registration, details, args, kwargs):
            invoke(request: request, registration: registration,
                   WampInvocation(args: args ?? [], kwargs: kwargs ?? [:], details: details))
        case .hello, .authenticate, .publish, .subscribe, .unsubscribe, .call, .register, .unregister, .yield:
            violation(WampProtocolError(reason: "\(message.type) is a client-to-router message", message: message.serialized))
        }
    }

    private func answerChallenge(method: String, extra: WampDict) {
        switch (method, configuration.auth) {
        case let ("ticket", .ticket(_, ticket)):
            send(.authenticate(signature: ticket, extra: [:]))
        case let ("wampcra", .cra(_, secret)):
            guard let challenge = extra["challenge"]?.stringValue else {
                return violation(WampProtocolError(reason: "wampcra CHALLENGE without a challenge string", message: ""))
            }
            var key = secret
            if let salt = extra["salt"]?.stringValue {
                let iterations = Int(extra["iterations"]?.intValue ?? 1000)
                let keyLength = Int(extra["keylen"]?.intValue ?? 32)
                guard let derived = WampCRA.deriveKey(secret: secret, salt: salt, iterations: iterations, keyLength: keyLength) else {
                    send(.abort(details: [:], reason: "wamp.error.authentication_failed"))
                    return failJoin(.authenticationFailed(reason: "wampcra", message:
                        "refused salt parameters from the router: iterations \(iterations), keylen \(keyLength)"))
                }
                key = derived
            }
            guard let signature = WampCRA.sign(challenge: challenge, key: key) else {
                return failJoin(.authenticationFailed(reason: "wampcra", message: "OpenSSL HMAC failed"))
            }
            send(.authenticate(signature: signature, extra: [:]))
        default:
            send(.abort(details: [:], reason: "wamp.error.authentication_failed"))
            failJoin(.unsupportedAuthMethod(method))
        }
    }

    private func invoke(request: UInt64, registration: UInt64, _ invocation: WampInvocation) {
        guard let handler = registrations.first(where: { $0.id == registration })?.handler else {
            send(.error(requestType: .invocation, request: request, details: [:], error: "wamp.error.no_such_registration", args: nil, kwargs: nil))
            return
        }
        let loop = self.loop, generation = self.generation
        Task { [weak self] in
            let message: WampMessage
            do {
                let result = try await handler(invocation)
                message = .yield(request: request, options: [:], args: result.args, kwargs: result.kwargs)
            } catch let WampError.application(error, args, kwargs) {
                message = .error(requestType: .invocation, request: request, details: [:], error: error, args: args, kwargs: kwargs)
            } catch {
                message = .error(requestType: .invocation, request: request, details: [:], error: "wamp.error.runtime_error",
                                 args: [.string(String(describing: error))], kwargs: nil)
            }
            // A reply to an invocation of an earlier session would confuse the new one.
            loop.async { [weak self] in if self?.generation == generation { self?.send(message) } }
        }
    }

    // MARK: loss and reconnect (loop thread)

    /// The router closed the session in order (GOODBYE, WAMP Basic Profile §Session
    /// Closing; already answered). Not a lost connection: pending requests fail with the
    /// router's reason, and only a system shutdown is followed by a reconnect, after the
    /// policy's longest delay.
    private func routerSaidGoodbye(reason: String, message: String?) {
        guard joined else { return }
        joined = false
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

    private func lost(_ reason: String) {
        guard joined else { return }
        joined = false
        dropSocket()
        failPending(reason)
        if leaving {
            goodbyeCompletion?()
            goodbyeCompletion = nil
            return
        }
        statusContinuation.yield(.disconnected(reason: reason))
        guard let policy = configuration.reconnect else {
            end(reason)
            return
        }
        scheduleReconnect(attempt: 0, policy: policy)
    }

    private func end(_ reason: String) {
        guard !finished else { return }
        finished = true
        statusContinuation.yield(.closed(reason: reason))
        statusContinuation.finish()
        subscriptions.forEach { $0.continuation.finish() }
    }

    /// Reconnect attempt `attempt` (0-based, counted against `maxAttempts`) after
    /// `firstDelayMs` or the policy's delay for backoff step max(attempt, minimumStep).
    private func scheduleReconnect(attempt: Int, policy: ReconnectPolicy, firstDelayMs: Double? = nil, minimumStep: Int = 0) {
        let delay = firstDelayMs ?? min(max(policy.delay(attempt: max(attempt, minimumStep)), 0), 3_600_000)
        loop.after(milliseconds: UInt32(delay)) { [weak self] in
            guard let self, !self.leaving else { return }
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
    private func restoreAfterReconnect() async {
        let topics = loop.sync { subscriptions.map(\.topic) }
        for topic in Set(topics).sorted() {
            let again = loop.sync { subscriptions.filter { $0.topic == topic } }
            do {
                let _: UInt64 = try await request(timeoutName: "SUBSCRIBE \(topic)") { id, k in
                    (.subscribe(request: id, options: [:], topic: topic), .subscribe(again, topic, k))
                }
            } catch {
                loop.async { self.statusContinuation.yield(.restoreFailed(uri: topic, error: error)) }
            }
        }
        let procedures = loop.sync { registrations.map { ($0.procedure, $0.handler) } }
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

    // MARK: requests

    /// Sends a request built by `build` (given the new request id and the completion)
    /// and waits for its answer, an ERROR, the session's loss or the request timeout.
    private func request<T: Sendable>(timeoutName: String,
                                      _ build: @escaping @Sendable (UInt64, @escaping (Result<T, WampError>) -> Void) -> (WampMessage, Pending))
        async throws(WampError) -> T {
        let timeout = configuration.requestTimeoutMs
        let result: Result<T, WampError> = await withCheckedContinuation { continuation in
            let queued = loop.async { [self] in
                guard joined else {
                    let why = leaving ? "left the session" : (finished ? "the session ended" : "reconnecting")
                    continuation.resume(returning: .failure(.notJoined(reason: why)))
                    return
                }
                let id = takeRequestId()
                let once = Once(continuation)
                var timer: UInt32 = 0
                let (message, entry) = build(id) { result in
                    self.loop.cancelTimer(timer)
                    once.resume(result)
                }
                pending[id] = entry
                timer = loop.after(milliseconds: timeout) { [weak self] in
                    self?.pending.removeValue(forKey: id)
                    once.resume(.failure(.timeout(operation: timeoutName, milliseconds: timeout)))
                }
                send(message)
            }
            if !queued { continuation.resume(returning: .failure(.notJoined(reason: "event loop stopped"))) }
        }
        return try result.get()
    }

    /// Subscribes to `topic` and returns the event sequence.
    /// - Throws: ``WampError/application(error:args:kwargs:)`` when the router refuses
    ///   (e.g. `wamp.error.not_authorized`), ``WampError/notJoined(reason:)``, timeout.
    public func subscribe(_ topic: String) async throws(WampError) -> WampSubscription {
        let id: UInt64 = try await request(timeoutName: "SUBSCRIBE \(topic)") { id, k in
            (.subscribe(request: id, options: [:], topic: topic), .subscribe([], topic, k))
        }
        let found = loop.sync { subscriptions.last { $0.id == id && $0.topic == topic } }
        guard let found else { throw .notJoined(reason: "subscription \(id) vanished") }
        return found
    }

    /// Ends a subscription: its event sequence finishes, and UNSUBSCRIBE goes to the
    /// router once no other subscription of this session shares the router's id.
    public func unsubscribe(_ subscription: WampSubscription) async throws(WampError) {
        let (sid, shared) = loop.sync {
            subscriptions.removeAll { $0 === subscription }
            subscription.continuation.finish()
            return (subscription.id, subscriptions.contains { $0.id == subscription.id })
        }
        guard !shared else { return }
        let _: Void = try await request(timeoutName: "UNSUBSCRIBE \(subscription.topic)") { id, k in
            (.unsubscribe(request: id, subscription: sid), .unsubscribe(k))
        }
    }

    /// Publishes to `topic`. With `acknowledge` waits for PUBLISHED and returns the
    /// publication id; else returns nil at once. `excludeMe` false delivers the event
    /// to this session too (WAMP's default is to exclude the publisher).
    public func publish(_ topic: String, args: [JSONValue] = [], kwargs: WampDict = [:],
                        acknowledge: Bool = false, excludeMe: Bool = true) async throws(WampError) -> UInt64? {
        var options: WampDict = [:]
        if acknowledge { options["acknowledge"] = .bool(true) }
        if !excludeMe { options["exclude_me"] = .bool(false) }
        let publishOptions = options
        let message = { @Sendable (id: UInt64) in
            WampMessage.publish(request: id, options: publishOptions, topic: topic, args: args.isEmpty && kwargs.isEmpty ? nil : args,
                                kwargs: kwargs.isEmpty ? nil : kwargs)
        }
        if acknowledge {
            return try await request(timeoutName: "PUBLISH \(topic)") { id, k in (message(id), .publish(k)) }
        }
        let sent: Bool = loop.sync {
            guard joined else { return false }
            send(message(takeRequestId()))
            return true
        }
        guard sent else { throw .notJoined(reason: "cannot publish to \(topic)") }
        return nil
    }

    /// Calls `procedure` and returns its result.
    /// - Throws: ``WampError/application(error:args:kwargs:)`` with the callee's or
    ///   router's error URI (e.g. `wamp.error.no_such_procedure`), timeout, notJoined.
    public func call(_ procedure: String, args: [JSONValue] = [], kwargs: WampDict = [:]) async throws(WampError) -> WampResult {
        try await request(timeoutName: "CALL \(procedure)") { id, k in
            (.call(request: id, options: [:], procedure: procedure, args: args.isEmpty && kwargs.isEmpty ? nil : args,
                   kwargs: kwargs.isEmpty ? nil : kwargs), .call(k))
        }
    }

    /// Registers `procedure`; `handler` answers each invocation. Throwing
    /// ``WampError/application(error:args:kwargs:)`` from it returns that error to the
    /// caller; any other error returns `wamp.error.runtime_error`.
    /// - Returns: the registration id.
    @discardableResult
    public func register(_ procedure: String, handler: @escaping Handler) async throws(WampError) -> UInt64 {
        try await request(timeoutName: "REGISTER \(procedure)") { id, k in
            (.register(request: id, options: [:], procedure: procedure), .register(procedure, handler, k))
        }
    }

    /// Leaves the realm (GOODBYE, waiting up to 2 s for the router's GOODBYE) and
    /// closes the WebSocket. No reconnect follows. Idempotent.
    public func leave(reason: String = "wamp.close.close_realm") async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let queued = loop.async { [self] in
                guard !leaving else { continuation.resume(); return }
                leaving = true
                guard joined else { continuation.resume(); return }
                let once = Once(continuation)
                goodbyeCompletion = { once.resume(()) }
                send(.goodbye(details: [:], reason: reason))
                loop.after(milliseconds: 2_000) { once.resume(()) }
            }
            if !queued { continuation.resume() }
        }
        loop.sync {
            joined = false
            dropSocket(code: 1000, reason: "goodbye")
            failPending("left the session")
            end("left")
        }
    }

    deinit {
        // An abandoned session closes its transport (the socket holds no reference to us).
        socket?.close(code: 1001, reason: "going away")
    }
}

/// Resumes a continuation once; later calls are ignored (answer vs. timeout races).
private final class Once<Value: Sendable>: @unchecked Sendable {  // used on the loop thread only
    private var continuation: CheckedContinuation<Value, Never>?
    init(_ c: CheckedContinuation<Value, Never>) { continuation = c }
    func resume(_ value: Value) {
        continuation?.resume(returning: value)
        continuation = nil
    }
}
