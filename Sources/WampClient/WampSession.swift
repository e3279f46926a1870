// The WAMP v2 client session (WAMP Basic Profile, JSON serialization `wamp.2.json`
// over a WebSocket, RFC 6455): joining a realm (HELLO … WELCOME, ABORT), the dispatch
// of what the router sends, and leaving (GOODBYE). Authentication, requests,
// publish & subscribe, calls and reconnecting live in the files named after them.
import EventLoop
import Foundation
import Synchronization

/// A WAMP v2 client session (Basic Profile roles publisher, subscriber, caller,
/// callee; WAMP-CRA and ticket authentication) over ``WebSocket`` with JSON
/// serialization (`wamp.2.json`).
///
/// All protocol state (``State``) lives on the ``EventLoop`` thread, in a ``LoopBound``
/// that checks it; the public methods are async and may be called from anywhere. What
/// other threads read (``sessionId``, ``welcomeDetails``) is in a `Mutex`. When the
/// transport drops and a ``ReconnectPolicy`` is set, the session reconnects with
/// backoff, joins again, re-subscribes and re-registers, and reports it on ``status``.
public final class WampSession: Sendable {

    /// Answers one invocation of a registered procedure.
    public typealias Handler = @Sendable (WampInvocation) async throws -> WampResult

    /// The protocol state of a session: loop thread only (held in a ``LoopBound``).
    final class State {
        var socket: WebSocket?
        var joinCompletion: ((Result<UInt64, WampError>) -> Void)?
        var joinTimer: UInt32 = 0
        var goodbyeCompletion: (() -> Void)?
        /// Requests in flight by request id (WampRequests.swift).
        var pending: [UInt64: Pending] = [:]
        var subscriptions: [WampSubscription] = []
        var registrations: [Registration] = []
        var nextRequest: UInt64 = 1
        var joined = false
        var leaving = false
        var finished = false
        /// Counts transports: events of an earlier socket, and replies to its invocations,
        /// are dropped.
        var generation = 0

        deinit {
            // An abandoned session closes its transport (the socket holds no reference to
            // the session); close hops to the loop thread, so this may run anywhere.
            socket?.close(code: 1001, reason: "going away")
        }
    }

    /// The router's answer to the current join, written on the loop thread at WELCOME
    /// and read from any thread.
    struct Welcome: Sendable {
        var sessionId: UInt64 = 0
        var details: WampDict = [:]
    }

    /// The configuration the session was joined with.
    public let configuration: WampConfiguration
    let loop: EventLoop
    private let confined: LoopBound<State>
    private let welcome = Mutex(Welcome())

    /// The protocol state. Precondition: called on the loop thread.
    var state: State { confined.value }

    /// The router-assigned session id of the current join (changes on reconnect).
    public var sessionId: UInt64 { welcome.withLock { $0.sessionId } }
    /// The WELCOME details of the current join (authid, authrole, roles …).
    public var welcomeDetails: WampDict { welcome.withLock { $0.details } }
    /// Status changes after the first join, in order (single consumer).
    public let status: AsyncStream<WampStatus>
    let statusContinuation: AsyncStream<WampStatus>.Continuation

