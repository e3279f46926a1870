// NumberedCount (--data-burst's count of numbered messages): received, missing, repeats, out of order, and where the gaps are.
import Testing
@testable import PeerCall

@Suite struct NumberedCountTests {
    /// Gaps are the runs below the highest number that never came, lowest first, at most
    /// `limit`; whole words of 64 are skipped (a number near the top stays quick).
    @Test func gapsNameTheMissingRuns() {
        var n = NumberedCount()
        for i: UInt64 in [0, 1, 2, 5, 6, 9, 3, 200, 200] { n.take(i, at: Double(i)) }
        #expect(n.received == 8 && n.duplicates == 1 && n.outOfOrder == 1 && n.missing == 201 - 8)
        #expect(n.gaps() == [4...4, 7...8, 10...199])
        #expect(n.gaps(limit: 2) == [4...4, 7...8])
        var full = NumberedCount()
        for i: UInt64 in 0..<1_000 where i != 640 { full.take(i, at: 0) }
        #expect(full.gaps() == [640...640] && full.missing == 1)
        var far = NumberedCount()
        far.take(0, at: 0)
        far.take(NumberedCount.maximumNumber - 1, at: 1)
        #expect(far.gaps() == [1...(NumberedCount.maximumNumber - 2)])
        #expect(NumberedCount().gaps().isEmpty)
    }
}
