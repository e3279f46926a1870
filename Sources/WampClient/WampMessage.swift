// The WAMP v2 messages of the Basic Profile (draft-oberstet-hybi-tavendo-wamp,
// "Web Application Messaging Protocol - Basic Profile", §6 "Messages") plus
// CHALLENGE/AUTHENTICATE from the Advanced Profile, in the JSON serialization
// (§5.2.1): parsing with strict checking and compact serializing.

/// A WAMP `Options|dict` or `Details|dict` (spec §6 "Messages": a dictionary with
/// string keys), and the keyword arguments `ArgumentsKw|dict`.
public typealias WampDict = [String: JSONValue]

/// WAMP message type codes, the first element of every message
/// (spec §6.5 "Message Codes and Direction"; CHALLENGE 4 and AUTHENTICATE 5
/// are from the Advanced Profile's authentication).
public enum WampMessageType: Int, Sendable, CaseIterable {
    /// `[1, Realm|uri, Details|dict]`, client → router (§6.4.1.1).
    case hello = 1
    /// `[2, Session|id, Details|dict]`, router → client (§6.4.1.2).
    case welcome = 2
    /// `[3, Details|dict, Reason|uri]`, either way (§6.4.1.3).
    case abort = 3
    /// `[4, AuthMethod|string, Extra|dict]`, router → client (Advanced Profile).
    case challenge = 4
    /// `[5, Signature|string, Extra|dict]`, client → router (Advanced Profile).
    case authenticate = 5
    /// `[6, Details|dict, Reason|uri]`, either way (§6.4.1.4).
    case goodbye = 6
    /// `[8, REQUEST.Type|int, REQUEST.Request|id, Details|dict, Error|uri, …]` (§6.4.1.5).
    case error = 8
    /// `[16, Request|id, Options|dict, Topic|uri, …]` (§6.4.2.1).
    case publish = 16
    /// `[17, PUBLISH.Request|id, Publication|id]` (§6.4.2.2).
    case published = 17
    /// `[32, Request|id, Options|dict, Topic|uri]` (§6.4.2.3).
    case subscribe = 32
    /// `[33, SUBSCRIBE.Request|id, Subscription|id]` (§6.4.2.4).
    case subscribed = 33
    /// `[34, Request|id, SUBSCRIBED.Subscription|id]` (§6.4.2.5).
    case unsubscribe = 34
    /// `[35, UNSUBSCRIBE.Request|id]` (§6.4.2.6).
    case unsubscribed = 35
    /// `[36, Subscription|id, Publication|id, Details|dict, …]` (§6.4.2.7).
    case event = 36
    /// `[48, Request|id, Options|dict, Procedure|uri, …]` (§6.4.3.1).
    case call = 48
    /// `[50, CALL.Request|id, Details|dict, …]` (§6.4.3.2).
    case result = 50
    /// `[64, Request|id, Options|dict, Procedure|uri]` (§6.4.3.3).
    case register = 64
    /// `[65, REGISTER.Request|id, Registration|id]` (§6.4.3.4).
    case registered = 65
    /// `[66, Request|id, REGISTERED.Registration|id]` (§6.4.3.5).
    case unregister = 66
    /// `[67, UNREGISTER.Request|id]` (§6.4.3.6).
    case unregistered = 67
    /// `[68, Request|id, REGISTERED.Registration|id, Details|dict, …]` (§6.4.3.7).
    case invocation = 68
    /// `[70, INVOCATION.Request|id, Options|dict, …]` (§6.4.3.8).
    case yield = 70

    /// The message's name as the spec writes it, e.g. "HELLO".
    public var name: String { String(describing: self).uppercased() }

    /// How many elements (type code included) a message of this type has
    /// (§6.4): the trailing `Arguments|list` and `ArgumentsKw|dict` are optional.
    public var elementCount: ClosedRange<Int> {
        switch self {
        case .hello, .welcome, .abort, .challenge, .authenticate, .goodbye: return 3...3
        case .error: return 5...7
        case .publish, .call: return 4...6
        case .published, .subscribed, .unsubscribe, .registered, .unregister: return 3...3
        case .subscribe, .register: return 4...4
        case .unsubscribed, .unregistered: return 2...2
        case .event, .invocation: return 4...6
        case .result, .yield: return 3...5
        }
    }