    private init(configuration: WampConfiguration, loop: EventLoop) {
        self.configuration = configuration
        self.loop = loop
        confined = LoopBound(State(), loop: loop)
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

    /// Opens a new transport and joins on it (HELLO … WELCOME); used for the first join
    /// and for each reconnect.
    func connectAndJoin() async throws(WampError) {
        var options = WebSocket.Options(url: configuration.url)
        options.caFile = configuration.caFile
        options.insecure = configuration.insecure
        options.keepaliveSeconds = configuration.keepaliveSeconds
        options.maxMessageBytes = configuration.maxMessageBytes
        options.connectTimeoutMs = configuration.joinTimeoutMs
        let socketOptions = options
        let result: Result<UInt64, WampError> = await withCheckedContinuation { continuation in
            let queued = loop.async { [self] in
                let state = self.state
                state.generation += 1
                let generation = state.generation
                state.joinCompletion = { continuation.resume(returning: $0) }
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
                        let state = self.state
                        guard generation == state.generation, state.joinCompletion != nil else {
                            socket.close(code: 1000, reason: "no longer needed")
                            return
                        }
                        state.socket = socket
                        state.joinTimer = self.loop.after(milliseconds: self.configuration.joinTimeoutMs) { [weak self] in
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
    func failJoin(_ error: WampError, closeCode: UInt16 = 1000) {
        finishJoin(.failure(error))
        dropSocket(code: closeCode)
    }

    /// Drops the current transport: closes it and ignores its later events.
    func dropSocket(code: UInt16 = 1000, reason: String = "") {
        let state = self.state
        state.socket?.close(code: code, reason: reason)
        state.socket = nil
        state.generation += 1
    }

    /// HELLO's details: the agent, the four Basic Profile roles (with publisher
    /// exclusion), and the authentication method when one is configured.
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
        details.merge(configuration.auth.helloDetails) { $1 }
        return details
    }

    /// Ends the join attempt in progress, if any, with `result`.
    private func finishJoin(_ result: Result<UInt64, WampError>) {
        let state = self.state
        guard let completion = state.joinCompletion else { return }
        state.joinCompletion = nil
        loop.cancelTimer(state.joinTimer)
        completion(result)
    }

    /// Sends `message` on the current transport (none: dropped).
    func send(_ message: WampMessage) {
        Log.write(.debug, "wamp", "→ \(message.type.name)")
        state.socket?.send(message.serialized)
    }

    // MARK: incoming (loop thread)

    private func handle(_ event: WebSocket.Event, generation: Int) {
        guard generation == state.generation else { return }  // a stale socket of an earlier join
        switch event {
        case .text(let text):
            do {
                let message = try WampMessage(parsing: text)
                Log.write(.debug, "wamp", "← \(message.type.name)")
                handle(message)
            } catch {
                violation(error)
            }
        case .binary:
            violation(WampProtocolError(reason: "binary message on a wamp.2.json transport", message: ""))
        case let .error(code, text):
            if state.joinCompletion != nil { return failJoin(.connectionClosed(code: code ?? 1006, reason: text), closeCode: code ?? 1011) }
            lost("WebSocket error: \(text)")
        case let .closed(code, reason):
            if state.joinCompletion != nil { return failJoin(.connectionClosed(code: code, reason: reason)) }
            lost("WebSocket closed with \(code)" + (reason.isEmpty ? "" : " \(reason)"))
        }
    }

    /// Aborts the session for a protocol violation (WAMP Basic Profile: the peer must fail the session).
    func violation(_ error: WampProtocolError) {
        send(.abort(details: ["message": .string(error.reason)], reason: "wamp.error.protocol_violation"))
        if state.joinCompletion != nil { return failJoin(.protocolViolation(error), closeCode: 1002) }
        state.socket?.close(code: 1002, reason: "protocol violation")
        lost("protocol violation: \(error.reason)")
    }

    /// Dispatches one message from the router.
    private func handle(_ message: WampMessage) {
        switch message {
        case let .welcome(session, details):
            guard state.joinCompletion != nil else { return violation(WampProtocolError(reason: "WELCOME while joined", message: message.serialized)) }
            if state.leaving {  // left while this (re)join was under way
                send(.goodbye(details: [:], reason: "wamp.close.close_realm"))
                return failJoin(.notJoined(reason: "left the session"))
            }
            welcome.withLock { $0 = Welcome(sessionId: session, details: details) }
            state.joined = true
            finishJoin(.success(session))
        case let .abort(details, reason):
            let text = details["message"]?.stringValue
            let authReasons = ["wamp.error.not_authorized", "wamp.error.authentication_failed", "wamp.error.no_such_principal",
                               "wamp.error.authorization_failed", "wamp.error.no_auth_method"]
            let error: WampError = authReasons.contains(reason) || reason.contains("auth")
                ? .authenticationFailed(reason: reason, message: text) : .aborted(reason: reason, message: text)
            if state.joinCompletion != nil {
                failJoin(error)
            } else {
                lost("router aborted: \(reason)")
            }
        case let .challenge(method, extra):
            answerChallenge(method: method, extra: extra)
        case let .goodbye(details, reason):
            if state.leaving {
                state.goodbyeCompletion?()
                state.goodbyeCompletion = nil
            } else {
                send(.goodbye(details: [:], reason: "wamp.close.goodbye_and_out"))
                routerSaidGoodbye(reason: reason, message: details["message"]?.stringValue)
            }
        case let .error(_, request, _, error, args, kwargs):
            requestFailed(request, error: error, args: args, kwargs: kwargs)
        case let .subscribed(request, subscription):
            subscribed(request: request, subscription: subscription)
        case let .published(request, publication):
            published(request: request, publication: publication)
        case let .event(subscription, publication, details, args, kwargs):
            deliver(WampEvent(publication: publication, args: args ?? [], kwargs: kwargs ?? [:], details: details), subscription: subscription)
        case let .unsubscribed(request):
            unsubscribed(request: request)
        case let .result(request, _, args, kwargs):
            resulted(request: request, WampResult(args: args ?? [], kwargs: kwargs ?? [:]))
        case let .registered(request, registration):
            registered(request: request, registration: registration)
        case let .unregistered(request):
            unregistered(request: request)
        case let .invocation(request, registration, details, args, kwargs):
            invoke(request: request, registration: registration,
                   WampInvocation(args: args ?? [], kwargs: kwargs ?? [:], details: details))
        case .hello, .authenticate, .publish, .subscribe, .unsubscribe, .call, .register, .unregister, .yield:
            violation(WampProtocolError(reason: "\(message.type) is a client-to-router message", message: message.serialized))
        }
    }

    // MARK: leaving

    /// Leaves the realm (GOODBYE, waiting up to 2 s for the router's GOODBYE) and
    /// closes the WebSocket. No reconnect follows. Idempotent.
    public func leave(reason: String = "wamp.close.close_realm") async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let queued = loop.async { [self] in
                let state = self.state
                guard !state.leaving else { continuation.resume(); return }
                state.leaving = true
                guard state.joined else { continuation.resume(); return }
                let once = Once(continuation)
                state.goodbyeCompletion = { once.resume(()) }
                send(.goodbye(details: [:], reason: reason))
                loop.after(milliseconds: 2_000) { once.resume(()) }
            }
            if !queued { continuation.resume() }
        }
        loop.sync {
            state.joined = false
            dropSocket(code: 1000, reason: "goodbye")
            failPending("left the session")
            end("left")
        }
    }
}
