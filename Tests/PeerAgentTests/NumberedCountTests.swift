// Tests of NumberedCount, the receiving side of --data-burst: in order, repeated, out of order, missing, and numbers from the peer beyond any burst.
import Testing
@testable import PeerCall

@Suite struct NumberedCountTests {
    @Test func countsRepeatsGapsAndOrder() {
        var n = NumberedCount()
        for x: UInt64 in [0, 1, 2, 2, 5, 3] { n.take(x, at: 0) }
        #expect(n.received == 5 && n.duplicates == 1 && n.outOfOrder == 1 && n.highest == 5 && n.missing == 1)
    }

    /// A peer's "PSEQ" message numbered 2^64 − 1 once trapped in `missing` (Int of a UInt64).
    @Test func aNumberBeyondAnyBurstIsCountedApartAndNothingTraps() {
        var n = NumberedCount()
        n.take(.max, at: 0)
        n.take(NumberedCount.maximumNumber, at: 0)
        n.take(7, at: 0)
        #expect(n.outOfRange == 2 && n.received == 1 && n.highest == 7 && n.missing == 7)
    }
}
