// The errors of a WAMP session (WAMP Basic Profile §Session Lifecycle, §ERROR;
// Advanced Profile §Authentication), each with the router's words.

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

    /// One line for people: what failed, with the router's reason and message.
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
