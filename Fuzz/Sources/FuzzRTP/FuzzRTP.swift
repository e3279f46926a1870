// libFuzzer entry point for the RTP module's parsers. A crash here IS the finding:
// each check traps with fatalError naming the property that broke.
import Bytes
import RTP

/// libFuzzer's entry point: checks one input (`size` bytes at `data`); always returns 0.
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

    fuzzSkippingParse(bytes)
    fuzzPayloadFormats(bytes)

    // Sequence unwrapping and statistics never trap on any sequence of numbers.
    var unwrapper = SequenceUnwrapper()
    var i = 0
    while i + 1 < bytes.count {
        _ = unwrapper.unwrap(UInt16(bytes[i]) << 8 | UInt16(bytes[i + 1]))
        i += 2
    }
    return 0
}

/// The compound parser that skips bad packets (RFC 3550 §6.1): never traps, agrees with
/// the strict parser where that succeeds, keeps only packets that round-trip alone, and
/// accounts for no more packets than the input has 4-byte words.
func fuzzSkippingParse(_ bytes: [UInt8]) {
    let r = RTCPCompound.parseSkipping(bytes)
    if let strict = try? RTCPCompound.parse(bytes) {
        guard r.packets == strict, r.malformed == 0 else {
            fatalError("RTCP skipping parse disagrees with the strict one for \(bytes)")
        }
    } else if r.malformed == 0 {
        fatalError("RTCP skipping parse found nothing wrong where the strict one failed: \(bytes)")
    }
    guard r.packets.count + r.skipped <= bytes.count / 4 else {
        fatalError("RTCP skipping parse counted more packets than words in \(bytes)")
    }
    for p in r.packets {
        guard let again = try? RTCPCompound.parse(p.serialized()), again == [p] else {
            fatalError("RTCP packet kept by the skipping parse does not round-trip alone: \(p) from \(bytes)")
        }
    }
}

/// The VP8 (RFC 7741) and Opus (RFC 7587) payload formats.
func fuzzPayloadFormats(_ bytes: [UInt8]) {
    // A descriptor that parses lies inside the payload and round-trips as a value.
    if let (d, n) = try? VP8PayloadDescriptor.parse(bytes) {
        guard n >= 1, n < bytes.count, n == d.length || n == d.length + 1 else {
            fatalError("VP8 descriptor length \(n) wrong for \(bytes)")
        }
        guard let (again, m) = try? VP8PayloadDescriptor.parse(d.serialized() + [0]), again == d, m == d.length else {
            fatalError("VP8 descriptor round trip broke for \(bytes)")
        }
    }
    _ = try? VP8FrameHeader(parsing: bytes)
    _ = try? OpusTOC(parsing: bytes)

    // The input as one frame: packetized with a small MTU and reassembled in order, it
    // comes back as exactly that frame.
    if let first = bytes.first, var packetizer = try? VP8Packetizer(
        ssrc: 1, payloadType: 96, sequenceNumber: UInt16(first) << 8 | 0xF0, pictureID: UInt16(first) << 7,
        maximumPayloadSize: 5 + Int(first % 64)),
       let packets = try? packetizer.packetize(bytes, timestamp: 1) {
        var assembler = VP8FrameAssembler()
        var events: [VP8FrameAssembler.Event] = []
        for p in packets { events += assembler.push(p) }
        events += assembler.flush()
        guard events.count == 1, case let .delivered(f) = events[0], f.data == bytes, f.packetCount == packets.count else {
            fatalError("VP8 packetize/assemble round trip broke for \(bytes): \(events.count) events")
        }
    }

    // The input as a stream of packets: records of [flags, seq hi, seq lo, length, payload…].
    var vp8 = VP8FrameAssembler(reorderWindow: 1 + Int(bytes.first ?? 0) % 16,
                                reorderDelay: (bytes.first ?? 0) & 0x80 != 0 ? 9000 : nil,
                                maximumFramePackets: 64)
    var opus = OpusDepayloader(reorderWindow: 1 + Int(bytes.first ?? 0) % 8)
    var emitted = 0, lost = 0, opusPackets = 0
    var i = 1
    func check(_ events: [VP8FrameAssembler.Event]) {
        for e in events {
            switch e {
            case let .delivered(f):
                emitted += 1
                guard !f.data.isEmpty, f.lastSequenceNumber &- f.firstSequenceNumber == UInt16(truncatingIfNeeded: f.packetCount - 1) else {
                    fatalError("VP8 assembler emitted a malformed frame \(f) for \(bytes)")
                }
            case let .missing(l):
                lost += l.frames.count
                guard !l.frames.isEmpty, l.missingSequenceNumbers.count <= l.missingPacketCount else {
                    fatalError("VP8 assembler emitted a malformed loss \(l) for \(bytes)")
                }
            }
        }
    }
    while i + 4 <= bytes.count {
        let flags = bytes[i]
        let seq = UInt16(bytes[i + 1]) << 8 | UInt16(bytes[i + 2])
        let length = min(Int(bytes[i + 3] % 24), bytes.count - i - 4)
        let payload = Array(bytes[i + 4..<i + 4 + length])
        i += 4 + length
        let packet = RTPPacket(marker: flags & 0x01 != 0, payloadType: 96, sequenceNumber: seq,
                               timestamp: UInt32(flags >> 1) * 3000, ssrc: flags & 0x80 != 0 && flags & 0x40 != 0 ? 2 : 1,
                               payload: payload)
        check(vp8.push(packet))
        for case .delivered in opus.push(packet) { opusPackets += 1 }
    }
    check(vp8.flush())
    for case .delivered in opus.flush() { opusPackets += 1 }
    guard vp8.counters.delivered == emitted, vp8.counters.framesLost == lost,
          opus.counters.delivered == opusPackets else {
        fatalError("payload format counters disagree with events for \(bytes)")
    }
}
