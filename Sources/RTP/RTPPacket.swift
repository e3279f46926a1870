// RTPPacket: an RTP packet parsed and serialized — CSRCs, header extension, padding (RFC 3550 §5.1, §5.3.1; RFC 8285).
import Bytes

/// An RTP packet (RFC 3550 §5.1) with CSRCs, an optional header extension
/// (RFC 3550 §5.3.1, RFC 8285) and padding.
///
/// ```
///  0                   1                   2                   3
/// |V=2|P|X|  CC   |M|     PT      |       sequence number         |
/// |                           timestamp                           |
/// |           synchronization source (SSRC) identifier            |
/// |            contributing source (CSRC) identifiers  ...        |
/// ```
public struct RTPPacket: Equatable, Sendable {
    /// The RTP version; always 2 (parsing rejects anything else).
    public var version: UInt8 { 2 }
    /// The M bit; its meaning is set by the profile (for video: last packet of a frame).
    public var marker: Bool
    /// The 7-bit payload type (0–127).
    public var payloadType: UInt8
    /// The 16-bit sequence number; increments by one per packet and wraps.
    public var sequenceNumber: UInt16
    /// The media timestamp in clock ticks of the payload format (90 kHz video, 48 kHz Opus).
    public var timestamp: UInt32
    /// The synchronization source identifier.
    public var ssrc: UInt32
    /// Contributing sources; at most 15 (only the first 15 are serialized).
    public var csrcs: [UInt32]
    /// The header extension, if the X bit is set.
    public var headerExtension: RTPHeaderExtension?
    /// The payload bytes (without padding).
    public var payload: [UInt8]
    /// Padding length in bytes (0 = no padding, P bit clear; otherwise 1–255, including the count byte).
    public var paddingLength: UInt8

    /// The P bit: true when ``paddingLength`` is non-zero.
    public var padding: Bool { paddingLength > 0 }
    /// The X bit: true when a ``headerExtension`` is present.
    public var `extension`: Bool { headerExtension != nil }

    /// Creates a packet from its fields.
    public init(marker: Bool = false, payloadType: UInt8, sequenceNumber: UInt16, timestamp: UInt32,
                ssrc: UInt32, csrcs: [UInt32] = [], headerExtension: RTPHeaderExtension? = nil,
                payload: [UInt8] = [], paddingLength: UInt8 = 0) {
        self.marker = marker
        self.payloadType = payloadType & 0x7F
        self.sequenceNumber = sequenceNumber
        self.timestamp = timestamp
        self.ssrc = ssrc
        self.csrcs = csrcs
        self.headerExtension = headerExtension
        self.payload = payload
        self.paddingLength = paddingLength
    }

    /// Parses an RTP packet from `bytes` (a whole datagram after SRTP unprotect).
    ///
    /// Throws ``RTPError``: `.truncated` (header shorter than 12 bytes),
    /// `.badVersion`, `.csrcCountBeyondLength`, `.extensionLengthBeyondPacket`,
    /// `.extensionElementBeyondBlock`, `.zeroPaddingCount`, `.paddingLongerThanPayload`.
    public init(parsing bytes: [UInt8]) throws(RTPError) {
        var r = ByteReader(bytes)
        let b0 = try wrap { () throws(ByteReaderError) in try r.u8("RTP header byte 0") }
        guard b0 >> 6 == 2 else { throw .badVersion(offset: 0, version: b0 >> 6) }
        let hasPadding = b0 & 0x20 != 0
        let hasExtension = b0 & 0x10 != 0
        let cc = Int(b0 & 0x0F)
        let b1 = try wrap { () throws(ByteReaderError) in try r.u8("RTP header byte 1") }
        let seq = try wrap { () throws(ByteReaderError) in try r.u16("sequence number") }
        let ts = try wrap { () throws(ByteReaderError) in try r.u32("timestamp") }
        let ssrc = try wrap { () throws(ByteReaderError) in try r.u32("SSRC") }

        guard cc * 4 <= r.remaining else {
            throw .csrcCountBeyondLength(offset: r.offset, count: cc, available: r.remaining)
        }
        var csrcs: [UInt32] = []
        for _ in 0..<cc { csrcs.append(try wrap { () throws(ByteReaderError) in try r.u32("CSRC") }) }

        var ext: RTPHeaderExtension?
        if hasExtension {
            let extAt = r.offset
            let profile = try wrap { () throws(ByteReaderError) in try r.u16("extension profile") }
            let words = Int(try wrap { () throws(ByteReaderError) in try r.u16("extension length") })
            guard words * 4 <= r.remaining else {
                throw .extensionLengthBeyondPacket(offset: extAt, wanted: words * 4, available: r.remaining)
            }
            let bodyAt = r.offset
            let body = try wrap { () throws(ByteReaderError) in try r.take(words * 4, "extension body") }
            ext = try RTPHeaderExtension.parse(profile: profile, body: body, base: bodyAt)
        }

        var pad = 0
        if hasPadding {
            let last = bytes.count - 1
            guard last >= r.offset, let count = bytes.last else {
                throw .paddingLongerThanPayload(offset: r.offset, padding: 1, available: 0)
            }
            guard count > 0 else { throw .zeroPaddingCount(offset: last) }
            guard Int(count) <= r.remaining else {
                throw .paddingLongerThanPayload(offset: last, padding: Int(count), available: r.remaining)
            }
            pad = Int(count)
        }
        let payload = try wrap { () throws(ByteReaderError) in try r.take(r.remaining - pad, "payload") }

        self.init(marker: b1 & 0x80 != 0, payloadType: b1 & 0x7F, sequenceNumber: seq, timestamp: ts,
                  ssrc: ssrc, csrcs: csrcs, headerExtension: ext, payload: payload, paddingLength: UInt8(pad))
    }

    /// The packet on the wire: header, CSRCs, extension, payload, then padding
    /// (`paddingLength - 1` zero bytes and the count byte).
    public func serialized() -> [UInt8] {
        let cs = csrcs.prefix(15)
        var w = ByteWriter(capacity: 12 + cs.count * 4 + payload.count + Int(paddingLength) + 64)
        w.u8(2 << 6 | (padding ? 0x20 : 0) | (self.extension ? 0x10 : 0) | UInt8(cs.count))
        w.u8((marker ? 0x80 : 0) | (payloadType & 0x7F))
        w.u16(sequenceNumber)
        w.u32(timestamp)
        w.u32(ssrc)
        for c in cs { w.u32(c) }
        if let ext = headerExtension {
            let body = ext.body
            w.u16(ext.profile)
            w.u16(UInt16(clamping: body.count / 4))
            w.append(body)
        }
        w.append(payload)
        if paddingLength > 0 {
            w.append([UInt8](repeating: 0, count: Int(paddingLength) - 1))
            w.u8(paddingLength)
        }
        return w.bytes
    }
}
