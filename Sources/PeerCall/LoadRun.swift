// LoadRun: one `peer load` run — the shared router session joined, N calls started at the ramp's pace, each call's events taken into its record, aggregates each second, every call's end awaited within a deadline, and the outcome.
import DTLS
import EventLoop
import Foundation
import PeerAgent
import Synchronization
import WampClient

/// The outcome of a ``LoadRun``.
public struct LoadOutcome: Sendable {
    /// Every call of the plan, in order (call *i* at index *i* − 1).
    public var records: [LoadCallRecord]
    /// The aggregates at the end (``LoadStatus/final(records:elapsed:routerConnected:)``).
    public var status: LoadStatus
    /// What happened to the shared router session, in order.
    public var routerHistory: [SharedSignaling.StatusRecord]
    /// Why the router could not be joined (then no call started).
    public var routerError: String?
    /// A SIGINT/SIGTERM (``LoadRun/hangUp(interrupted:)``) ended the run.
    public var interrupted: Bool
    /// Calls still running at the run's deadline (hung up then), and those that had not
    /// ended even 30 s later (given up on; their record says so).
    public var hungUp: [Int], gaveUpOn: [Int]
    /// When the first call started and when the run ended (`systemUptime`, s).
    public var startedAt: TimeInterval, endedAt: TimeInterval
    /// The seconds the run allowed before hanging up what still ran.
    public var deadlineSeconds: Double

    /// 0 when every call passed; 3 when the router could not be joined; 130 when
    /// interrupted; else the exit code of the first call (by number) that did not pass.
    public var exitCode: Int32 {
        if routerError != nil { return ExitCode.router }
        if interrupted { return ExitCode.interrupted }
        return records.first { !$0.passed }.map { $0.exitCode ?? ExitCode.timeout } ?? ExitCode.ok
    }
}

/// Runs a ``LoadPlan``: joins the router once (``SharedSignaling``), makes the process's
/// DTLS certificate and libsrtp's set-up once, starts call *i* at
/// ``LoadPlan/startOffset(ofCall:)`` (each a ``Call`` on the shared session), keeps one
/// ``LoadCallRecord`` per call from its events, hands the aggregates (``LoadStatus``) to
/// `onStatus` every second and each ended call's record to `onCallEnded`, and returns when
/// every call has ended.
///
/// Nothing waits without a bound: the join takes at most the plan's `--timeout`; each call
/// bounds its own steps (`--timeout`, `--duration`, the ICE restart's 15 s); and the run
/// hangs up whatever still runs ``deadlineSeconds`` after the first start, and gives up on
/// a call 30 s after that (recorded as failed, exit code 4).
///
/// Thread-safe: the records and calls are behind one `Mutex`, held to read or change them
/// only (never while calling into a call or a handler).
public final class LoadRun: Sendable {
    /// The plan.
    public let plan: LoadPlan
    private let onStatus: @Sendable (LoadStatus) -> Void
    private let onCallEnded: @Sendable (LoadCallRecord) -> Void
    private let onCallEvent: @Sendable (Int, CallEvent) -> Void
    private let onJoined: @Sendable (SharedSignaling) -> Void

    private enum Stop { case hungUp, interrupted }
    private struct State {
        var records: [LoadCallRecord]
        var calls: [Int: Call] = [:]
        var stop: Stop?
        var launching = true
        var running = 0
        var done: CheckedContinuation<Void, Never>?
        var finished = false
    }
    private let state: Mutex<State>

    /// Seconds after the first call's start by which every call should have ended: the
    /// ramp, `--duration`, three `--timeout`s (offer, ICE, DTLS), an ICE restart's 20 s and
    /// 40 s more.
    public var deadlineSeconds: Double {
        plan.rampSeconds + plan.template.durationSeconds + 3 * plan.template.timeoutSeconds + 60
    }
    /// How long after the deadline the run waits for calls it hung up.
    public static let graceSeconds = 30.0

