// DataChannelSpec, DataBurst, DataSend: the data channel options of a call (`--data-channel`, `--data-burst`, `--at S:send:…`, the `send` control command) and their parsing.
import Foundation
import PeerAgent

/// `--data-channel LABEL[,unordered][,retransmits=N][,lifetime=MS][,protocol=P][,id=N]`:
/// a channel the offerer creates (W3C `createDataChannel`; `id=N` makes it `negotiated`
/// on both sides with that stream id, and then the answerer creates it too).
public struct DataChannelSpec: Sendable, Equatable {
    /// The label (any text without commas, at most 65,535 bytes).
    public var label: String
    /// The W3C options.
    public var options = DataChannelInit()

    /// A reliable ordered channel `label`.
    public init(label: String, options: DataChannelInit = DataChannelInit()) { self.label = label; self.options = options }

    /// Parses the option's value.
    /// - Throws: ``CallOptionError`` naming `--data-channel`, the value and what is expected.
    public init(parsing text: String) throws(CallOptionError) {
        let expected = "LABEL[,unordered][,retransmits=N][,lifetime=MS][,protocol=P][,id=N] with N, MS in 0…65535 "
            + "(one of retransmits and lifetime), id below 1024, e.g. chat or telemetry,unordered,retransmits=0"
        let parts = text.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        guard let label = parts.first, !label.isEmpty, label.utf8.count <= 65_535 else {
            throw CallOptionError(option: "--data-channel", value: text, expected: expected)
        }
        self.label = label
        func number(_ value: Substring, max: Int) throws(CallOptionError) -> UInt16 {
            guard let n = Int(value), (0...max).contains(n) else { throw CallOptionError(option: "--data-channel", value: text, expected: expected) }
            return UInt16(n)
        }
        for part in parts.dropFirst() {
            let pair = part.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            switch (pair[0], pair.count == 2 ? pair[1] : nil) {
            case ("unordered", nil): options.ordered = false
            case ("retransmits", let v?): options.maxRetransmits = try number(v, max: 65_535)
            case ("lifetime", let v?): options.maxPacketLifeTime = try number(v, max: 65_535)
            case ("protocol", let v?): options.protocol = String(v)
            case ("id", let v?):
                options.id = try number(v, max: 1_023)
                options.negotiated = true
            default: throw CallOptionError(option: "--data-channel", value: text, expected: expected)
            }
        }
        guard options.maxRetransmits == nil || options.maxPacketLifeTime == nil else {
            throw CallOptionError(option: "--data-channel", value: text, expected: expected)
        }
    }
}

/// `--data-burst LABEL:COUNT:BYTES`: once the channel `LABEL` is open, send COUNT binary
/// messages of BYTES bytes as fast as the channel takes them (never more than 1 MiB
/// buffered), each numbered (``DataBurst/magic`` and a 64-bit sequence number first) so
/// the receiving `peer` counts them in order, missing, repeated or out of order
/// (the `dataSummary` event) — a test of reliability and throughput.
public struct DataBurst: Sendable, Equatable {
    /// The channel, how many messages and how large (12…262,144 bytes).
    public var label: String, count: Int, bytes: Int
    /// The first four bytes of a numbered message ("PSEQ").
    public static let magic: [UInt8] = Array("PSEQ".utf8)

    /// A burst of `count` messages of `bytes` bytes on `label` (bytes at least 12, the
    /// magic and the number; smaller is taken as 12).
    public init(label: String, count: Int, bytes: Int) { self.label = label; self.count = count; self.bytes = max(12, bytes) }

    /// Parses `LABEL:COUNT:BYTES`.
    /// - Throws: ``CallOptionError`` naming `--data-burst` and the value.
    public init(parsing text: String) throws(CallOptionError) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count >= 3, let count = Int(parts[parts.count - 2]), (1...100_000_000).contains(count),
              let bytes = Int(parts[parts.count - 1]), (12...262_144).contains(bytes) else {
            throw CallOptionError(option: "--data-burst", value: text,
                                  expected: "LABEL:COUNT:BYTES with COUNT in 1…100000000 and BYTES in 12…262144, e.g. chat:10000:1024")
        }
        self.init(label: parts.dropLast(2).joined(separator: ":"), count: count, bytes: bytes)
    }

    /// Message number `n`: the magic, `n` (big-endian), then bytes counting up from `n`.
    func message(_ n: Int) -> [UInt8] {
        var m = [UInt8](repeating: 0, count: bytes)
        for i in 0..<4 { m[i] = Self.magic[i] }
        for i in 0..<8 { m[4 + i] = UInt8(truncatingIfNeeded: UInt64(n) >> (56 - 8 * i)) }
        for i in 12..<bytes { m[i] = UInt8(truncatingIfNeeded: n &+ i) }
        return m
    }

    /// The sequence number of a numbered message, nil for any other.
    static func number(_ bytes: [UInt8]) -> UInt64? {
        guard bytes.count >= 12, bytes[0] == magic[0], bytes[1] == magic[1], bytes[2] == magic[2], bytes[3] == magic[3] else { return nil }
        return bytes[4..<12].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
    }
}

