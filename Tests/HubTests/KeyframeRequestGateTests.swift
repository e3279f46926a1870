// KeyframeRequestGateTests: PLI/FIR of many subscribers merged, at most one forced key frame per 500 ms (RFC 4585 §6.3.1, RFC 5104 §4.3.1).
import Hub
import Testing

@Suite struct KeyframeRequestGateTests {
    /// Runs the gate over frames every 33 ms from `start` for `frames` frames; `requests`
    /// maps a frame index to the requests made just before it. Returns the forced frames.
    static func run(_ gate: inout KeyframeRequestGate, frames: Int, start: Int64 = 0,
                    requests: [Int: Int], natural: Set<Int> = []) -> [Int] {
        var forced: [Int] = []
        for i in 0..<frames {
            let now = start + Int64(i) * 33
            for _ in 0..<(requests[i] ?? 0) { gate.request(nowMs: now) }
            let force = gate.takeForce(nowMs: now)
            if force { forced.append(i) }
            gate.produced(isKeyframe: force || natural.contains(i), forced: force)
        }
        return forced
    }

    /// Fifty subscribers asking at once get one key frame, at the next frame.
    @Test func requestsAtOnceAreMerged() {
        var gate = KeyframeRequestGate()
        let forced = Self.run(&gate, frames: 10, requests: [3: 50])
        #expect(forced == [3])
        #expect(gate.counts.requests == 50 && gate.counts.merged == 49 && gate.counts.forced == 1)
    }

    /// Requests every frame for 3 s: a key frame forced every 500 ms (every 16th frame at
    /// 33 ms, the first frame at or after the interval), never closer.
    @Test func atMostOneForcedKeyframePer500ms() {
        var gate = KeyframeRequestGate()
        let forced = Self.run(&gate, frames: 91, requests: Dictionary(uniqueKeysWithValues: (0..<91).map { ($0, 2) }))
        #expect(forced == [0, 16, 32, 48, 64, 80])
        for (a, b) in zip(forced, forced.dropFirst()) { #expect(Int64(b - a) * 33 >= 500) }
        #expect(gate.counts.forced == 6)
        #expect(gate.counts.requests == 182)
    }

    /// A request 100 ms after a forced key frame is deferred, and served by the first frame
    /// 500 ms after that key frame; the outcome says when.
    @Test func requestWithinTheIntervalIsServedByTheNextOne() {
        var gate = KeyframeRequestGate()
        gate.request(nowMs: 1_000)
        let first = gate.takeForce(nowMs: 1_000)
        gate.produced(isKeyframe: true, forced: true)
        let deferred = gate.request(nowMs: 1_100)
        let merged = gate.request(nowMs: 1_200)
        let early = gate.takeForce(nowMs: 1_466)
        let due = gate.takeForce(nowMs: 1_500)
        let after = gate.takeForce(nowMs: 1_533)
        let later = gate.request(nowMs: 2_100)
        #expect(first && deferred == .deferred(untilMs: 1_500) && merged == .merged)
        #expect(!early && due)
        #expect(!after, "served: nothing waits")
        #expect(later == .nextFrame)
        #expect(gate.counts.deferred == 1 && gate.counts.merged == 1 && gate.counts.forced == 2)
    }

    /// A key frame the encoder makes by itself satisfies the waiting request and does not
    /// count against the limit.
    @Test func naturalKeyframeSatisfiesAWaitingRequest() {
        var gate = KeyframeRequestGate()
        gate.request(nowMs: 0)
        let first = gate.takeForce(nowMs: 0)
        gate.produced(isKeyframe: true, forced: true)
        gate.request(nowMs: 100)
        gate.produced(isKeyframe: true, forced: false)  // kf_max_dist, at 133 ms
        #expect(first && !gate.pending)
        let later = gate.takeForce(nowMs: 600)
        #expect(!later)
        #expect(gate.counts.satisfiedByNatural == 1 && gate.counts.forced == 1)
    }
}
