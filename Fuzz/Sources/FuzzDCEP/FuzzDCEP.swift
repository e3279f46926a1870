// libFuzzer target for DCEP (RFC 8832 §5), the SCTP module's parser of what the peer sends on a new data channel: DCEPMessage(parsing:) on the input must throw a DCEPError or give a message that writes back to the same bytes and reads back the same. A crash here IS the finding: each check traps with fatalError naming the property that broke.
import SCTP

/// libFuzzer's entry point: checks one input (`size` bytes at `data`); always returns 0.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let message: DCEPMessage
    do { message = try DCEPMessage(parsing: bytes) } catch {
        // The refusal names a field or offset inside the input.
        let text = "\(error)"
        guard text.hasPrefix("DCEP: "), text.count < 300 else { fatalError("DCEP refusal not bounded or unnamed: \(text.prefix(400))") }
        return 0
    }
    let written = message.serialized
    // The reliability parameter of a reliable channel is not kept (RFC 8832 §5.1: ignored).
    if case let .open(type, _, _, _) = message, type.reliability == .reliable {
        guard written.count == bytes.count, written[0...1] == bytes[0...1], written[2...3] == bytes[2...3], written[8...] == bytes[8...] else {
            fatalError("DATA_CHANNEL_OPEN (reliable) wrote back \(written.prefix(16)) for \(bytes.prefix(16))")
        }
    } else {
        guard written == bytes else { fatalError("\(message) wrote back \(written.prefix(16)), read from \(bytes.prefix(16))") }
    }
    guard let again = try? DCEPMessage(parsing: written), again == message else {
        fatalError("\(message) did not read back from its own bytes \(written.prefix(16))")
    }
    return 0
}
