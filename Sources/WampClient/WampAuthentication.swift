// Authentication when a WAMP session joins (WAMP Advanced Profile §Authentication:
// ticket and WAMP-CRA): what HELLO announces and how a CHALLENGE is answered.

/// How a session authenticates when it joins (WAMP Advanced Profile §Authentication).
public enum WampAuth: Sendable, Equatable {
    /// No authentication (`authmethods` not sent).
    case anonymous
    /// Ticket-based: the router's CHALLENGE is answered with `ticket`.
    case ticket(authid: String, ticket: String)
    /// WAMP-CRA: the challenge is signed with `secret` (salted when the router says so).
    case cra(authid: String, secret: String)

    /// The HELLO details that announce this method: `authmethods` and `authid`
    /// (none for anonymous).
    var helloDetails: WampDict {
        switch self {
        case .anonymous: return [:]
        case let .ticket(authid, _): return ["authmethods": .array([.string("ticket")]), "authid": .string(authid)]
        case let .cra(authid, _): return ["authmethods": .array([.string("wampcra")]), "authid": .string(authid)]
        }
    }
}

extension WampSession {
    /// Answers the router's CHALLENGE for `method` with AUTHENTICATE, or ends the join
    /// attempt when the method is not the configured one or the challenge is unusable
    /// (loop thread).
    func answerChallenge(method: String, extra: WampDict) {
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
}
