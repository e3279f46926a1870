// RetransmissionStore: what a NACK responder asks of a sender's memory of sent packets — the packet sent with a sequence number, as first sent (RFC 4585 §6.2.1, RFC 4588 §1).

/// A sender's memory of the RTP packets it sent, as a Generic NACK responder (RFC 4585
/// §6.2.1) uses it: the packet with a given sequence number, written as it was first sent
/// (plain retransmission in the original stream, RFC 4588 §1, when no RTX payload type was
/// negotiated), or nothing when it is no longer held or too old to be worth sending.
///
/// The seam between the media hub's per-connection history (``SharedPayloadHistory``,
/// holding the shared payloads, sized by time) and the packet pipeline's NACK responder
/// stage, which answers NACKs per connection without knowing how the packets are kept.
/// ``RetransmissionHistory`` (a ring of whole packets) conforms too.
public protocol RetransmissionStore {
    /// Writes the RTP packet (header and payload, before SRTP) first sent with
    /// `sequenceNumber` into `buffer` (its contents replaced) and returns true, when it is
    /// held and was sent no longer before `nowMs` (milliseconds on the clock its packets
    /// were recorded with) than the store's age limit; false (buffer untouched or emptied)
    /// otherwise. `trailer` bytes of capacity are reserved behind the packet for SRTP.
    func writePacket(sequenceNumber: UInt16, nowMs: Int64, into buffer: inout [UInt8], reserving trailer: Int) -> Bool
}

extension RetransmissionHistory: RetransmissionStore {
    /// The packet ``packets(for:nowMs:)`` gives for `sequenceNumber`, serialized into `buffer`.
    public func writePacket(sequenceNumber: UInt16, nowMs: Int64, into buffer: inout [UInt8], reserving trailer: Int) -> Bool {
        guard let packet = packets(for: [sequenceNumber], nowMs: nowMs).first else { return false }
        buffer.removeAll(keepingCapacity: true)
        let bytes = packet.serialized()
        buffer.reserveCapacity(bytes.count + max(0, trailer))
        buffer.append(contentsOf: bytes)
        return true
    }
}