    /// The request types an ERROR can answer (§6.4.1.5, §8, §9): SUBSCRIBE,
    /// UNSUBSCRIBE, PUBLISH, REGISTER, UNREGISTER, CALL and INVOCATION.
    public var canFail: Bool {
        switch self {
        case .subscribe, .unsubscribe, .publish, .register, .unregister, .call, .invocation: return true
        default: return false
        }
    }
}

/// One WAMP message (spec §6.4 "Message Definitions").
///
/// IDs are `UInt64` and, in parsed messages, in 1...``maxID`` (§5.1.2). URIs
/// (realm, topic, procedure, reason, error) are checked with the loose rules
/// of §5.1.1 (see ``isValidWampURI(_:allowEmptyComponents:)``). `args` and
/// `kwargs` are the optional `Arguments|list` and `ArgumentsKw|dict` at the end
/// of a message (§6.4, §6.7).
public enum WampMessage: Equatable, Sendable {
    /// `[HELLO, Realm|uri, Details|dict]`: open a session on `realm` (§6.4.1.1, §7.1.1);
    /// `details.roles` announces the client's roles.
    case hello(realm: String, details: WampDict)
    /// `[WELCOME, Session|id, Details|dict]`: the session is open (§6.4.1.2, §7.1.2).
    case welcome(session: UInt64, details: WampDict)
    /// `[ABORT, Details|dict, Reason|uri]`: session opening refused (§6.4.1.3, §7.1.3).
    case abort(details: WampDict, reason: String)
    /// `[CHALLENGE, AuthMethod|string, Extra|dict]`: the router asks for authentication
    /// (Advanced Profile, e.g. `wampcra`, `ticket`).
    case challenge(authMethod: String, extra: WampDict)
    /// `[AUTHENTICATE, Signature|string, Extra|dict]`: the client's answer to a CHALLENGE
    /// (Advanced Profile).
    case authenticate(signature: String, extra: WampDict)
    /// `[GOODBYE, Details|dict, Reason|uri]`: close the session; echoed by the peer
    /// (§6.4.1.4, §7.2).
    case goodbye(details: WampDict, reason: String)
    /// `[ERROR, REQUEST.Type|int, REQUEST.Request|id, Details|dict, Error|uri,
    /// (Arguments|list, (ArgumentsKw|dict))]`: request `request` of type `requestType`
    /// failed (§6.4.1.5). Parsed only for request types that can fail
    /// (``WampMessageType/canFail``).
    case error(requestType: WampMessageType, request: UInt64, details: WampDict, error: String, args: [JSONValue]?, kwargs: WampDict?)
    /// `[PUBLISH, Request|id, Options|dict, Topic|uri, (Arguments|list, (ArgumentsKw|dict))]` (§6.4.2.1).
    case publish(request: UInt64, options: WampDict, topic: String, args: [JSONValue]?, kwargs: WampDict?)
    /// `[PUBLISHED, PUBLISH.Request|id, Publication|id]` (§6.4.2.2).
    case published(request: UInt64, publication: UInt64)
    /// `[SUBSCRIBE, Request|id, Options|dict, Topic|uri]` (§6.4.2.3). With
    /// `options.match == "wildcard"` (Advanced Profile) the topic may have empty components.
    case subscribe(request: UInt64, options: WampDict, topic: String)
    /// `[SUBSCRIBED, SUBSCRIBE.Request|id, Subscription|id]` (§6.4.2.4).
    case subscribed(request: UInt64, subscription: UInt64)
    /// `[UNSUBSCRIBE, Request|id, SUBSCRIBED.Subscription|id]` (§6.4.2.5).
    case unsubscribe(request: UInt64, subscription: UInt64)
    /// `[UNSUBSCRIBED, UNSUBSCRIBE.Request|id]` (§6.4.2.6).
    case unsubscribed(request: UInt64)
    /// `[EVENT, SUBSCRIBED.Subscription|id, PUBLISHED.Publication|id, Details|dict,
    /// (Arguments|list, (ArgumentsKw|dict))]` (§6.4.2.7).
    case event(subscription: UInt64, publication: UInt64, details: WampDict, args: [JSONValue]?, kwargs: WampDict?)
    /// `[CALL, Request|id, Options|dict, Procedure|uri, (Arguments|list, (ArgumentsKw|dict))]` (§6.4.3.1).
    case call(request: UInt64, options: WampDict, procedure: String, args: [JSONValue]?, kwargs: WampDict?)
    /// `[RESULT, CALL.Request|id, Details|dict, (Arguments|list, (ArgumentsKw|dict))]` (§6.4.3.2).
    case result(request: UInt64, details: WampDict, args: [JSONValue]?, kwargs: WampDict?)
    /// `[REGISTER, Request|id, Options|dict, Procedure|uri]` (§6.4.3.3). With
    /// `options.match == "wildcard"` (Advanced Profile) the procedure may have empty components.
    case register(request: UInt64, options: WampDict, procedure: String)
    /// `[REGISTERED, REGISTER.Request|id, Registration|id]` (§6.4.3.4).
    case registered(request: UInt64, registration: UInt64)
    /// `[UNREGISTER, Request|id, REGISTERED.Registration|id]` (§6.4.3.5).
    case unregister(request: UInt64, registration: UInt64)
    /// `[UNREGISTERED, UNREGISTER.Request|id]` (§6.4.3.6).
    case unregistered(request: UInt64)
    /// `[INVOCATION, Request|id, REGISTERED.Registration|id, Details|dict,
    /// (Arguments|list, (ArgumentsKw|dict))]` (§6.4.3.7).
    case invocation(request: UInt64, registration: UInt64, details: WampDict, args: [JSONValue]?, kwargs: WampDict?)
    /// `[YIELD, INVOCATION.Request|id, Options|dict, (Arguments|list, (ArgumentsKw|dict))]` (§6.4.3.8).
    case yield(request: UInt64, options: WampDict, args: [JSONValue]?, kwargs: WampDict?)

