// ThreadBound: the value is reachable on its thread and in its place after it ended; anywhere else the process stops.
import Media
import Testing

@Suite struct ThreadBoundTests {
    @Test func theValueIsReadAndWrittenOnItsThread() {
        let thread = MediaThread(name: "test.bound")
        defer { thread.stop() }
        let bound = ThreadBound([Int](), thread: thread)
        for i in 1...100 { thread.async { bound.value.append(i) } }
        let values = thread.sync { bound.withValue { $0 } }
        #expect(values == Array(1...100))
    }

    /// After stop, `sync` runs its work on the caller's thread in the thread's place: the
    /// value is still reachable there (a receiver's close drains its sinks this way).
    @Test func syncAfterStopRunsInTheThreadsPlace() {
        let thread = MediaThread(name: "test.bound.end")
        let bound = ThreadBound(7, thread: thread)
        thread.stop()
        #expect(!thread.isCurrent)
        let seen = thread.sync { () -> (Bool, Int) in
            bound.value += 1
            return (thread.isCurrent, bound.value)
        }
        #expect(seen == (true, 8))
        #expect(!thread.isCurrent)
    }

    @Test func touchingTheValueFromAnotherThreadStopsTheProcess() async {
        await #expect(processExitsWith: .failure) {
            let thread = MediaThread(name: "test.bound.bad")
            let bound = ThreadBound(0, thread: thread)
            bound.value = 1
        }
    }
}