    /// A run of `plan`. The handlers are called from the run's tasks: `onJoined` once the
    /// router is joined, `onStatus` every second, `onCallEvent` with each call's events
    /// (from that call's task, in order) and `onCallEnded` with each ended call's record.
    public init(plan: LoadPlan, onJoined: @escaping @Sendable (SharedSignaling) -> Void = { _ in },
                onStatus: @escaping @Sendable (LoadStatus) -> Void = { _ in },
                onCallEvent: @escaping @Sendable (Int, CallEvent) -> Void = { _, _ in },
                onCallEnded: @escaping @Sendable (LoadCallRecord) -> Void = { _ in }) {
        self.plan = plan
        self.onJoined = onJoined
        self.onStatus = onStatus
        self.onCallEvent = onCallEvent
        self.onCallEnded = onCallEnded
        state = Mutex(State(records: (1...max(1, plan.calls)).map { LoadCallRecord(index: $0, signalingName: plan.signalingName(ofCall: $0)) }))
    }

    /// Ends the run from outside (SIGINT/SIGTERM, a test): no more calls start, and every
    /// running call hangs up (exit code 130 when `interrupted`). Safe from any thread.
    public func hangUp(interrupted: Bool) {
        let calls = state.withLock { s -> [Call] in
            if s.stop != .interrupted { s.stop = interrupted ? .interrupted : .hungUp }
            return Array(s.calls.values)
        }
        for call in calls { call.hangUp(interrupted: interrupted) }
    }

    /// Runs the plan to its end.
    public func run() async -> LoadOutcome {
        var wamp = plan.template.wamp
        wamp.joinTimeoutMs = UInt32(max(1, min(plan.template.timeoutSeconds, 3_600)) * 1000)
        let signaling: SharedSignaling
        do throws(WampError) { signaling = try await SharedSignaling.join(wamp) } catch {
            let now = ProcessInfo.processInfo.systemUptime
            return outcome(startedAt: now, routerHistory: [], routerError: "router \(wamp.url): \(error)", hungUp: [], gaveUpOn: [])
        }
        onJoined(signaling)
        // Once for every connection: the certificate (ECDSA P-256) and libsrtp's NSS set-up.
        if plan.template.connectionConfiguration.certificate == nil { _ = try? Certificate.shared() }
        SRTPSession.prepare()

        let start = ProcessInfo.processInfo.systemUptime
        let ticker = Task { [self] in
            var next = start + 1
            while !Task.isCancelled {
                let wait = next - ProcessInfo.processInfo.systemUptime
                if wait > 0 { try? await Task.sleep(nanoseconds: UInt64(wait * 1e9)) }
                guard !Task.isCancelled else { return }
                let second = next - start  // the second this status is for, whatever the wake-up's delay
                next += 1
                let records = state.withLock { $0.records }
                onStatus(LoadStatus(records: records, elapsed: second, routerConnected: signaling.isConnected))
            }
        }
        let launcher = Task { [self] in await launch(from: start, on: signaling) }
        let deadline = deadlineSeconds
        var hungUp: [Int] = [], gaveUpOn: [Int] = []
        let watchdog = Task { [self] () -> ([Int], [Int]) in
            try? await Task.sleep(nanoseconds: UInt64(deadline * 1e9))
            guard !Task.isCancelled else { return ([], []) }
            let late = state.withLock { s in s.calls.keys.sorted() }
            for i in late { state.withLock { $0.calls[i] }?.hangUp(interrupted: false) }
            try? await Task.sleep(nanoseconds: UInt64(Self.graceSeconds * 1e9))
            guard !Task.isCancelled else { return (late, []) }
            let stuck = state.withLock { s -> [Int] in
                let left = s.calls.keys.sorted()
                let now = ProcessInfo.processInfo.systemUptime
                for i in left where s.records[i - 1].endedAt == nil {
                    s.records[i - 1].endedAt = now
                    s.records[i - 1].exitCode = ExitCode.timeout
                    s.records[i - 1].endState = .failed
                    s.records[i - 1].reason = "did not end within the run's deadline (\(Int(deadline)) s) and \(Int(Self.graceSeconds)) s after its hang-up"
                }
                s.calls = [:]
                s.running = 0
                let done = s.done
                s.done = nil
                s.finished = true
                done?.resume()
                return left
            }
            return (late, stuck)
        }
        await launcher.value
        await allEnded()
        watchdog.cancel()
        (hungUp, gaveUpOn) = await watchdog.value
        ticker.cancel()
        await signaling.leave()
        return outcome(startedAt: start, routerHistory: signaling.history, routerError: nil, hungUp: hungUp, gaveUpOn: gaveUpOn)
    }