    /// The maximum id, 2^53 = 9007199254740992 (§5.1.2 "IDs": the largest integer
    /// that, with all smaller ones, a double holds exactly).
    public static let maxID: UInt64 = 1 << 53

    /// The message's type code (§6.5).
    public var type: WampMessageType {
        switch self {
        case .hello: return .hello
        case .welcome: return .welcome
        case .abort: return .abort
        case .challenge: return .challenge
        case .authenticate: return .authenticate
        case .goodbye: return .goodbye
        case .error: return .error
        case .publish: return .publish
        case .published: return .published
        case .subscribe: return .subscribe
        case .subscribed: return .subscribed
        case .unsubscribe: return .unsubscribe
        case .unsubscribed: return .unsubscribed
        case .event: return .event
        case .call: return .call
        case .result: return .result
        case .register: return .register
        case .registered: return .registered
        case .unregister: return .unregister
        case .unregistered: return .unregistered
        case .invocation: return .invocation
        case .yield: return .yield
        }
    }

    // MARK: Parsing

    /// Parses one WAMP JSON message (the text of one WebSocket message, subprotocol
    /// `wamp.2.json`, §5.3.1).
    ///
    /// Strict: a JSON array whose first element is a known type code (§6.5;
    /// an integer, not a bool, string or `1.0`); exact arity per type (§6.4;
    /// args/kwargs optional at the end, kwargs only after args); ids integers in
    /// 1...2^53 (9007199254740992, §5.1.2; the spec's range starts at 0, but no
    /// peer issues 0 and it is refused here); URIs (realm, topic, procedure,
    /// reason, error) valid per the loose rules of §5.1.1: non-empty components
    /// separated by ".", no white space, no "#" (empty components allowed for a
    /// SUBSCRIBE/REGISTER with `options.match == "wildcard"`); dicts JSON objects;
    /// args a JSON array; kwargs a JSON object. Unknown dict keys are kept
    /// (§6.1 "Extensibility"). An `Arguments` of `[]` is kept as `[]`, not `nil`.
    /// - Parameter text: the JSON text.
    /// - Throws: ``WampProtocolError`` whose `reason` names the offending element
    ///   (message, position, spec name) and value, and whose `message` holds the
    ///   start of `text`: "not valid JSON: …", "a WAMP message must be a JSON
    ///   array…", "empty array…", "message type (index 0) must be an integer…",
    ///   "unknown message type 99", "PUBLISH must have 4 to 6 elements, has 7",
    ///   "SUBSCRIBE.Request (index 1) must be an ID…, got 0", "… is not a valid URI…",
    ///   "… must be a dict (JSON object)…", "PUBLISH.Arguments (index 4) must be a
    ///   list (JSON array)…", and so on.
    public init(parsing text: String) throws(WampProtocolError) {
        let json = try JSONValue(parsing: text)
        guard case .array(let items) = json else {
            throw WampProtocolError(reason: "a WAMP message must be a JSON array, got \(Fields.show(json))", message: text)
        }
        guard let first = items.first else {
            throw WampProtocolError(reason: "empty array: a WAMP message starts with its message type code", message: text)
        }
        guard case .int(let code) = first else {
            throw WampProtocolError(
                reason: "message type (index 0) must be an integer code, got \(Fields.show(first))", message: text)
        }
        guard let type = Int(exactly: code).flatMap(WampMessageType.init(rawValue:)) else {
            throw WampProtocolError(reason: "unknown message type \(code)", message: text)
        }
        let counts = type.elementCount
        guard counts.contains(items.count) else {
            let expected = counts.count == 1 ? "\(counts.lowerBound)" : "\(counts.lowerBound) to \(counts.upperBound)"
            throw WampProtocolError(
                reason: "\(type.name) must have \(expected) elements, has \(items.count)", message: text)
        }
        let f = Fields(items: items, type: type, text: text)
        switch type {
        case .hello:
            self = .hello(realm: try f.uri(1, "Realm"), details: try f.dict(2, "Details"))
        case .welcome:
            self = .welcome(session: try f.id(1, "Session"), details: try f.dict(2, "Details"))
        // Messages that share a layout (§6.4) are read once, then made into the one
        // the type code names.
        case .abort, .goodbye:  // [_, Details|dict, Reason|uri]
            let details = try f.dict(1, "Details")
            let reason = try f.uri(2, "Reason")
            self = type == .abort ? .abort(details: details, reason: reason) : .goodbye(details: details, reason: reason)
        case .challenge, .authenticate:  // [_, AuthMethod|string or Signature|string, Extra|dict]
            let string = try f.string(1, type == .challenge ? "AuthMethod" : "Signature")
            let extra = try f.dict(2, "Extra")
            self = type == .challenge ? .challenge(authMethod: string, extra: extra) : .authenticate(signature: string, extra: extra)
        case .error:
            let requestType = try f.requestType(1)
            let request = try f.id(2, "Request")
            let details = try f.dict(3, "Details")
            let error = try f.uri(4, "Error")
            let (args, kwargs) = try f.payload(5)
            self = .error(requestType: requestType, request: request, details: details, error: error, args: args, kwargs: kwargs)
        case .publish, .call:  // [_, Request|id, Options|dict, Topic|uri or Procedure|uri, payload]
            let request = try f.id(1, "Request")
            let options = try f.dict(2, "Options")
            let uri = try f.uri(3, type == .publish ? "Topic" : "Procedure")
            let (args, kwargs) = try f.payload(4)
            self = type == .publish
                ? .publish(request: request, options: options, topic: uri, args: args, kwargs: kwargs)
                : .call(request: request, options: options, procedure: uri, args: args, kwargs: kwargs)
        case .subscribe, .register:  // [_, Request|id, Options|dict, Topic|uri or Procedure|uri (wildcards allowed)]
            let request = try f.id(1, "Request")
            let options = try f.dict(2, "Options")
            let uri = try f.uri(3, type == .subscribe ? "Topic" : "Procedure", allowEmptyComponents: Fields.isWildcard(options))
            self = type == .subscribe
                ? .subscribe(request: request, options: options, topic: uri)
                : .register(request: request, options: options, procedure: uri)
        case .event, .invocation:  // [_, Subscription|id or Request|id, Publication|id or Registration|id, Details|dict, payload]
            let first = try f.id(1, type == .event ? "Subscription" : "Request")
            let second = try f.id(2, type == .event ? "Publication" : "Registration")
            let details = try f.dict(3, "Details")
            let (args, kwargs) = try f.payload(4)
            self = type == .event
                ? .event(subscription: first, publication: second, details: details, args: args, kwargs: kwargs)
                : .invocation(request: first, registration: second, details: details, args: args, kwargs: kwargs)
        case .result, .yield:  // [_, Request|id, Details|dict or Options|dict, payload]
            let request = try f.id(1, "Request")
            let dict = try f.dict(2, type == .result ? "Details" : "Options")
            let (args, kwargs) = try f.payload(3)
            self = type == .result
                ? .result(request: request, details: dict, args: args, kwargs: kwargs)
                : .yield(request: request, options: dict, args: args, kwargs: kwargs)
        case .published:
            self = .published(request: try f.id(1, "Request"), publication: try f.id(2, "Publication"))
        case .subscribed:
            self = .subscribed(request: try f.id(1, "Request"), subscription: try f.id(2, "Subscription"))
        case .unsubscribe:
            self = .unsubscribe(request: try f.id(1, "Request"), subscription: try f.id(2, "Subscription"))
        case .registered:
            self = .registered(request: try f.id(1, "Request"), registration: try f.id(2, "Registration"))
        case .unregister:
            self = .unregister(request: try f.id(1, "Request"), registration: try f.id(2, "Registration"))
        case .unsubscribed, .unregistered:  // [_, Request|id]
            let request = try f.id(1, "Request")
            self = type == .unsubscribed ? .unsubscribed(request: request) : .unregistered(request: request)
        }
    }

