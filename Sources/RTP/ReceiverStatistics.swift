/// Reception statistics for one RTP source, per RFC 3550 Appendix A.1 (sequence
/// validity and extended sequence numbers), A.3 (expected, lost, fraction lost)
/// and A.8 (interarrival jitter). Not thread-safe; use from one thread.
public struct ReceiverStatistics: Sendable {
    /// A.1 MAX_DROPOUT: a forward jump larger than this (packets) is suspect.
    static let maxDropout: UInt32 = 3000
    /// A.1 MAX_MISORDER: a backward jump larger than this (packets) is suspect.
    static let maxMisorder: UInt32 = 100
    static let seqMod: UInt32 = 1 << 16

    private var maxSeq: UInt16 = 0
    private var cycles: UInt32 = 0
    private var baseSeq: UInt32 = 0
    private var badSeq: UInt32 = seqMod + 1
    private var started = false
    /// Packets received, duplicates and late packets included (A.3 `received`).
    public private(set) var received: UInt32 = 0
    private var expectedPrior: UInt32 = 0
    private var receivedPrior: UInt32 = 0
    private var transit: Int32 = 0
    private var haveTransit = false
    /// Jitter scaled by 16, as in A.8's integer version.
    private var jitterQ4: UInt32 = 0

    /// An empty statistics record.
    public init() {}

    /// Records one received packet: its `sequenceNumber`, RTP `timestamp` (media
    /// clock ticks) and `arrival` time in the same clock's ticks (e.g. 90 kHz).
    public mutating func record(sequenceNumber seq: UInt16, timestamp: UInt32, arrival: UInt32) {
        if !started {
            started = true
            initSequence(seq)
            received = 1
        } else if !updateSequence(seq) {
            return
        }
        // A.8: D(i-1,i) = (R_i - R_j) - (S_i - S_j); J += (|D| - J)/16.
        let t = Int32(bitPattern: arrival &- timestamp)
        if haveTransit {
            let d = t &- transit
            let absD = UInt32(d.magnitude)
            jitterQ4 = jitterQ4 &+ absD &- ((jitterQ4 &+ 8) >> 4)
        }
        transit = t
        haveTransit = true
    }

    private mutating func initSequence(_ seq: UInt16) {
        baseSeq = UInt32(seq)
        maxSeq = seq
        badSeq = Self.seqMod + 1
        cycles = 0
        received = 0
        receivedPrior = 0
        expectedPrior = 0
    }

    /// A.1 `update_seq` without probation; returns false for a packet that was
    /// dropped as part of a resynchronisation decision.
    private mutating func updateSequence(_ seq: UInt16) -> Bool {
        let udelta = UInt32(seq &- maxSeq)
        if udelta < Self.maxDropout {
            if seq < maxSeq { cycles &+= Self.seqMod }   // wrapped
            maxSeq = seq
        } else if udelta <= Self.seqMod - Self.maxMisorder {
            // A very large jump.
            if UInt32(seq) == badSeq {
                // Two sequential packets: the other side restarted; resync.
                initSequence(seq)
                haveTransit = false
            } else {
                badSeq = (UInt32(seq) + 1) & (Self.seqMod - 1)
                return false
            }
        } else {
            // Duplicate or reordered packet.
        }
        received &+= 1
        return true
    }

    /// Extended highest sequence number received (cycles × 65536 + max seq), RFC 3550 §6.4.1.
    public var extendedHighestSequenceNumber: UInt32 { cycles &+ UInt32(maxSeq) }

    /// Packets expected so far (A.3): extended highest − base + 1.
    public var expected: UInt32 { started ? extendedHighestSequenceNumber &- baseSeq &+ 1 : 0 }

    /// Cumulative packets lost (A.3), clamped to the 24-bit signed range of a report block.
    public var cumulativeLost: Int32 {
        let lost = Int64(expected) - Int64(received)
        return Int32(min(max(lost, -0x80_0000), 0x7F_FFFF))
    }

    /// Interarrival jitter in RTP timestamp units (A.8: the scaled estimate / 16).
    public var jitter: UInt32 { jitterQ4 >> 4 }

    /// Fraction lost since the previous call (A.3), as lost/expected × 256
    /// (0 when nothing was lost or there were duplicates); starts a new interval.
    public mutating func takeFractionLost() -> UInt8 {
        let e = expected
        let expectedInterval = e &- expectedPrior
        expectedPrior = e
        let receivedInterval = received &- receivedPrior
        receivedPrior = received
        let lostInterval = Int64(expectedInterval) - Int64(receivedInterval)
        guard expectedInterval != 0, lostInterval > 0 else { return 0 }
        return UInt8(min((lostInterval << 8) / Int64(expectedInterval), 255))
    }

    /// A report block for source `ssrc` (RFC 3550 §6.4.1), starting a new
    /// fraction-lost interval. `lastSenderReport`/`delay` are LSR and DLSR (1/65536 s).
    public mutating func makeReport(ssrc: UInt32, lastSenderReport: UInt32 = 0, delay: UInt32 = 0) -> ReceptionReport {
        ReceptionReport(ssrc: ssrc, fractionLost: takeFractionLost(), cumulativeLost: cumulativeLost,
                        extendedHighestSequenceNumber: extendedHighestSequenceNumber, jitter: jitter,
                        lastSenderReport: lastSenderReport, delaySinceLastSenderReport: delay)
    }
}

/// Round-trip time helpers for RTCP (RFC 3550 §6.4.1).
public enum RoundTripTime {
    /// The middle 32 bits of a 64-bit NTP timestamp (16.16 fixed-point seconds),
    /// the form used by LSR, DLSR and the arrival time A.
    public static func middle32(ofNTP ntp: UInt64) -> UInt32 { UInt32(truncatingIfNeeded: ntp >> 16) }

    /// A 64-bit NTP timestamp (32.32 fixed point) as seconds since 1900.
    public static func seconds(ofNTP ntp: UInt64) -> Double { Double(ntp >> 32) + Double(ntp & 0xFFFF_FFFF) / 4_294_967_296 }

    /// Round-trip time in milliseconds: `A − LSR − DLSR`, where `arrival` (A) is the
    /// middle 32 bits of the NTP time the report block arrived, and all three are
    /// in 1/65536 s units. Returns nil if LSR is 0 (no SR received yet) or the result is negative.
    public static func milliseconds(arrival: UInt32, lastSenderReport: UInt32, delaySinceLastSenderReport: UInt32) -> Double? {
        guard lastSenderReport != 0 else { return nil }
        let rtt = Int64(arrival) - Int64(lastSenderReport) - Int64(delaySinceLastSenderReport)
        // Allow the 32-bit middle field to wrap (every 65536 s, ~18 h).
        let wrapped = rtt < -Int64(1 << 31) ? rtt + Int64(1 << 32) : rtt
        guard wrapped >= 0 else { return nil }
        return Double(wrapped) * 1000 / 65536
    }
}
