// Signaling: the wire forms of shared/PROTOCOL.md — session descriptions and candidates as WAMP arguments (object or JSON string).
import PeerAgent
import Foundation
import WampClient

/// The wire forms of the signaling family in `shared/PROTOCOL.md`: session
/// descriptions and candidates as WAMP arguments, and the topic names of the
/// `legacy` and `room` profiles.
public enum Signaling {
    /// The default topic prefix.
    public static let defaultPrefix = "com.nakadoribook.webrtc"

    /// Why a signaling payload was dropped; names what was wrong.
    public struct PayloadError: Error, Equatable, CustomStringConvertible {
        /// What was wrong, with the offending value.
        public var reason: String
        /// The one-line message.
        public var description: String { reason }
    }

    /// A session description from a WAMP argument: a JSON object `{"type", "sdp"}` or a
    /// JSON string holding that object (both are in use, PROTOCOL.md). Unknown keys are ignored.
    /// - Throws: ``PayloadError`` naming what is missing or not JSON.
    public static func description(from value: JSONValue) throws(PayloadError) -> SessionDescriptionInit {
        let object = try object(from: value, what: "session description")
        guard case let .string(type)? = object["type"] else {
            throw PayloadError(reason: "session description without a \"type\" string: \(clip(value))")
        }
        guard let sdpType = SdpType(rawValue: type) else {
            throw PayloadError(reason: "session description type \"\(type)\", expected \"offer\" or \"answer\"")
        }
        guard case let .string(sdp)? = object["sdp"], !sdp.isEmpty else {
            throw PayloadError(reason: "session description without an \"sdp\" string: \(clip(value))")
        }
        return SessionDescriptionInit(type: sdpType, sdp: sdp)
    }

    /// A candidate from a WAMP argument: a JSON string holding
    /// `{"candidate", "sdpMid", "sdpMLineIndex", "usernameFragment"?}` (or that object itself).
    /// An empty `candidate` is end-of-candidates.
    /// - Throws: ``PayloadError`` naming what is missing or not JSON.
    public static func candidate(from value: JSONValue) throws(PayloadError) -> IceCandidateInit {
        let object = try object(from: value, what: "candidate")
        let text: String
        switch object["candidate"] {
        case let .string(s)?: text = s
        case nil: throw PayloadError(reason: "candidate without a \"candidate\" key (end-of-candidates is an empty string): \(clip(value))")
        default: throw PayloadError(reason: "candidate whose \"candidate\" is not a string: \(clip(value))")
        }
        var mid: String?
        if case let .string(m)? = object["sdpMid"] { mid = m }
        var index: Int?
        if case let .int(i)? = object["sdpMLineIndex"] { index = Int(exactly: i) }
        var ufrag: String?
        if case let .string(u)? = object["usernameFragment"] { ufrag = u }
        return IceCandidateInit(candidate: text, sdpMid: mid, sdpMLineIndex: index, usernameFragment: ufrag)
    }

    /// A description as a WAMP argument: an object, or (`asString`) a JSON string of it.
    public static func value(_ d: SessionDescriptionInit, asString: Bool) -> JSONValue {
        let object = JSONValue.object(["type": .string(d.type.rawValue), "sdp": .string(d.sdp)])
        return asString ? .string(object.serialized) : object
    }

    /// A candidate as a WAMP argument: always a JSON string (PROTOCOL.md).
    public static func value(_ c: IceCandidateInit) -> JSONValue {
        var o: [String: JSONValue] = ["candidate": .string(c.candidate), "sdpMid": c.sdpMid.map(JSONValue.string) ?? .null,
                                     "sdpMLineIndex": c.sdpMLineIndex.map { .int(Int64($0)) } ?? .null]
        if let u = c.usernameFragment { o["usernameFragment"] = .string(u) }
        return .string(JSONValue.object(o).serialized)
    }

    private static func object(from value: JSONValue, what: String) throws(PayloadError) -> [String: JSONValue] {
        switch value {
        case let .object(o): return o
        case let .string(text):
            let parsed: JSONValue
            do { parsed = try JSONValue(parsing: text) } catch {
                throw PayloadError(reason: "\(what) is a string but not JSON (\(error.reason)): \(clip(value))")
            }
            guard case let .object(o) = parsed else {
                throw PayloadError(reason: "\(what) string holds \(kind(parsed)), expected a JSON object: \(clip(value))")
            }
            return o
        default:
            throw PayloadError(reason: "\(what) is \(kind(value)), expected a JSON object or a JSON string: \(clip(value))")
        }
    }

    private static func kind(_ v: JSONValue) -> String {
        switch v {
        case .null: return "null"
        case .bool: return "a boolean"
        case .int, .double: return "a number"
        case .string: return "a string"
        case .array: return "an array"
        case .object: return "an object"
        }
    }

    /// The value as JSON, cut to 120 characters for messages.
    static func clip(_ v: JSONValue) -> String {
        let text = v.serialized
        return text.count > 120 ? String(text.prefix(117)) + "..." : text
    }
}