    // MARK: Serializing

    /// Compact JSON text of the message (§5.2.1), deterministic (dict keys sorted,
    /// see ``JSONValue/serialized``).
    ///
    /// `args` is omitted when it and `kwargs` are nil; when only `kwargs` is
    /// given, `[]` is written for `args` (kwargs can only follow args, §6.4), so
    /// that message reads back with `args == []`. An `args` of `[]` is written as
    /// given (§6.7 advises against sending it; that is the sender's choice). Values
    /// are written as they are, not checked: an id of 0 or a bad URI is written
    /// and would be refused by ``init(parsing:)``.
    public var serialized: String {
        var parts: [String] = [String(type.rawValue)]
        func id(_ v: UInt64) { parts.append(String(v)) }
        func dict(_ d: WampDict) { parts.append(JSONValue.object(d).serialized) }
        func string(_ s: String) { parts.append(JSONValue.string(s).serialized) }
        func payload(_ args: [JSONValue]?, _ kwargs: WampDict?) {
            if let kwargs {
                parts.append(JSONValue.array(args ?? []).serialized)
                parts.append(JSONValue.object(kwargs).serialized)
            } else if let args {
                parts.append(JSONValue.array(args).serialized)
            }
        }
        // One line per layout (§6.4): the messages that share one are written alike.
        switch self {
        case .hello(let realm, let details): string(realm); dict(details)
        case .welcome(let session, let details): id(session); dict(details)
        case .abort(let details, let reason), .goodbye(let details, let reason): dict(details); string(reason)
        case .challenge(let text, let extra), .authenticate(let text, let extra): string(text); dict(extra)
        case .error(let requestType, let request, let details, let error, let args, let kwargs):
            parts.append(String(requestType.rawValue)); id(request); dict(details); string(error); payload(args, kwargs)
        case .publish(let request, let options, let uri, let args, let kwargs), .call(let request, let options, let uri, let args, let kwargs):
            id(request); dict(options); string(uri); payload(args, kwargs)
        case .subscribe(let request, let options, let uri), .register(let request, let options, let uri):
            id(request); dict(options); string(uri)
        case .published(let request, let second), .subscribed(let request, let second), .unsubscribe(let request, let second),
             .registered(let request, let second), .unregister(let request, let second):
            id(request); id(second)
        case .unsubscribed(let request), .unregistered(let request): id(request)
        case .event(let first, let second, let details, let args, let kwargs), .invocation(let first, let second, let details, let args, let kwargs):
            id(first); id(second); dict(details); payload(args, kwargs)
        case .result(let request, let detailsOrOptions, let args, let kwargs),
             .yield(let request, let detailsOrOptions, let args, let kwargs):
            id(request); dict(detailsOrOptions); payload(args, kwargs)
        }
        return "[" + parts.joined(separator: ",") + "]"
    }
}

