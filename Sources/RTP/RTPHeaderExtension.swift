// RTPHeaderExtension: RTP header extensions in the one-byte and two-byte forms (RFC 8285 §4).
import Bytes

/// One RFC 8285 header extension element: a local identifier and its data bytes.
public struct RTPExtensionElement: Equatable, Sendable {
    /// Local identifier: 1–14 in the one-byte form, 1–255 in the two-byte form (RFC 8285 §4.2, §4.3).
    public var id: UInt8
    /// The element's data; 1–16 bytes (one-byte form) or 0–255 bytes (two-byte form).
    public var data: [UInt8]

    /// Creates an element with identifier `id` and `data` bytes.
    public init(id: UInt8, data: [UInt8]) {
        self.id = id
        self.data = data
    }
}

/// An RTP header extension (RFC 3550 §5.3.1). The RFC 8285 forms are parsed into
/// elements; any other profile is kept as raw bytes.
public enum RTPHeaderExtension: Equatable, Sendable {
    /// The one-byte form, profile 0xBEDE (RFC 8285 §4.2).
    case oneByte([RTPExtensionElement])
    /// The two-byte form, profile 0x100X; `appBits` is the low 4 bits X (RFC 8285 §4.3).
    case twoByte(appBits: UInt8, [RTPExtensionElement])
    /// Any other profile: the 16-bit profile value and the extension body (a multiple of 4 bytes).
    case raw(profile: UInt16, data: [UInt8])

    /// The elements of an RFC 8285 extension; empty for ``raw(profile:data:)``.
    public var elements: [RTPExtensionElement] {
        switch self {
        case let .oneByte(e), let .twoByte(_, e): return e
        case .raw: return []
        }
    }

    /// The data of the element with local identifier `id`, if present.
    public func element(_ id: UInt8) -> [UInt8]? {
        elements.first { $0.id == id }?.data
    }

    /// Parses an extension body (bytes after the 4-byte profile/length header).
    /// `base` is the body's byte offset in the packet, used in errors.
    /// Throws ``RTPError/extensionElementBeyondBlock(offset:id:wanted:available:)``.
    static func parse(profile: UInt16, body: [UInt8], base: Int) throws(RTPError) -> RTPHeaderExtension {
        if profile == 0xBEDE {
            var out: [RTPExtensionElement] = []
            var r = ByteReader(body)
            while r.remaining > 0 {
                let at = r.offset
                let b = try wrap { () throws(ByteReaderError) in try r.u8("extension element header") }
                let id = b >> 4
                if id == 0 { continue }          // padding byte (RFC 8285 §4.2)
                if id == 15 { break }            // reserved: stop processing
                let len = Int(b & 0x0F) + 1
                guard len <= r.remaining else {
                    throw .extensionElementBeyondBlock(offset: base + at, id: id, wanted: len, available: r.remaining)
                }
                let data = try wrap { () throws(ByteReaderError) in try r.take(len, "extension element") }
                out.append(RTPExtensionElement(id: id, data: data))
            }
            return .oneByte(out)
        }
        if profile & 0xFFF0 == 0x1000 {
            var out: [RTPExtensionElement] = []
            var r = ByteReader(body)
            while r.remaining > 0 {
                let at = r.offset
                let id = try wrap { () throws(ByteReaderError) in try r.u8("extension element id") }
                if id == 0 { continue }          // padding byte (RFC 8285 §4.3)
                guard r.remaining >= 1 else {
                    throw .extensionElementBeyondBlock(offset: base + at, id: id, wanted: 1, available: 0)
                }
                let len = Int(try wrap { () throws(ByteReaderError) in try r.u8("extension element length") })
                guard len <= r.remaining else {
                    throw .extensionElementBeyondBlock(offset: base + at, id: id, wanted: len, available: r.remaining)
                }
                let data = try wrap { () throws(ByteReaderError) in try r.take(len, "extension element") }
                out.append(RTPExtensionElement(id: id, data: data))
            }
            return .twoByte(appBits: UInt8(profile & 0x0F), out)
        }
        return .raw(profile: profile, data: body)
    }

    /// The 16-bit profile value written on the wire.
    var profile: UInt16 {
        switch self {
        case .oneByte: return 0xBEDE
        case let .twoByte(bits, _): return 0x1000 | UInt16(bits & 0x0F)
        case let .raw(p, _): return p
        }
    }

    /// The extension body, zero-padded to a multiple of 4 bytes. One-byte elements
    /// carry at most 16 data bytes and ids 1–14; two-byte at most 255 bytes.
    /// Elements that do not fit their form are left out rather than written corrupt.
    var body: [UInt8] {
        var w = ByteWriter()
        switch self {
        case let .oneByte(elements):
            for e in elements where (1...14).contains(e.id) && (1...16).contains(e.data.count) {
                w.u8(e.id << 4 | UInt8(e.data.count - 1))
                w.append(e.data)
            }
        case let .twoByte(_, elements):
            for e in elements where e.id != 0 && e.data.count <= 255 {
                w.u8(e.id)
                w.u8(UInt8(e.data.count))
                w.append(e.data)
            }
        case let .raw(_, data):
            w.append(data)
        }
        while w.bytes.count % 4 != 0 { w.u8(0) }
        return w.bytes
    }
}

/// Runs a ByteReader operation, turning its error into ``RTPError/truncated(_:)``.
@inline(__always)
func wrap<T>(_ body: () throws(ByteReaderError) -> T) throws(RTPError) -> T {
    do { return try body() } catch { throw .truncated(error) }
}
