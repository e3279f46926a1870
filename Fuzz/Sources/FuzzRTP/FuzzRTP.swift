// libFuzzer entry point for the RTP module's parsers. A crash here IS the finding:
// each check traps with fatalError naming the property that broke.
import RTP

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))

    // RTP: whatever parses writes back to bytes that parse to the same packet.
    if let packet = try? RTPPacket(parsing: bytes) {
        let again = packet.serialized()
        guard let reparsed = try? RTPPacket(parsing: again), reparsed == packet else {
            fatalError("RTPPacket round trip broke for input \(bytes) -> \(again)")
        }
    }

    // RTCP: a parsed compound packet serializes to bytes that parse to the same packets.
    if let packets = try? RTCPCompound.parse(bytes) {
        let again = RTCPCompound.serialize(packets)
        guard let reparsed = try? RTCPCompound.parse(again), reparsed == packets else {
            fatalError("RTCP compound round trip broke for input \(bytes) -> \(again)")
        }
    }

    // Sequence unwrapping and statistics never trap on any sequence of numbers.
    var unwrapper = SequenceUnwrapper()
    var i = 0
    while i + 1 < bytes.count {
        _ = unwrapper.unwrap(UInt16(bytes[i]) << 8 | UInt16(bytes[i + 1]))
        i += 2
    }
    return 0
}