/// The elements of a message being parsed, with typed, checked access that
/// names the element in its errors ("SUBSCRIBE.Request (index 1)").
private struct Fields {
    let items: [JSONValue]
    let type: WampMessageType
    let text: String

    /// At most 60 characters of `value`'s JSON, for error reasons.
    static func show(_ value: JSONValue) -> String {
        let s = value.serialized
        return s.count > 60 ? String(s.prefix(60)) + "…" : s
    }

    /// Whether SUBSCRIBE/REGISTER options ask for wildcard matching (Advanced
    /// Profile), where URIs may have empty components.
    static func isWildcard(_ options: WampDict) -> Bool { options["match"] == .string("wildcard") }

    func fail(_ index: Int, _ name: String, _ problem: String) -> WampProtocolError {
        WampProtocolError(reason: "\(type.name).\(name) (index \(index)) \(problem)", message: text)
    }

    /// An `id` (§5.1.2): an integer in 1...2^53.
    func id(_ index: Int, _ name: String) throws(WampProtocolError) -> UInt64 {
        let value = items[index]
        guard case .int(let n) = value, n >= 1, UInt64(n) <= WampMessage.maxID else {
            throw fail(index, name, "must be an ID, an integer in 1...\(WampMessage.maxID), got \(Fields.show(value))")
        }
        return UInt64(n)
    }

