/// The depayloaders' packet buffer: values keyed by unwrapped (64-bit) sequence number,
/// kept in key order in an array, for the way a depayloader uses it. Packets arrive
/// mostly in order (an insert is an append; a reordered one moves the few entries after
/// it, and only holes near the newest packet are ever filled) and are taken out from the
/// oldest (removing the first entry is O(1)); a lookup of a run of consecutive numbers
/// is O(1) (the key's distance from the first key gives its place), otherwise a binary
/// search. Before this the buffers were `[Int64: …]` dictionaries, whose hashing and
/// probing per insert, lookup and removal were most of a depayloader's time.
///
/// Any order of operations is correct (it behaves as a dictionary); only the speed
/// depends on the pattern.
struct SequenceBuffer<Value> {
    /// Keys of the entries from ``head`` on, strictly ascending.
    private var storedKeys: [Int64] = []
    /// Values matching ``storedKeys``; `nil` before ``head`` (removed, storage not yet reclaimed).
    private var storedValues: [Value?] = []
    /// Index of the first entry still in the buffer.
    private var head = 0

    /// The number of entries.
    var count: Int { storedKeys.count - head }
    /// Whether the buffer is empty.
    var isEmpty: Bool { storedKeys.count == head }
    /// The smallest key, if any.
    var firstKey: Int64? { isEmpty ? nil : storedKeys[head] }

    /// The value for `key`, if present.
    subscript(key: Int64) -> Value? {
        let i = index(of: key)
        return i < storedKeys.count && storedKeys[i] == key ? storedValues[i] : nil
    }

    /// Adds `value` for `key` unless `key` is already present; returns whether it was added
    /// (a buffer never replaces the first copy of a packet with a duplicate).
    mutating func insertIfAbsent(_ value: Value, for key: Int64) -> Bool {
        if isEmpty || key > storedKeys[storedKeys.count - 1] {
            storedKeys.append(key)
            storedValues.append(value)
            return true
        }
        let i = index(of: key)
        if i < storedKeys.count && storedKeys[i] == key { return false }
        if i == head && head > 0 {
            // Before the first entry, where a removed one left room.
            head -= 1
            storedKeys[head] = key
            storedValues[head] = value
        } else {
            storedKeys.insert(key, at: i)
            storedValues.insert(value, at: i)
        }
        return true
    }

    /// Removes and returns the value for `key`, if present.
    mutating func removeValue(forKey key: Int64) -> Value? {
        let i = index(of: key)
        guard i < storedKeys.count && storedKeys[i] == key else { return nil }
        let value = storedValues[i]
        if i == head {
            storedValues[head] = nil
            head += 1
            compact()
        } else {
            storedKeys.remove(at: i)
            storedValues.remove(at: i)
        }
        return value
    }

    /// Removes the entries with keys in `range`, calling `body` with each in key order.
    /// O(1) per entry when they are the oldest (a depayloader taking out a whole frame).
    mutating func removeAll(in range: ClosedRange<Int64>, _ body: (Int64, Value) -> Void) {
        let from = index(of: range.lowerBound)
        var to = from
        while to < storedKeys.count && storedKeys[to] <= range.upperBound {
            if let value = storedValues[to] { body(storedKeys[to], value) }
            storedValues[to] = nil
            to += 1
        }
        if from == head {
            head = to
            compact()
        } else {
            storedKeys.removeSubrange(from..<to)
            storedValues.removeSubrange(from..<to)
        }
    }

    /// The entries with keys not less than `start`, in key order.
    func entries(from start: Int64) -> [(key: Int64, value: Value)] {
        var out: [(key: Int64, value: Value)] = []
        let from = index(of: start)
        out.reserveCapacity(storedKeys.count - from)
        for i in from..<storedKeys.count {
            if let value = storedValues[i] { out.append((storedKeys[i], value)) }
        }
        return out
    }

    /// The smallest key greater than `key`, if any.
    func firstKey(after key: Int64) -> Int64? {
        let i = index(of: key)
        if i < storedKeys.count && storedKeys[i] == key { return i + 1 < storedKeys.count ? storedKeys[i + 1] : nil }
        return i < storedKeys.count ? storedKeys[i] : nil
    }

    /// Reclaims the storage before ``head`` when the buffer is empty or that is at least
    /// half of it (so removing from the front is O(1) amortized).
    private mutating func compact() {
        if head == storedKeys.count {
            storedKeys.removeAll(keepingCapacity: true)
            storedValues.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 64 && 2 * head >= storedKeys.count {
            storedKeys.removeFirst(head)
            storedValues.removeFirst(head)
            head = 0
        }
    }

    /// The index of the first entry (from ``head``) whose key is not less than `key`
    /// (`storedKeys.count` if none).
    private func index(of key: Int64) -> Int {
        guard !isEmpty else { return storedKeys.count }
        let first = storedKeys[head]
        if key <= first { return head }
        // Past the newest: what a depayloader asks about the packet after the last one.
        if key > storedKeys[storedKeys.count - 1] { return storedKeys.count }
        // A run of consecutive keys: the distance from the first key is the place.
        let distance = key &- first
        if distance > 0 && distance < Int64(count) {
            let guess = head + Int(distance)
            if storedKeys[guess] == key { return guess }
        }
        var lo = head, hi = storedKeys.count
        while lo < hi {
            let mid = lo + (hi - lo) / 2
            if storedKeys[mid] < key { lo = mid + 1 } else { hi = mid }
        }
        return lo
    }
}

extension SequenceBuffer: Sendable where Value: Sendable {}
