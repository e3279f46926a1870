// FrameNumberRuns: decoded frame numbers kept as runs, given back in arrival order.
import Testing
@testable import PeerAgent
@testable import PeerCall

@Suite struct FrameNumberRunsTests {
    /// Consecutive numbers are one run however many; a gap, a repeat or a step back starts
    /// a new one; the numbers come back as they were appended.
    @Test func runsKeepArrivalOrder() {
        var log = FrameNumberRuns()
        for n in 0..<108_000 { log.append(n) }
        #expect(log.runs == [.init(first: 0, count: 108_000)])
        let tail = [108_005, 108_006, 108_006, 107_999, 108_007]
        for n in tail { log.append(n) }
        #expect(log.runs.count == 5)
        #expect(log.count == 108_005)
        #expect(Array(log.numbers.suffix(6)) == [107_999] + tail)
        #expect(log.numbers.count == 108_005)
    }
}