    /// A `dict` (§6): a JSON object.
    func dict(_ index: Int, _ name: String) throws(WampProtocolError) -> WampDict {
        let value = items[index]
        guard case .object(let members) = value else {
            throw fail(index, name, "must be a dict (JSON object), got \(Fields.show(value))")
        }
        return members
    }

    /// A `string` (§6): any JSON string, the empty one included.
    func string(_ index: Int, _ name: String) throws(WampProtocolError) -> String {
        let value = items[index]
        guard case .string(let s) = value else {
            throw fail(index, name, "must be a string, got \(Fields.show(value))")
        }
        return s
    }

    /// A `uri` (§5.1.1, loose rules).
    func uri(_ index: Int, _ name: String, allowEmptyComponents: Bool = false) throws(WampProtocolError) -> String {
        let value = items[index]
        guard case .string(let s) = value else {
            throw fail(index, name, "must be a URI string, got \(Fields.show(value))")
        }
        guard isValidWampURI(s, allowEmptyComponents: allowEmptyComponents) else {
            let rule = allowEmptyComponents
                ? "components separated by \".\" without white space or \"#\""
                : "non-empty components separated by \".\" without white space or \"#\""
            throw fail(index, name, "is not a valid URI (\(rule)): \(Fields.show(value))")
        }
        return s
    }

