// libFuzzer target for the DTLS module's RFC 7983 demultiplexer (Demultiplexer.classify):
// every classification must agree with the first-byte ranges of RFC 7983 §7 (and RTP/RTCP
// by the second byte, RFC 5761 §4), whatever the collection type and its indices. A crash
// here IS the finding: each check traps with fatalError naming the property that broke.
import DTLS

/// RFC 7983 §7's table of first-byte ranges, as written there; every other value is dropped.
private let rfc7983: [(ClosedRange<UInt8>, String)] = [
    (0...3, "STUN"), (16...19, "ZRTP"), (20...63, "DTLS"), (64...79, "TURN Channel"), (128...191, "RTP/RTCP"),
]

/// The expected kind of a datagram, from the RFC's table.
private func expected(_ datagram: ArraySlice<UInt8>) -> DatagramKind {
    guard let first = datagram.first, let (_, name) = rfc7983.first(where: { $0.0.contains(first) }) else {
        return .unknown
    }
    switch name {
    case "STUN": return .stun
    case "DTLS": return .dtls
    case "TURN Channel": return .turnChannel
    case "RTP/RTCP":
        // RFC 5761 §4: RTCP packet types 192–223 in the second byte.
        guard datagram.count >= 2 else { return .unknown }
        let second = datagram[datagram.startIndex + 1]
        return second >= 192 && second <= 223 ? .rtcp : .rtp
    default: return .unknown  // ZRTP is not handled by this agent
    }
}

/// libFuzzer's entry point: checks one input (`size` bytes at `data`); always returns 0.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let whole = Demultiplexer.classify(bytes)
    guard whole == expected(bytes[...]) else {
        fatalError("classify gave \(whole), RFC 7983 §7 says \(expected(bytes[...])) for \(bytes.prefix(2))")
    }
    guard Demultiplexer.classify(UnsafeBufferPointer(start: data, count: size)) == whole else {
        fatalError("classify of an UnsafeBufferPointer differs from the array's for \(bytes.prefix(2))")
    }
    // Only the first two bytes count.
    guard Demultiplexer.classify(bytes.prefix(2)) == whole else {
        fatalError("classify depends on more than the first two bytes of \(bytes.prefix(8))")
    }
    // Every suffix, as a slice with a non-zero start index: the datagrams of a receive buffer.
    var i = 1
    while i < min(size, 64) {
        let slice = bytes[i...]
        let kind = Demultiplexer.classify(slice)
        guard kind == expected(slice) else {
            fatalError("classify of a slice at \(i) gave \(kind), RFC 7983 §7 says \(expected(slice)) for \(slice.prefix(2))")
        }
        i += 1
    }
    return 0
}
