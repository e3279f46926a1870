// JSONValue: JSON values (RFC 8259) as WAMP's JSON serialization carries them, parsed with limits and serialized.
import Foundation

/// A JSON value (RFC 8259) as WAMP's JSON serialization carries it
/// (draft-oberstet-hybi-tavendo-wamp §5.2 "Serializations", §5.2.1 "JSON").
///
/// Integers and non-integers are kept apart: a number written without a fraction
/// or exponent that fits in 64 bits is ``int(_:)``; every other number is
/// ``double(_:)``. Booleans are never numbers: `true` is ``bool(_:)``, not `1`.
/// Equality is structural, so `.int(1) != .double(1.0)`.
public enum JSONValue: Hashable, Sendable, CustomStringConvertible,
    ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral, ExpressibleByNilLiteral
{
    /// JSON `null`.
    case null
    /// JSON `true` or `false`.
    case bool(Bool)
    /// A JSON number written without fraction or exponent, in the range of `Int64`.
    case int(Int64)
    /// Any other JSON number (with a fraction or exponent, or an integer outside `Int64`).
    case double(Double)
    /// A JSON string.
    case string(String)
    /// A JSON array.
    case array([JSONValue])
    /// A JSON object; member order is not kept (it is not significant in JSON).
    case object([String: JSONValue])

    // MARK: Literals

    /// `"text"` as ``string(_:)``.
    public init(stringLiteral value: String) { self = .string(value) }
    /// `42` as ``int(_:)``.
    public init(integerLiteral value: Int64) { self = .int(value) }
    /// `1.5` as ``double(_:)``.
    public init(floatLiteral value: Double) { self = .double(value) }
    /// `true` / `false` as ``bool(_:)``.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    /// `[a, b]` as ``array(_:)``.
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    /// `["k": v]` as ``object(_:)``; of repeated keys the last one wins (no trap).
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
    /// `nil` as ``null``.
    public init(nilLiteral: ()) { self = .null }

    // MARK: Accessors

    /// The string, if this is ``string(_:)``.
    public var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    /// The integer, if this is ``int(_:)`` (never for a bool or a double, even `1.0`).
    public var intValue: Int64? {
        if case .int(let i) = self { return i }
        return nil
    }

    /// The number as a `Double`, if this is ``int(_:)`` (converted, rounded to the
    /// nearest double beyond 2^53) or ``double(_:)``; `nil` for a bool.
    public var doubleValue: Double? {
        switch self {
        case .int(let i): return Double(i)
        case .double(let d): return d
        default: return nil
        }
    }

    /// The boolean, if this is ``bool(_:)`` (never for a number).
    public var boolValue: Bool? {
        if case .bool(let b) = self { return b }
        return nil
    }

    /// The elements, if this is ``array(_:)``.
    public var arrayValue: [JSONValue]? {
        if case .array(let a) = self { return a }
        return nil
    }

    /// The members, if this is ``object(_:)``.
    public var objectValue: [String: JSONValue]? {
        if case .object(let o) = self { return o }
        return nil
    }

    /// Whether this is ``null``.
    public var isNull: Bool { self == .null }

    /// The member named `key`, if this is an object that has it; `nil` otherwise
    /// (also for non-objects).
    public subscript(key: String) -> JSONValue? {
        if case .object(let o) = self { return o[key] }
        return nil
    }

    // MARK: Serializing

    /// Compact JSON text (RFC 8259), deterministic: no white space; object keys
    /// sorted by their UTF-8 bytes (= Unicode code point order); integers written
    /// as integers; doubles in Swift's shortest round-trip form (`1.0`, `0.1`,
    /// `1e-05`, `1e+16`), which always reads back as a double; non-finite doubles
    /// (NaN, ±infinity), which JSON cannot express, written as `null`. Strings are
    /// escaped as RFC 8259 §7 requires: `"` `\` and U+0000…U+001F (`\b \f \n \r \t`,
    /// others as `\u00XX`); all other characters, `/` and non-ASCII included, are
    /// written as they are (UTF-8).
    public var serialized: String {
        var out = ""
        write(into: &out)
        return out
    }

    /// The same as ``serialized``.
    public var description: String { serialized }

    /// Appends ``serialized`` to `out`.
    func write(into out: inout String) {
        switch self {
        case .null: out += "null"
        case .bool(let b): out += b ? "true" : "false"
        case .int(let i): out += String(i)
        case .double(let d): out += d.isFinite ? d.description : "null"
        case .string(let s): JSONValue.writeString(s, into: &out)
        case .array(let a):
            out += "["
            for (i, element) in a.enumerated() {
                if i > 0 { out += "," }
                element.write(into: &out)
            }
            out += "]"
        case .object(let o):
            out += "{"
            for (i, key) in o.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }).enumerated() {
                if i > 0 { out += "," }
                JSONValue.writeString(key, into: &out)
                out += ":"
                o[key]?.write(into: &out)
            }
            out += "}"
        }
    }

    /// Appends `s` as a quoted, escaped JSON string (RFC 8259 §7).
    static func writeString(_ s: String, into out: inout String) {
        out += "\""
        // The characters to escape are all ASCII, hence at scalar boundaries: copy
        // the runs between them whole.
        let utf8 = s.utf8
        var runStart = utf8.startIndex
        var i = runStart
        while i != utf8.endIndex {
            let b = utf8[i]
            guard b < 0x20 || b == UInt8(ascii: "\"") || b == UInt8(ascii: "\\") else {
                i = utf8.index(after: i)
                continue
            }
            out += s[runStart..<i]
            switch b {
            case UInt8(ascii: "\""): out += "\\\""
            case UInt8(ascii: "\\"): out += "\\\\"
            case 0x08: out += "\\b"
            case 0x0C: out += "\\f"
            case 0x0A: out += "\\n"
            case 0x0D: out += "\\r"
            case 0x09: out += "\\t"
            default:
                let hex = "0123456789abcdef".utf8
                out += "\\u00"
                out.unicodeScalars.append(Unicode.Scalar(hex[hex.index(hex.startIndex, offsetBy: Int(b >> 4))]))
                out.unicodeScalars.append(Unicode.Scalar(hex[hex.index(hex.startIndex, offsetBy: Int(b & 0xF))]))
            }
            i = utf8.index(after: i)
            runStart = i
        }
        out += s[runStart..<utf8.endIndex]
        out += "\""
    }

    // MARK: Parsing

    /// Parses any JSON text (RFC 8259): an object, an array or a bare scalar,
    /// with surrounding white space.
    ///
    /// Parsing is done by Foundation's `JSONSerialization`, whose results are
    /// mapped carefully (see the notes in the implementation): `true`/`false`
    /// become ``bool(_:)`` (never numbers), integer literals that fit `Int64`
    /// become ``int(_:)``, all other numbers ``double(_:)`` (integers beyond
    /// `Int64` lose precision; one blind spot: a number of 18+ characters written
    /// with a fraction, like `-1000000000000000000.0`, reads as ``int(_:)`` if the
    /// same text also holds that value as an integer literal). Limits are Foundation's: at most 512 nested
    /// arrays/objects; numbers must be finite as doubles (`1e400` is refused);
    /// of repeated object keys the last one wins. A trailing comma (`[1,]`),
    /// which Foundation tolerates but JSON forbids, is refused here.
    /// - Parameter text: the JSON text, e.g. one WebSocket text message.
    /// - Throws: ``WampProtocolError`` with reason "not valid JSON: …" naming
    ///   what Foundation objected to and where (a UTF-8 offset), with `message`
    ///   holding the start of `text`.
    public init(parsing text: String) throws(WampProtocolError) {
        let bytes = Array(text.utf8)
        let scan = JSONTextScan(bytes)
        if let offset = scan.trailingCommaOffset {
            throw WampProtocolError(reason: "not valid JSON: trailing comma at byte offset \(offset)", message: text)
        }
        let object: Any
        do {
            object = try JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed])
        } catch {
            let detail = (error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String ?? "\(error)"
            throw WampProtocolError(reason: "not valid JSON: \(detail)", message: text)
        }
        guard let value = JSONValue(foundation: object, longIntegers: scan.longIntegerLiterals) else {
            throw WampProtocolError(
                reason: "not valid JSON: JSONSerialization returned an unexpected \(type(of: object))", message: text)
        }
        self = value
    }

    /// Maps what `JSONSerialization.jsonObject` returns to a `JSONValue`; `nil`
    /// for a type it never returns.
    ///
    /// What swift-corelibs-foundation (Linux) returns, checked on Swift 6.3:
    /// - `true`/`false`: an `NSNumber` (class `__NSCFBoolean`, `objCType` "c")
    ///   that *also* casts to `Int` 1/0 and `Double`; and the numbers 1 and 0
    ///   cast to `Bool`. So `as? Bool` / `as? Int` cannot tell them apart; the
    ///   boolean class and `objCType` can.
    /// - integer literals: `NSNumber` "i"/"q" (Int64) or "Q" (above `Int64.max`,
    ///   where `int64Value` wraps negative).
    /// - other numbers: `NSNumber` "d" (`1.0` and `1e2` included) — except that
    ///   when the literal has more than 17 characters before any exponent
    ///   (sign and "." counted), it goes through `Decimal` and arrives as an
    ///   `NSDecimalNumber` (objCType "d"), whose `doubleValue` is *not* correctly
    ///   rounded (`0.30000000000000004` → 0.3000000000000001); its `stringValue`
    ///   is exact. Integer literals arrive this way too when negative with 19
    ///   digits (`-1000000000000000000`, `Int64.min`) or beyond `UInt64`, and an
    ///   `NSDecimalNumber` does not say whether its literal had a fraction, so
    ///   `longIntegers` (from ``JSONTextScan``) lists the long integer literals
    ///   of the text.
    ///
    /// The Swift types are tested before the classes: asking whether a Swift `Array`
    /// or `Dictionary` is an `NSNull` or `NSNumber` makes the runtime bridge it to an
    /// `NSArray`/`NSDictionary` first (boxing every element), which was most of the
    /// time of a parse. No value passes two of these tests, so the order does not
    /// change the result.
    init?(foundation object: Any, longIntegers: Set<Int64>) {
        if let array = object as? [Any] {
            var elements: [JSONValue] = []
            elements.reserveCapacity(array.count)
            for element in array {
                guard let value = JSONValue(foundation: element, longIntegers: longIntegers) else { return nil }
                elements.append(value)
            }
            self = .array(elements)
        } else if let dictionary = object as? [String: Any] {
            var members: [String: JSONValue] = [:]
            members.reserveCapacity(dictionary.count)
            for (key, element) in dictionary {
                guard let value = JSONValue(foundation: element, longIntegers: longIntegers) else { return nil }
                members[key] = value
            }
            self = .object(members)
        } else if let s = object as? String {
            self = .string(s)
        } else if object is NSNull {
            self = .null
        } else if let number = object as? NSNumber {
            self = JSONValue.number(number, longIntegers: longIntegers)
        } else {
            return nil
        }
    }

    /// The `JSONValue` for one `NSNumber` from `JSONSerialization` (see
    /// ``init(foundation:longIntegers:)``).
    private static func number(_ number: NSNumber, longIntegers: Set<Int64>) -> JSONValue {
        if let decimal = number as? NSDecimalNumber {
            let text = decimal.stringValue
            if let i = Int64(text), longIntegers.contains(i) { return .int(i) }
            return .double(Double(text) ?? decimal.doubleValue)
        }
        let code = String(cString: number.objCType)
        if code == "c" || code == "B" || type(of: number) == type(of: NSNumber(value: true)) {
            return .bool(number.boolValue)
        }
        switch code {
        case "d", "f":
            return .double(number.doubleValue)
        case "Q", "L", "I", "S", "C":
            let u = number.uint64Value
            return u <= UInt64(Int64.max) ? .int(Int64(u)) : .double(Double(u))
        default:
            return .int(number.int64Value)
        }
    }
}

