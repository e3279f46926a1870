// SequenceBuffer and SequenceNumberSet against the Dictionary and Set they replaced in
// the depayloaders, on random operations in the patterns a depayloader makes and in any order.
import Testing
import TestSupport
@testable import RTP

@Suite struct SequenceContainerTests {
    /// 30 000 random inserts, lookups, removals and range queries: a SequenceBuffer answers
    /// every one as a `[Int64: Int]` does. Keys mostly ascend with small jumps and holes
    /// (a stream), and removals are mostly of the oldest key, as in the depayloaders; a
    /// quarter of the operations use any key in the span. At most about 200 keys are held.
    @Test func sequenceBufferActsAsADictionary() {
        var g = SplitMix64(state: 11)
        var buffer = SequenceBuffer<Int>()
        var reference: [Int64: Int] = [:]
        var next: Int64 = 1000
        for step in 0..<30_000 {
            let anyKey = Int64.random(in: 900...(next + 20), using: &g)
            switch Int.random(in: 0..<10, using: &g) {
            case 0...3:
                let key = Int.random(in: 0..<4, using: &g) == 0 ? anyKey : next
                next += Int64.random(in: 1...3, using: &g)
                let added = buffer.insertIfAbsent(step, for: key)
                #expect(added == (reference[key] == nil))
                if reference[key] == nil { reference[key] = step }
            case 4, 5:
                let key = Int.random(in: 0..<4, using: &g) == 0 ? anyKey : (reference.keys.min() ?? anyKey)
                #expect(buffer.removeValue(forKey: key) == reference.removeValue(forKey: key))
            case 6:
                let low = Int.random(in: 0..<2, using: &g) == 0 ? (reference.keys.min() ?? anyKey) : anyKey
                let range = low...(low + Int64.random(in: 0...8, using: &g))
                var removed: [(Int64, Int)] = []
                buffer.removeAll(in: range) { removed.append(($0, $1)) }
                let expected = reference.filter { range.contains($0.key) }.sorted { $0.key < $1.key }
                #expect(removed.map(\.0) == expected.map(\.key) && removed.map(\.1) == expected.map(\.value))
                for (k, _) in expected { reference[k] = nil }
            case 7:
                #expect(buffer.firstKey(after: anyKey) == reference.keys.filter { $0 > anyKey }.min())
            case 8:
                let entries = buffer.entries(from: anyKey)
                let expected = reference.filter { $0.key >= anyKey }.sorted { $0.key < $1.key }
                #expect(entries.map(\.key) == expected.map(\.key) && entries.map(\.value) == expected.map(\.value))
            default:
                #expect(buffer[anyKey] == reference[anyKey])
            }
            if reference.count > 200, let oldest = reference.keys.min() {
                // A depayloader's buffer stays small: take out the oldest.
                #expect(buffer.removeValue(forKey: oldest) == reference.removeValue(forKey: oldest))
            }
            #expect(buffer.count == reference.count && buffer.isEmpty == reference.isEmpty)
            #expect(buffer.firstKey == reference.keys.min())
        }
    }

    /// 50 000 random inserts, lookups and prunings: a SequenceNumberSet holds what a
    /// `Set<Int64>` holds. Inserts mostly ascend in runs (consumed packets), some go anywhere.
    @Test func sequenceNumberSetActsAsASet() {
        var g = SplitMix64(state: 12)
        var set = SequenceNumberSet()
        var reference: Set<Int64> = []
        var next: Int64 = 5000
        for _ in 0..<50_000 {
            let any = Int64.random(in: 4000...(next + 10), using: &g)
            switch Int.random(in: 0..<10, using: &g) {
            case 0...4:
                next += Int.random(in: 0..<5, using: &g) == 0 ? Int64.random(in: 2...6, using: &g) : 1
                set.insert(next)
                reference.insert(next)
            case 5, 6:
                set.insert(any)
                reference.insert(any)
            case 7:
                if Int.random(in: 0..<5, using: &g) == 0 {
                    set.removeAll(below: any)
                    reference = reference.filter { $0 >= any }
                }
            default:
                #expect(set.contains(any) == reference.contains(any))
            }
            #expect(set.count == reference.count)
        }
        for x in 3990...(next + 10) { #expect(set.contains(x) == reference.contains(x)) }
    }
}
