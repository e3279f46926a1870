// libFuzzer target for WampClient's JSON layer (JSONValue(parsing:)) and WAMP message
// decoder (WampMessage(parsing:)). A crash here IS the finding: each check traps with
// fatalError naming the property that broke.
import WampClient

/// The input as text, for the failure messages.
private func show(_ text: String) -> String { text.debugDescription }

/// libFuzzer's entry point: checks one input (`size` bytes at `data`); always returns 0.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)

    // JSON: a value that parses serializes to text that parses to the same value, and that
    // text is a fixed point (serializing is deterministic).
    let json = try? JSONValue(parsing: text)
    if let json {
        checkRoundTrip("JSONValue", json, text, serialized: \.serialized) { try? JSONValue(parsing: $0) }
    }

    // WAMP: only JSON parses; a message serializes to text that parses to the same message.
    let message: WampMessage
    do {
        message = try WampMessage(parsing: text)
    } catch {
        guard error.message.count <= WampProtocolError.maxMessageLength else {
            fatalError("WampProtocolError.message longer than \(WampProtocolError.maxMessageLength) characters for input \(show(text))")
        }
        return 0
    }
    guard case .array(let items)? = json else {
        fatalError("WampMessage parsed from text that is not a JSON array: \(show(text))")
    }
    guard items.first == .int(Int64(message.type.rawValue)), message.type.elementCount.contains(items.count) else {
        fatalError("WampMessage \(message.type.name) does not match its array (\(items.count) elements) in \(show(text))")
    }
    checkURIs(message, text)
    checkRoundTrip("WampMessage", message, text, serialized: \.serialized) { try? WampMessage(parsing: $0) }
    return 0
}

/// A parsed `value` serializes to text that parses to the same value, and that text is a
/// fixed point (serializing is deterministic); traps naming `name` and the input otherwise.
func checkRoundTrip<T: Equatable>(_ name: String, _ value: T, _ input: String, serialized: (T) -> String,
                                  parse: (String) -> T?) {
    let again = serialized(value)
    guard let reparsed = parse(again) else {
        fatalError("\(name).serialized does not parse: \(show(again)) from input \(show(input))")
    }
    guard reparsed == value else {
        fatalError("\(name) round trip changed the value: \(show(again)) -> \(show(serialized(reparsed))) from input \(show(input))")
    }
    guard serialized(reparsed) == again else {
        fatalError("\(name).serialized is not a fixed point: \(show(again)) -> \(show(serialized(reparsed)))")
    }
}

/// The URIs of a parsed message pass ``isValidWampURI(_:allowEmptyComponents:)``
/// (SUBSCRIBE/REGISTER with `match: "wildcard"` may have empty components).
private func checkURIs(_ message: WampMessage, _ text: String) {
    var uris: [String] = []
    var wildcard = false
    switch message {
    case .hello(let realm, _): uris = [realm]
    case .abort(_, let reason), .goodbye(_, let reason): uris = [reason]
    case .error(let requestType, _, _, let error, _, _):
        guard requestType.canFail else { fatalError("ERROR for \(requestType.name), which cannot fail: \(show(text))") }
        uris = [error]
    case .publish(_, _, let topic, _, _): uris = [topic]
    case .call(_, _, let procedure, _, _): uris = [procedure]
    case .subscribe(_, let options, let uri), .register(_, let options, let uri):
        uris = [uri]
        wildcard = options["match"] == .string("wildcard")
    default: break
    }
    for uri in uris where !isValidWampURI(uri, allowEmptyComponents: wildcard) {
        fatalError("WampMessage \(message.type.name) parsed with an invalid URI \(show(uri)) from \(show(text))")
    }
}
