// LoopScheduling: how the event-loop thread asks the Linux scheduler to run it soon after it wakes — a short EEVDF slice (sched_setattr(2), Linux ≥ 6.12) and, where permitted, a higher weight (nice).
import CLinux
import Foundation
import Glibc

/// The scheduling the event-loop thread asks for when it starts. The loop thread does
/// little work but must run soon after it wakes (ICE checks, DTLS retransmissions, the
/// WebSocket, RTCP and NACK timers), on machines whose cores are busy encoding video:
///
/// - a 0.2 ms EEVDF slice (`sched_attr.sched_runtime`): a task with a short slice gets an
///   earlier deadline and preempts a running encoder when it wakes, instead of waiting
///   for the end of that encoder's slice. Allowed to any process on Linux ≥ 6.12; refused
///   (EINVAL) on older kernels, which keep their default;
/// - nice −5: more weight, so a wake-up finds the loop eligible. Needs CAP_SYS_NICE or an
///   RLIMIT_NICE of 25 or more; without them the thread stays at its nice value.
///
/// Media threads are left as they are, so the process competes for CPU with other
/// processes as any other would. Overrides, for measurements: `PEER_LOOP_SLICE_US` (0 to
/// leave the kernel's default slice) and `PEER_LOOP_NICE`.
public enum LoopScheduling {
    /// The slice asked for, in ns.
    static let defaultSliceNs: UInt64 = 200_000
    /// The nice value asked for.
    static let defaultNice: Int32 = -5

    /// Applies the slice and the nice value to the calling thread; a refusal by the kernel
    /// leaves the thread as it was. The nice value is only ever lowered (a process started
    /// at nice −10 keeps −10). An override that is not a number in range is named on
    /// stderr and the default used.
    public static func applyToCurrentThread() {
        let environment = ProcessInfo.processInfo.environment
        let sliceUs = override("PEER_LOOP_SLICE_US", in: environment, range: 0...100_000) ?? Int(defaultSliceNs / 1000)
        if sliceUs > 0 { _ = peer_set_thread_slice(UInt64(sliceUs) * 1000) }
        let nice = override("PEER_LOOP_NICE", in: environment, range: -20...19).map(Int32.init) ?? defaultNice
        let me = id_t(peer_gettid()), which = __priority_which_t(PRIO_PROCESS.rawValue)
        errno = 0
        let current = getpriority(which, me)
        if errno == 0, nice < current { _ = setpriority(which, me, nice) }
    }

    /// The whole number in `environment[name]` when it is one within `range`; nil when
    /// unset; else nil after a line on stderr naming the variable and its value.
    private static func override(_ name: String, in environment: [String: String], range: ClosedRange<Int>) -> Int? {
        guard let text = environment[name] else { return nil }
        guard let value = Int(text), range.contains(value) else {
            FileHandle.standardError.write(Data("peer: \(name)=\"\(text)\" is not a whole number in \(range.lowerBound)…\(range.upperBound); the default is used\n".utf8))
            return nil
        }
        return value
    }

    /// The calling thread's slice (ms; 0 when the kernel cannot say) and nice value.
    static func ofCurrentThread() -> (sliceMs: Double, nice: Int32) {
        errno = 0
        let nice = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), id_t(peer_gettid()))
        return (Double(peer_thread_slice()) / 1e6, nice)
    }
}

extension EventLoop {
    /// The loop thread's scheduling as the kernel reports it: its EEVDF slice in ms (0
    /// when the kernel has no custom slices) and its nice value (``LoopScheduling``).
    public var threadScheduling: (sliceMs: Double, nice: Int32) { sync { LoopScheduling.ofCurrentThread() } }
}