/// A shallow lexical pass over JSON text for the two things `JSONSerialization`
/// does not tell: a trailing comma before `]`/`}` (which it accepts), and which
/// long numbers were written as integers (see ``JSONValue/init(foundation:longIntegers:)``).
/// It skips strings (with their escapes) and does not validate anything else.
struct JSONTextScan {
    /// The UTF-8 offset of the first comma followed (after white space) by `]` or `}`.
    var trailingCommaOffset: Int?
    /// The values of integer literals (no `.`, `e`, `E`) of 18 or more characters
    /// that fit `Int64`.
    var longIntegerLiterals: Set<Int64> = []

    /// Scans `bytes`, the UTF-8 of a JSON text.
    init(_ bytes: [UInt8]) {
        let quote = UInt8(ascii: "\""), backslash = UInt8(ascii: "\\")
        var i = 0
        let n = bytes.count
        while i < n {
            let b = bytes[i]
            switch b {
            case quote:
                i += 1
                while i < n, bytes[i] != quote {
                    i += bytes[i] == backslash ? 2 : 1
                }
                i += 1
            case UInt8(ascii: ","):
                var j = i + 1
                while j < n, JSONTextScan.isWhitespace(bytes[j]) { j += 1 }
                if trailingCommaOffset == nil, j < n, bytes[j] == UInt8(ascii: "]") || bytes[j] == UInt8(ascii: "}") {
                    trailingCommaOffset = i
                }
                i += 1
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                var j = i
                var isInteger = true
                while j < n {
                    let c = bytes[j]
                    if c == UInt8(ascii: ".") || c == UInt8(ascii: "e") || c == UInt8(ascii: "E") {
                        isInteger = false
                    } else if !(c == UInt8(ascii: "-") || c == UInt8(ascii: "+") || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(c)) {
                        break
                    }
                    j += 1
                }
                if isInteger, j - i >= 18, let v = Int64(String(decoding: bytes[i..<j], as: UTF8.self)) {
                    longIntegerLiterals.insert(v)
                }
                i = j
            default:
                i += 1
            }
        }
    }

    /// JSON's insignificant white space (RFC 8259 §2): space, tab, LF, CR.
    static func isWhitespace(_ b: UInt8) -> Bool {
        b == 0x20 || b == 0x09 || b == 0x0A || b == 0x0D
    }
}
