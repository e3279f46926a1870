// Requests of a WAMP session and their answers (WAMP Basic Profile §Publish &
// Subscribe, §Remote Procedure Calls): session-scope request ids, what waits for each
// answer, the request timeout, and failing what is in flight when the session goes.
import EventLoop
import Synchronization

extension WampSession {
    /// What a request in flight waits for, keyed by its request id; each case holds
    /// the completion that its answer, an ERROR, the loss of the session or the timeout
    /// calls once (loop thread).
    enum Pending {
        case subscribe([WampSubscription], String, (Result<UInt64, WampError>) -> Void)
        case publish((Result<UInt64?, WampError>) -> Void)
        case call((Result<WampResult, WampError>) -> Void)
        case register(String, Handler, (Result<UInt64, WampError>) -> Void)
        case unsubscribe((Result<Void, WampError>) -> Void)
        case unregister((Result<Void, WampError>) -> Void)

        /// Calls the completion with `error`.
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

    /// Sends a request built by `build` (given the new request id and the completion)
    /// and waits for its answer, an ERROR, the session's loss or the request timeout.
    func request<T: Sendable>(timeoutName: String,
                              _ build: @escaping @Sendable (UInt64, @escaping (Result<T, WampError>) -> Void) -> (WampMessage, Pending))
        async throws(WampError) -> T {
        let timeout = configuration.requestTimeoutMs
        let result: Result<T, WampError> = await withCheckedContinuation { continuation in
            let queued = loop.async { [self] in
                let state = self.state
                guard state.joined else {
                    let why = state.leaving ? "left the session" : (state.finished ? "the session ended" : "reconnecting")
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
                state.pending[id] = entry
                timer = loop.after(milliseconds: timeout) { [weak self] in
                    self?.state.pending.removeValue(forKey: id)
                    once.resume(.failure(.timeout(operation: timeoutName, milliseconds: timeout)))
                }
                send(message)
            }
            if !queued { continuation.resume(returning: .failure(.notJoined(reason: "event loop stopped"))) }
        }
        return try result.get()
    }

    /// An ERROR answered request `request`: its completion fails with
    /// ``WampError/application(error:args:kwargs:)`` (an unknown id is ignored).
    func requestFailed(_ request: UInt64, error: String, args: [JSONValue]?, kwargs: WampDict?) {
        state.pending.removeValue(forKey: request)?.fail(.application(error: error, args: args ?? [], kwargs: kwargs ?? [:]))
    }

    /// Fails every request in flight with ``WampError/notJoined(reason:)``.
    func failPending(_ reason: String) {
        let state = self.state
        let failed = state.pending
        state.pending = [:]
        failed.values.forEach { $0.fail(.notJoined(reason: reason)) }
    }

    /// The next session-scope request id (WAMP: 1, 2, … wrapping at 2^53).
    func takeRequestId() -> UInt64 {
        let state = self.state
        let id = state.nextRequest
        state.nextRequest = id >= WampMessage.maxID ? 1 : id + 1
        return id
    }
}