    /// Starts the calls at the ramp's pace until all are started or the run is stopped.
    private func launch(from start: TimeInterval, on signaling: SharedSignaling) async {
        for i in 1...plan.calls {
            let due = start + plan.startOffset(ofCall: i)
            while true {
                let wait = due - ProcessInfo.processInfo.systemUptime
                if wait <= 0 || state.withLock({ $0.stop != nil }) { break }
                try? await Task.sleep(nanoseconds: UInt64(min(wait, 0.1) * 1e9))
            }
            let options = plan.options(forCall: i)
            let call = Call(options: options, signaling: signaling) { [self] event in
                let now = ProcessInfo.processInfo.systemUptime
                state.withLock { $0.records[i - 1].take(event, now: now) }
                onCallEvent(i, event)
            }
            let started = state.withLock { s -> Bool in
                guard s.stop == nil else { return false }
                s.calls[i] = call
                s.running += 1
                s.records[i - 1].startedAt = ProcessInfo.processInfo.systemUptime
                return true
            }
            guard started else { break }
            Task { [self] in
                let result = await call.run()
                ended(i, result)
            }
        }
        let done = state.withLock { s -> CheckedContinuation<Void, Never>? in
            s.launching = false
            guard s.running == 0, !s.finished else { return nil }
            s.finished = true
            defer { s.done = nil }
            return s.done
        }
        done?.resume()
    }

    /// Call `i` ended with `result`.
    private func ended(_ i: Int, _ result: CallResult) {
        let (record, done) = state.withLock { s -> (LoadCallRecord?, CheckedContinuation<Void, Never>?) in
            guard s.calls.removeValue(forKey: i) != nil else { return (nil, nil) }  // given up on already
            s.running -= 1
            s.records[i - 1].ended(result, at: ProcessInfo.processInfo.systemUptime)
            var done: CheckedContinuation<Void, Never>?
            if s.running == 0, !s.launching, !s.finished {
                s.finished = true
                done = s.done
                s.done = nil
            }
            return (s.records[i - 1], done)
        }
        if let record { onCallEnded(record) }
        done?.resume()
    }

    /// Returns once the launcher is done and every started call has ended (or been given up on).
    private func allEnded() async {
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            let now = state.withLock { s -> Bool in
                if s.finished || (!s.launching && s.running == 0) {
                    s.finished = true
                    return true
                }
                s.done = c
                return false
            }
            if now { c.resume() }
        }
    }

    /// The outcome from the records as they are; calls never started are failed (not
    /// started: the run was stopped first).
    private func outcome(startedAt: TimeInterval, routerHistory: [SharedSignaling.StatusRecord], routerError: String?,
                         hungUp: [Int], gaveUpOn: [Int]) -> LoadOutcome {
        let (records, stop) = state.withLock { s -> ([LoadCallRecord], Stop?) in
            for i in s.records.indices where s.records[i].startedAt == nil {
                s.records[i].exitCode = routerError != nil ? ExitCode.router : (s.stop == .interrupted ? ExitCode.interrupted : ExitCode.timeout)
                s.records[i].endState = .failed
                s.records[i].reason = routerError.map { "not started: \($0)" } ?? "not started: the run was hung up first"
            }
            return (s.records, s.stop)
        }
        let end = ProcessInfo.processInfo.systemUptime
        return LoadOutcome(records: records,
                           status: .final(records: records, elapsed: end - startedAt, routerConnected: routerError == nil),
                           routerHistory: routerHistory, routerError: routerError, interrupted: stop == .interrupted,
                           hungUp: hungUp, gaveUpOn: gaveUpOn, startedAt: startedAt, endedAt: end, deadlineSeconds: deadlineSeconds)
    }
}
