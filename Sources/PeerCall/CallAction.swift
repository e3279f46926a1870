// CallAction: what a running call can be told to do (`--at SECONDS:ACTION`, `--control stdin` JSON lines) and the parsing of both.
import Foundation

/// An action on a running call: a hold or a track turned off or on is a re-offer with new
/// directions (RFC 3264 §8.4; `shared/PROTOCOL.md` "Renegotiation"), an ICE restart a
/// re-offer with new credentials (RFC 8445 §9), a hang-up the end of the call.
public enum CallAction: String, Sendable, Equatable, CaseIterable {
    /// Hold the peer: `sendrecv` → `sendonly`, `recvonly` → `inactive` on every m-section.
    case hold
    /// End our hold: the directions before it.
    case unhold
    /// Re-offer with new ICE credentials (W3C `restartIce()`).
    case iceRestart = "ice-restart"
    /// Stop sending video (the video m-section no longer sends), or send it again.
    case videoOff = "video:off", videoOn = "video:on"
    /// Stop sending audio, or send it again.
    case audioOff = "audio:off", audioOn = "audio:on"
    /// End the call (as SIGTERM does, exit code 0).
    case hangup

    /// The names, as written on the command line.
    public static var names: String { allCases.map(\.rawValue).joined(separator: ", ") }
}

/// `--at SECONDS:ACTION`: an action taken that many seconds after the call is
/// `established` (the first time).
public struct ScheduledAction: Sendable, Equatable {
    /// Seconds after `established` (0…86 400).
    public var seconds: Double
    /// What to do then.
    public var action: CallAction

    /// An action at `seconds`.
    public init(seconds: Double, action: CallAction) { self.seconds = seconds; self.action = action }

    /// Parses `SECONDS:ACTION`, e.g. `3:hold`, `4.5:video:off`.
    /// - Throws: ``CallOptionError`` naming `--at` and the value when the seconds are not a
    ///   number in 0…86 400 or the action is not one of ``CallAction``.
    public init(parsing text: String) throws(CallOptionError) {
        let expected = "SECONDS:ACTION with SECONDS in 0…86400 and ACTION one of \(CallAction.names), e.g. 3:hold"
        guard let colon = text.firstIndex(of: ":"), let seconds = Double(text[..<colon]), seconds.isFinite,
              (0...86_400).contains(seconds) else { throw CallOptionError(option: "--at", value: text, expected: expected) }
        guard let action = CallAction(rawValue: String(text[text.index(after: colon)...])) else {
            throw CallOptionError(option: "--at", value: text, expected: expected)
        }
        self.init(seconds: seconds, action: action)
    }
}

/// One `--control stdin` line: a JSON object `{"action": "hold"}` (an optional `"id"`,
/// string or number, is echoed in the result event).
public struct ControlCommand: Sendable, Equatable {
    /// The action asked for.
    public var action: CallAction
    /// The command's `id` as given (its JSON text for a number), for the result.
    public var id: String?

    /// A command for `action`, with an optional `id`.
    public init(action: CallAction, id: String? = nil) { self.action = action; self.id = id }

    /// Parses one line.
    /// - Throws: ``ControlCommandError`` saying what is wrong with it (not JSON, not an
    ///   object, no `action`, an unknown action), quoting at most 80 characters of it.
    public init(parsing line: String) throws(ControlCommandError) {
        let quoted = ControlCommandError.quote(line)
        guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) else {
            throw ControlCommandError(reason: "not JSON: \(quoted)")
        }
        guard let fields = object as? [String: Any] else { throw ControlCommandError(reason: "not a JSON object: \(quoted)") }
        let id: String? = switch fields["id"] {
        case let text as String: text
        case let number as NSNumber: number.stringValue
        default: nil
        }
        guard let name = fields["action"] as? String else {
            throw ControlCommandError(reason: "no \"action\" string in \(quoted); expected {\"action\":\"hold\"}", id: id)
        }
        guard let action = CallAction(rawValue: name) else {
            throw ControlCommandError(reason: "unknown action \(ControlCommandError.quote(name)); expected one of \(CallAction.names)", id: id)
        }
        self.action = action
        self.id = id
    }
}

/// Why a `--control` line is not a command (the line is ignored; the call goes on).
public struct ControlCommandError: Error, Equatable, CustomStringConvertible {
    /// What was wrong, naming the text.
    public var reason: String
    /// The line's `id`, when it was a JSON object with one (so the error can be matched to
    /// the command).
    public var id: String?
    /// The reason, as printed.
    public var description: String { reason }

    /// An error saying `reason`, for the command `id` (when known).
    public init(reason: String, id: String? = nil) { self.reason = reason; self.id = id }

    /// `text` in quotes, control characters escaped (`\u001b`), cut after 80 characters
    /// of the quoted form (an ellipsis says so).
    static func quote(_ text: String) -> String {
        var out = ""
        var rest = text.unicodeScalars[...]
        while let scalar = rest.first, out.unicodeScalars.count < 80 {
            rest = rest.dropFirst()
            out += scalar.value < 0x20 || scalar.value == 0x7F ? String(format: "\\u%04x", scalar.value) : String(scalar)
        }
        return "\"\(out)\"" + (rest.isEmpty ? "" : "…")
    }
}
