// libFuzzer target for DCEP (RFC 8832 §5), the SCTP module's parser of what the peer sends on a new data channel: DCEPMessage(parsing:) on the input must throw a DCEPError or give a message that writes back to the same bytes and reads back the same; and the stream rules (StreamVerdict, RFC 8832 §4–§6) judge it as the RFC says for every role, stream parity and holder. A crash here IS the finding: each check traps with fatalError naming the property that broke.
import SCTP

/// The stream rules (StreamVerdict, RFC 8832 §4–§6) on the input as a DCEP message and as
/// user data, on an even and an odd stream, for each DTLS role and holder of the stream: an
/// OPEN is taken only on a free stream of the peer's parity and only when it parses, to the
/// same fields; an ACK only by our channel that waits for one; DCEP is never delivered;
/// user data is delivered exactly when a channel holds the stream; every reason is a
/// bounded sentence.
private func checkStreamRules(_ bytes: [UInt8]) {
    let parsed = try? DCEPMessage(parsing: bytes)
    let label = String(decoding: bytes.prefix(300), as: UTF8.self)
    let holders: [StreamVerdict.Holder] = [.none, .channel(label: label, awaitingAck: false), .channel(label: label, awaitingAck: true)]
    for role in [true, false, nil] as [Bool?] {
        for sid: UInt16 in [0, 1, 1022, 1023] {
            let peersParity = role.map { sid % 2 == ($0 ? 1 : 0) } ?? true
            for holder in holders {
                let verdict = StreamVerdict.judge(ppid: 50, data: bytes, streamId: sid, weAreDTLSClient: role, holder: holder)
                switch verdict {
                case let .open(type, priority, label, proto):
                    guard holder == .none, peersParity, parsed == .open(type: type, priority: priority, label: label, protocol: proto) else {
                        fatalError("OPEN taken on stream \(sid), role \(String(describing: role)), holder \(holder): \(bytes.prefix(16))")
                    }
                case .acknowledged:
                    guard bytes == [0x02], holder == .channel(label: label, awaitingAck: true) else { fatalError("ACK taken: \(bytes.prefix(16)), \(holder)") }
                case .deliver:
                    fatalError("DCEP delivered as user data: \(bytes.prefix(16))")
                case .refuse(let why):
                    guard "\(why)".count < 600 else { fatalError("refusal not bounded: \("\(why)".prefix(700))") }
                    if case .open = parsed, holder == .none, peersParity { fatalError("a valid OPEN on a free stream of the peer's parity refused: \(why)") }
                case .drop(let why):
                    guard "\(why)".count < 600 else { fatalError("drop not bounded") }
                    if let first = bytes.first, first != DCEPMessage.ackType { fatalError("a non-ACK DCEP message \(first) dropped without a reset: \(why)") }
                }
                let user = StreamVerdict.judge(ppid: 53, data: bytes, streamId: sid, weAreDTLSClient: role, holder: holder)
                guard user == (holder == .none ? .refuse(.noChannel(ppid: 53, bytes: bytes.count)) : .deliver) else {
                    fatalError("user data on stream \(sid) with holder \(holder) judged \(user)")
                }
            }
        }
    }
}

/// libFuzzer's entry point: checks one input (`size` bytes at `data`); always returns 0.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    checkStreamRules(bytes)
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