/// A message to send on a data channel, from `--at SECONDS:send:LABEL:TEXT` or the control
/// command `{"action":"send","label":"chat","text":"hi"}` (or `"base64"` for binary); or,
/// with no message, the channel closed (`--at SECONDS:close:LABEL`, `{"action":"close","label":"chat"}`).
public struct DataSend: Sendable, Equatable {
    /// The channel's label and the message (nil: close the channel, W3C `close()`).
    public var label: String, message: DataChannelMessage?

    /// A message for `label` (nil closes it).
    public init(label: String, message: DataChannelMessage?) { self.label = label; self.message = message }

    /// Parses `send:LABEL:TEXT` or `close:LABEL` (the part of `--at` after the seconds);
    /// nil when it starts with neither.
    /// - Throws: ``CallOptionError`` for `send:` without a label.
    public init?(atAction text: Substring, whole: String) throws(CallOptionError) {
        if text.hasPrefix("close:") {
            guard text.count > 6 else { throw CallOptionError(option: "--at", value: whole, expected: "SECONDS:close:LABEL, e.g. 8:close:chat") }
            self.init(label: String(text.dropFirst(6)), message: nil)
            return
        }
        guard text.hasPrefix("send:") else { return nil }
        let rest = text.dropFirst(5)
        guard let colon = rest.firstIndex(of: ":"), colon > rest.startIndex else {
            throw CallOptionError(option: "--at", value: whole, expected: "SECONDS:send:LABEL:TEXT, e.g. 4:send:chat:hello")
        }
        self.init(label: String(rest[..<colon]), message: .text(String(rest[rest.index(after: colon)...])))
    }

    /// Parses a `--control` line that is a `send` or `close` command, with the line's `id`
    /// (read once here, for the result event); nil for any other line (which
    /// ``ControlCommand`` then reads).
    /// - Throws: ``ControlCommandError`` as ``fromControl(_:id:)``.
    public static func control(_ line: String) throws(ControlCommandError) -> (send: DataSend, id: String?)? {
        guard let fields = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any] else { return nil }
        let id: String? = switch fields["id"] {
        case let text as String: text
        case let number as NSNumber: number.stringValue
        default: nil
        }
        return try fromControl(fields, id: id).map { ($0, id) }
    }

    /// Reads a control command object's `label` and `text` (or `base64`); nil when its
    /// action is not `send`.
    /// - Throws: ``ControlCommandError`` when `label` or the message is missing or the
    ///   base64 does not decode.
    static func fromControl(_ fields: [String: Any], id: String?) throws(ControlCommandError) -> DataSend? {
        guard let action = fields["action"] as? String, action == "send" || action == "close" else { return nil }
        if action == "close" {
            guard let label = fields["label"] as? String, !label.isEmpty else {
                throw ControlCommandError(reason: "close: no \"label\" string; expected {\"action\":\"close\",\"label\":\"chat\"}", id: id)
            }
            return DataSend(label: label, message: nil)
        }
        guard let label = fields["label"] as? String, !label.isEmpty else {
            throw ControlCommandError(reason: "send: no \"label\" string; expected {\"action\":\"send\",\"label\":\"chat\",\"text\":\"hi\"}", id: id)
        }
        if let text = fields["text"] as? String { return DataSend(label: label, message: .text(text)) }
        if let encoded = fields["base64"] as? String {
            guard let data = Data(base64Encoded: encoded) else {
                throw ControlCommandError(reason: "send: \"base64\" is not base64: \(ControlCommandError.quote(encoded))", id: id)
            }
            return DataSend(label: label, message: .binary(Array(data)))
        }
        throw ControlCommandError(reason: "send: no \"text\" or \"base64\" string for \(ControlCommandError.quote(label))", id: id)
    }
}

/// `--at SECONDS:send:LABEL:TEXT`: a message sent that many seconds after `established`.
public struct ScheduledSend: Sendable, Equatable {
    /// Seconds after `established` (0…86 400).
    public var seconds: Double
    /// What to send.
    public var send: DataSend

    /// A message at `seconds`.
    public init(seconds: Double, send: DataSend) { self.seconds = seconds; self.send = send }

    /// Parses `SECONDS:send:LABEL:TEXT`; nil when the action is not `send:` (an
    /// ordinary ``ScheduledAction``).
    /// - Throws: ``CallOptionError`` naming `--at` for bad seconds or no label.
    public init?(parsing text: String) throws(CallOptionError) {
        guard let colon = text.firstIndex(of: ":") else { return nil }
        guard let send = try DataSend(atAction: text[text.index(after: colon)...], whole: text) else { return nil }
        guard let seconds = Double(text[..<colon]), seconds.isFinite, (0...86_400).contains(seconds) else {
            throw CallOptionError(option: "--at", value: text, expected: "SECONDS:send:LABEL:TEXT with SECONDS in 0…86400, e.g. 4:send:chat:hello")
        }
        self.init(seconds: seconds, send: send)
    }
}
