/// Extends 16-bit RTP sequence numbers to 64 bits across wrap-around
/// (RFC 3550 §A.1: extended sequence number = cycles × 65536 + seq).
///
/// Each new number is placed at the value nearest the previous one (within
/// ±32768), so reordering near the wrap maps to the right cycle: after 65535,
/// 0 unwraps to 65536, and a late 65534 after that still unwraps to 65534.
/// Values before the first packet's cycle come out negative.
public struct SequenceUnwrapper: Sendable {
    private var last: Int64?

    /// A fresh unwrapper; the first sequence number unwraps to itself.
    public init() {}

    /// The extended sequence number of `sequenceNumber` (unit: packets).
    public mutating func unwrap(_ sequenceNumber: UInt16) -> Int64 {
        guard let last else {
            self.last = Int64(sequenceNumber)
            return Int64(sequenceNumber)
        }
        let delta = Int16(bitPattern: sequenceNumber &- UInt16(truncatingIfNeeded: last))
        let value = last + Int64(delta)
        self.last = value
        return value
    }
}

/// Extends 32-bit RTP timestamps (RFC 3550 §5.1) to 64 bits across wrap-around, each
/// value placed nearest the previous one (within ±2^31 ticks), as ``SequenceUnwrapper``
/// does for sequence numbers.
public struct TimestampUnwrapper: Sendable {
    private var last: Int64?

    /// A fresh unwrapper; the first timestamp unwraps to itself.
    public init() {}

    /// The extended value of `timestamp` (clock ticks of the payload format).
    public mutating func unwrap(_ timestamp: UInt32) -> Int64 {
        guard let last else {
            self.last = Int64(timestamp)
            return Int64(timestamp)
        }
        let value = last + Int64(Int32(bitPattern: timestamp &- UInt32(truncatingIfNeeded: last)))
        self.last = value
        return value
    }
}
