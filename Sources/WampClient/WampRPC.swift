// Remote procedure calls of a WAMP session (WAMP Basic Profile §Remote Procedure
// Calls: CALL/RESULT, REGISTER/REGISTERED, UNREGISTER/UNREGISTERED,
// INVOCATION/YIELD): calling procedures, and answering those registered here.

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
    /// Positional arguments of the call.
    public var args: [JSONValue]
    /// Keyword arguments of the call.
    public var kwargs: WampDict
    /// INVOCATION details from the router.
    public var details: WampDict
}

extension WampSession {
    /// A procedure registered by this session: what answers its invocations, under the
    /// router's current registration id (new after a reconnect). Part of ``State`` (loop thread).
    final class Registration {
        let procedure: String
        let handler: Handler
        var id: UInt64
        init(procedure: String, handler: @escaping Handler, id: UInt64) { self.procedure = procedure; self.handler = handler; self.id = id }
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

    // MARK: answers and invocations from the router (loop thread)

    /// RESULT of a call.
    func resulted(request: UInt64, _ result: WampResult) {
        guard case let .call(k)? = state.pending.removeValue(forKey: request) else { return }
        k(.success(result))
    }

    /// REGISTERED: a new registration joins ``registrations``; a re-registration after
    /// a reconnect takes the router's new id.
    func registered(request: UInt64, registration: UInt64) {
        let state = self.state
        guard case let .register(procedure, handler, k)? = state.pending.removeValue(forKey: request) else { return }
        if let existing = state.registrations.first(where: { $0.procedure == procedure }) {
            existing.id = registration
        } else {
            state.registrations.append(Registration(procedure: procedure, handler: handler, id: registration))
        }
        k(.success(registration))
    }

    /// UNREGISTERED.
    func unregistered(request: UInt64) {
        guard case let .unregister(k)? = state.pending.removeValue(forKey: request) else { return }
        k(.success(()))
    }

    /// INVOCATION: runs the registered handler in a task and answers with YIELD or
    /// ERROR on the loop thread, unless the transport changed meanwhile.
    func invoke(request: UInt64, registration: UInt64, _ invocation: WampInvocation) {
        guard let handler = state.registrations.first(where: { $0.id == registration })?.handler else {
            send(.error(requestType: .invocation, request: request, details: [:], error: "wamp.error.no_such_registration", args: nil, kwargs: nil))
            return
        }
        let loop = self.loop, generation = state.generation
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
            loop.async { [weak self] in if let self, self.state.generation == generation { self.send(message) } }
        }
    }
}
