/// The sender's memory of recently sent RTP packets, so a Generic NACK
/// (RFC 4585 §6.2.1) can be answered by sending the same packet again
/// (RFC 4588 §1: plain retransmission in the original stream when no RTX
/// payload type was negotiated).
///
/// Holds at most ``capacity`` packets, indexed by 16-bit sequence number; a
/// newer packet overwrites the slot of the one sent `capacity` packets earlier.
/// Packets older than ``maximumAgeMs`` are not resent (the receiver has given
/// up on that frame by then).
public struct RetransmissionHistory: Sendable {
    /// How many packets are kept (slots in the ring).
    public let capacity: Int
    /// Packets older than this (ms since they were first sent) are not resent.
    public let maximumAgeMs: Int64
    private var slots: [(packet: RTPPacket, sentAtMs: Int64)?]

    /// A history of `capacity` packets (default 1024: ~1 s of 1 Mbit/s video at
    /// 1200-byte packets) that resends packets up to `maximumAgeMs` old (default 1000 ms).
    public init(capacity: Int = 1024, maximumAgeMs: Int64 = 1_000) {
        self.capacity = max(1, capacity)
        self.maximumAgeMs = maximumAgeMs
        slots = Array(repeating: nil, count: max(1, capacity))
    }

    /// Remembers `packet`, sent at `nowMs` (any monotonic millisecond clock).
    public mutating func record(_ packet: RTPPacket, nowMs: Int64) {
        slots[Int(packet.sequenceNumber) % capacity] = (packet, nowMs)
    }

    /// The packets to resend for the NACKed `sequenceNumbers` at `nowMs`: those still
    /// held and younger than ``maximumAgeMs``, in the order asked; unknown or
    /// overwritten numbers are skipped (the caller counts them as not answered).
    public func packets(for sequenceNumbers: [UInt16], nowMs: Int64) -> [RTPPacket] {
        sequenceNumbers.compactMap { seq in
            guard let slot = slots[Int(seq) % capacity], slot.packet.sequenceNumber == seq,
                  nowMs - slot.sentAtMs <= maximumAgeMs else { return nil }
            return slot.packet
        }
    }
}
