// OpusTags: the comment header of an Ogg Opus stream (RFC 7845 §5.2), the second packet:
// a vendor string and "NAME=value" user comments.

import Bytes

/// The OpusTags comment header (RFC 7845 §5.2): a vendor string and "NAME=value" comments.
public struct OpusTags: Equatable, Sendable {
    /// The vendor string ("peer" for our files).
    public var vendor: String
    /// User comments, each "NAME=value".
    public var comments: [String]

    /// Tags from their fields.
    public init(vendor: String = "peer", comments: [String] = []) {
        self.vendor = vendor
        self.comments = comments
    }

    /// Parses an OpusTags packet. Throws ``OggOpusError/badOpusTags(_:)`` naming the problem.
    public init(parsing p: [UInt8]) throws(OggOpusError) {
        guard p.count >= 16, Array(p[0..<8]) == Array("OpusTags".utf8) else { throw .badOpusTags("no OpusTags magic") }
        var r = ByteReader(p, offset: 8)
        func string() throws(OggOpusError) -> String {
            let at = r.offset
            let n: Int
            do { n = Int(try r.u32le("string length")) } catch { throw .badOpusTags("length field at byte \(at) beyond the packet") }
            do { return String(decoding: try r.take(n, "string"), as: UTF8.self) } catch {
                throw .badOpusTags("string of \(n) bytes at byte \(at) beyond the packet")
            }
        }
        vendor = try string()
        let count: Int
        do { count = Int(try r.u32le("comment count")) } catch { throw .badOpusTags("no comment count") }
        var list: [String] = []
        for _ in 0..<min(count, p.count) { list.append(try string()) }
        guard list.count == count else { throw .badOpusTags("comment count \(count) beyond the packet") }
        comments = list
    }

    /// The header packet bytes.
    public var bytes: [UInt8] {
        var w = ByteWriter()
        w.append(Array("OpusTags".utf8))
        let v = Array(vendor.utf8)
        w.u32le(UInt32(v.count))
        w.append(v)
        w.u32le(UInt32(comments.count))
        for c in comments {
            let u = Array(c.utf8)
            w.u32le(UInt32(u.count))
            w.append(u)
        }
        return w.bytes
    }
}
