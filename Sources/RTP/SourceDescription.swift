// SourceDescription: the RTCP SDES packet, packet type 202, with CNAME items (RFC 3550 §6.5).
import Bytes

/// An RTCP source description (SDES), packet type 202 (RFC 3550 §6.5).
public struct SourceDescription: Equatable, Sendable {
    /// One SDES item: type (1 CNAME, 2 NAME, … 8 PRIV) and its text bytes (at most 255).
    public struct Item: Equatable, Sendable {
        /// The item type (RFC 3550 §6.5: 1 = CNAME).
        public var type: UInt8
        /// The item text, UTF-8 bytes, not NUL-terminated.
        public var text: [UInt8]
        /// Creates an item.
        public init(type: UInt8, text: [UInt8]) { self.type = type; self.text = text }
    }

    /// A chunk: an SSRC/CSRC and its items.
    public struct Chunk: Equatable, Sendable {
        /// The source described.
        public var source: UInt32
        /// Its items.
        public var items: [Item]
        /// Creates a chunk.
        public init(source: UInt32, items: [Item]) { self.source = source; self.items = items }
        /// The CNAME item (type 1) decoded as UTF-8, if present (RFC 3550 §6.5.1).
        public var cname: String? {
            items.first { $0.type == 1 }.map { String(decoding: $0.text, as: UTF8.self) }
        }
    }

    /// The chunks (at most 31).
    public var chunks: [Chunk]

    /// Creates an SDES packet.
    public init(chunks: [Chunk]) { self.chunks = chunks }

    /// An SDES packet carrying one CNAME for `ssrc`.
    public init(ssrc: UInt32, cname: String) {
        self.chunks = [Chunk(source: ssrc, items: [Item(type: 1, text: Array(cname.utf8))])]
    }

    /// Parses one SDES packet. Each chunk's item list ends with a zero byte and
    /// is padded to a 32-bit boundary. Throws ``RTCPError``: `.wrongPacketType`,
    /// `.lengthBeyondBuffer`, `.truncated` (an item or chunk runs past the length), `.badVersion`, `.badPadding`.
    public init(parsing bytes: [UInt8]) throws(RTCPError) {
        var (h, r) = try RTCPHeader.open(bytes)
        guard h.packetType == 202 else { throw .wrongPacketType(offset: 1, packetType: h.packetType, format: h.count) }
        var chunks: [Chunk] = []
        for _ in 0..<h.count {
            let chunk = try rtcp { () throws(ByteReaderError) in
                let source = try r.u32("SDES chunk SSRC")
                var items: [Item] = []
                while true {
                    let type = try r.u8("SDES item type")
                    if type == 0 { break }
                    let len = Int(try r.u8("SDES item length"))
                    items.append(Item(type: type, text: try r.take(len, "SDES item text")))
                }
                // Skip the remaining null padding up to the next 32-bit boundary.
                let rest = (4 - r.offset % 4) % 4
                try r.skip(rest, "SDES chunk padding")
                return Chunk(source: source, items: items)
            }
            chunks.append(chunk)
        }
        self.init(chunks: chunks)
    }

    /// The packet on the wire (first 31 chunks; items longer than 255 bytes are cut).
    public func serialized() -> [UInt8] {
        var w = ByteWriter()
        for c in chunks.prefix(31) {
            var cw = ByteWriter()
            cw.u32(c.source)
            for i in c.items where i.type != 0 {
                let text = i.text.prefix(255)
                cw.u8(i.type); cw.u8(UInt8(text.count)); cw.append(Array(text))
            }
            cw.u8(0)
            w.append(padded4(cw.bytes))
        }
        return rtcpPacket(count: UInt8(min(chunks.count, 31)), packetType: 202, body: w.bytes)
    }
}