    /// ERROR's `REQUEST.Type|int`: the code of a request type that can fail.
    func requestType(_ index: Int) throws(WampProtocolError) -> WampMessageType {
        let value = items[index]
        guard case .int(let n) = value, let t = Int(exactly: n).flatMap(WampMessageType.init(rawValue:)), t.canFail else {
            let allowed = WampMessageType.allCases.filter(\.canFail).map { "\($0.name) \($0.rawValue)" }.joined(separator: ", ")
            throw fail(index, "REQUEST.Type", "must be the type code of a request that can fail (\(allowed)), got \(Fields.show(value))")
        }
        return t
    }

    /// The optional trailing `Arguments|list` at `index` and `ArgumentsKw|dict` after it.
    func payload(_ index: Int) throws(WampProtocolError) -> ([JSONValue]?, WampDict?) {
        guard index < items.count else { return (nil, nil) }
        let argsValue = items[index]
        guard case .array(let args) = argsValue else {
            let hint = argsValue.objectValue != nil ? " (ArgumentsKw may only follow Arguments)" : ""
            throw fail(index, "Arguments", "must be a list (JSON array), got \(Fields.show(argsValue))\(hint)")
        }
        guard index + 1 < items.count else { return (args, nil) }
        let kwargsValue = items[index + 1]
        guard case .object(let kwargs) = kwargsValue else {
            throw fail(index + 1, "ArgumentsKw", "must be a dict (JSON object), got \(Fields.show(kwargsValue))")
        }
        return (args, kwargs)
    }
}

/// Whether `s` is a valid WAMP URI under the loose rules of spec §5.1.1 URIs:
/// components separated by ".", none containing white space (Python's `\s`:
/// Unicode white space and U+001C…U+001F) or "#" (reserved for routers).
///
/// Without `allowEmptyComponents` every component must be non-empty
/// (`^([^\s\.#]+\.)*([^\s\.#]+)$`), so "", "a..b", ".a" and "a." are refused.
/// With it (wildcard patterns of the Advanced Profile), empty components, and
/// the empty string, are allowed (`^(([^\s\.#]+\.)|\.)*([^\s\.#]+)?$`).
/// The recommended strict rule (lower-case letters, digits, "_") is not enforced,
/// nor the reservation of the "wamp" prefix.
/// - Parameters:
///   - s: the URI, e.g. "com.myapp.topic1".
///   - allowEmptyComponents: whether components may be empty.
/// - Returns: `true` if valid.
public func isValidWampURI(_ s: String, allowEmptyComponents: Bool = false) -> Bool {
    var componentLength = 0
    for scalar in s.unicodeScalars {
        if scalar == "." {
            if componentLength == 0, !allowEmptyComponents { return false }
            componentLength = 0
        } else if scalar == "#" || scalar.properties.isWhitespace || ("\u{1C}"..."\u{1F}").contains(scalar) {
            return false
        } else {
            componentLength += 1
        }
    }
    return allowEmptyComponents || componentLength > 0
}

/// A message that breaks the WAMP protocol (or is not JSON): `reason` says what
/// and where, `message` holds (up to 200 characters of) the offending text.
/// Thrown by ``WampMessage/init(parsing:)`` and ``JSONValue/init(parsing:)``;
/// a session answers it by closing (spec §7.1: "the Peer must fail the session").
public struct WampProtocolError: Error, Equatable, CustomStringConvertible {
    /// What is wrong, naming the offending element and value,
    /// e.g. "SUBSCRIBE.Request (index 1) must be an ID, an integer in 1...9007199254740992, got 0".
    public var reason: String
    /// The first (at most) ``maxMessageLength`` characters of the offending message text.
    public var message: String

    /// How many characters of the offending text ``message`` keeps: 200.
    public static let maxMessageLength = 200

    /// An error for `reason`, keeping the first 200 characters of `message`.
    public init(reason: String, message: String) {
        self.reason = reason
        self.message = String(message.prefix(WampProtocolError.maxMessageLength))
    }

    /// "WAMP protocol violation: <reason> in <message>".
    public var description: String { "WAMP protocol violation: \(reason) in \(message)" }
}
