// FrameNumberRuns: the frame numbers a receiver decoded, in arrival order, kept as runs of consecutive numbers.

/// The frame numbers read from decoded test-pattern frames (``Media/FrameMarker``), in
/// arrival order, stored as runs of consecutive numbers: a call that loses nothing keeps
/// one run however long it lasts, so memory grows with the gaps and reorderings, not
/// with the call's length (a plain array of a 1-hour 30 fps call held 108,000 numbers).
struct FrameNumberRuns: Sendable, Equatable {
    /// `count` numbers from `first` on, each one more than the one before.
    struct Run: Sendable, Equatable {
        var first: Int
        var count: Int
    }

    /// The runs in arrival order.
    private(set) var runs: [Run] = []
    /// How many numbers were appended.
    private(set) var count = 0

    /// Appends `number`: it extends the last run when it is that run's next number.
    mutating func append(_ number: Int) {
        count += 1
        if let last = runs.last, last.first &+ last.count == number {
            runs[runs.count - 1].count += 1
        } else {
            runs.append(Run(first: number, count: 1))
        }
    }

    /// Every number in arrival order.
    var numbers: [Int] { runs.flatMap { run in (0..<run.count).map { run.first &+ $0 } } }
}
