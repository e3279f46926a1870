/// The receiver side of Generic NACK (RFC 4585 §6.2.1): watches the sequence
/// numbers of one SSRC, notices gaps, and says which packets to ask for again.
///
/// A missing packet is asked for at once when the gap is seen, then again every
/// ``retryIntervalMs`` (about one round trip) up to ``maximumRetries`` times;
/// it is forgotten when it arrives, after its last try, or when it falls more
/// than ``maximumAgePackets`` behind the newest packet (its frame is lost by then).
public struct NackGenerator: Sendable {
    /// How many times one packet is asked for (default 10).
    public var maximumRetries: Int
    /// Milliseconds between two requests for the same packet (default 40 ms; set it
    /// to the measured round-trip time plus a margin when known).
    public var retryIntervalMs: Int64
    /// Gaps further than this many packets behind the newest are given up (default 500).
    public var maximumAgePackets: Int64
    /// Packets asked for at least once, in total (for `nackCount`-style statistics).
    public private(set) var requested = 0
    /// Asked-for packets that arrived afterwards (recovered by retransmission).
    public private(set) var recovered = 0

    private var unwrapper = SequenceUnwrapper()
    private var newest: Int64?
    private var missing: [Int64: (tries: Int, lastAskedMs: Int64)] = [:]
    /// Lower bound of the keys in ``missing`` (no key is smaller); lets ``received(_:nowMs:)``
    /// drop only the keys that fell out of the window instead of rebuilding the dictionary.
    private var oldestMissing: Int64 = .max
    /// Keys visited by window trimming so far (tests: the cost per forward packet stays small).
    private(set) var windowWork = 0

    /// A generator with the given limits.
    public init(maximumRetries: Int = 10, retryIntervalMs: Int64 = 40, maximumAgePackets: Int64 = 500) {
        self.maximumRetries = maximumRetries
        self.retryIntervalMs = retryIntervalMs
        self.maximumAgePackets = maximumAgePackets
    }

    /// Records the arrival of `sequenceNumber` at `nowMs`. Packets skipped between the
    /// newest seen and this one become missing (at most ``maximumAgePackets`` of them).
    public mutating func received(_ sequenceNumber: UInt16, nowMs: Int64) {
        let seq = unwrapper.unwrap(sequenceNumber)
        guard let last = newest else { newest = seq; return }
        if seq > last {
            let floor = seq - maximumAgePackets
            var s = max(last + 1, floor)
            if s < seq { oldestMissing = min(oldestMissing, s) }
            while s < seq { missing[s] = (0, 0); s += 1 }
            newest = seq
            dropMissing(below: floor)
        } else if missing.removeValue(forKey: seq).map({ $0.tries > 0 }) == true {
            recovered += 1
        }
    }

    /// The sequence numbers to put in a NACK now (ascending), marking them asked at
    /// `nowMs`; empty when nothing is due. Packets asked ``maximumRetries`` times are dropped.
    public mutating func due(nowMs: Int64) -> [UInt16] {
        var out: [UInt16] = []
        for key in missing.keys.sorted() {
            guard let entry = missing[key] else { continue }
            if entry.tries >= maximumRetries { missing[key] = nil; continue }
            if entry.tries == 0 || nowMs - entry.lastAskedMs >= retryIntervalMs {
                if entry.tries == 0 { requested += 1 }
                missing[key] = (entry.tries + 1, nowMs)
                out.append(UInt16(truncatingIfNeeded: key))
            }
        }
        return out
    }

    /// Removes the missing entries older than `floor`. Walks the keys from ``oldestMissing``
    /// up to `floor` when that is shorter than the dictionary, else filters it once; either
    /// way each forward packet costs only what fell out of the window.
    private mutating func dropMissing(below floor: Int64) {
        guard oldestMissing < floor, !missing.isEmpty else {
            if missing.isEmpty { oldestMissing = .max }
            return
        }
        if floor - oldestMissing <= Int64(missing.count) {
            var k = oldestMissing
            while k < floor { missing[k] = nil; k += 1 }
            windowWork += Int(floor - oldestMissing)
        } else {
            windowWork += missing.count
            missing = missing.filter { $0.key >= floor }
        }
        oldestMissing = missing.isEmpty ? .max : floor
    }

    /// How many packets are currently missing and still being asked for.
    public var outstanding: Int { missing.count }
}
