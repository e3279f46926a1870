/// A set of unwrapped (64-bit) sequence numbers kept as ascending, disjoint ranges: the
/// packets a depayloader has consumed, which arrive in ascending order and mostly in
/// runs, so an insert is nearly always an append or the growth of the last range (no
/// hashing, no per-number storage) and a lookup is a binary search over the ranges.
///
/// It stands for a `Set<Int64>` (the depayloaders' duplicate-or-late test); any order of
/// inserts is correct, ascending ones are the fast path. Sequence numbers are far from
/// `Int64.max` (they grow by at most 2^15 per packet from below 2^16).
struct SequenceNumberSet: Sendable {
    /// Ascending, disjoint and non-adjacent (a gap of at least one between neighbours).
    private var ranges: [Range<Int64>] = []
    /// The number of sequence numbers in the set.
    private(set) var count = 0

    /// Whether `x` is in the set.
    func contains(_ x: Int64) -> Bool {
        let i = firstRange(endingAtOrAfter: x)
        return i < ranges.count && ranges[i].contains(x)
    }

    /// Adds `x` (no change if it is already in the set).
    mutating func insert(_ x: Int64) {
        if let last = ranges.last, x >= last.lowerBound {
            // The fast path: at or past the start of the last range.
            if x < last.upperBound { return }
            if x == last.upperBound {
                ranges[ranges.count - 1] = last.lowerBound..<x + 1
            } else {
                ranges.append(x..<x + 1)
            }
            count += 1
            return
        }
        let i = firstRange(endingAtOrAfter: x)
        if i == ranges.count {
            ranges.append(x..<x + 1)
        } else if ranges[i].contains(x) {
            return
        } else if ranges[i].upperBound == x {
            // Just past range i (and before range i + 1, which may now touch it).
            if i + 1 < ranges.count, ranges[i + 1].lowerBound == x + 1 {
                ranges[i] = ranges[i].lowerBound..<ranges[i + 1].upperBound
                ranges.remove(at: i + 1)
            } else {
                ranges[i] = ranges[i].lowerBound..<x + 1
            }
        } else if ranges[i].lowerBound == x + 1 {
            ranges[i] = x..<ranges[i].upperBound
        } else {
            ranges.insert(x..<x + 1, at: i)
        }
        count += 1
    }

    /// Removes every sequence number below `keep`.
    mutating func removeAll(below keep: Int64) {
        let i = firstRange(endingAtOrAfter: keep + 1)
        for r in ranges[..<i] { count -= r.count }
        ranges.removeFirst(i)
        if let first = ranges.first, first.lowerBound < keep {
            count -= Int(keep - first.lowerBound)
            ranges[0] = keep..<first.upperBound
        }
    }

    /// The index of the first range whose `upperBound` is at least `x` (`ranges.count` if none):
    /// the one that holds `x`, or ends just before it, or is the first one after it.
    private func firstRange(endingAtOrAfter x: Int64) -> Int {
        var lo = 0, hi = ranges.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if ranges[mid].upperBound < x { lo = mid + 1 } else { hi = mid }
        }
        return lo
    }
}
