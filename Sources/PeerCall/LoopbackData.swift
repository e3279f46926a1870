// LoopbackData: the data channels of `peer loopback` (RFC 8831) — A creates them, each side sends its --data-burst numbered messages, each counts what arrives.
import Foundation
import PeerAgent
import Synchronization

/// The data channels of a ``Loopback`` call: side A creates each spec; once a channel is
/// open on a side, that side sends the burst for its label (at most
/// ``CallRun/burstHighWater`` bytes buffered, polled every ms); every side counts the
/// numbered messages it receives, by label.
final class LoopbackData: Sendable {
    private let bursts: [DataBurst]
    private let counts = Mutex<[String: [String: NumberedCount]]>([:])

    init(bursts: [DataBurst]) { self.bursts = bursts }

    /// A data channel event of `side` ("a" or "b"), on the loop thread.
    func event(_ event: DataChannelEvent, side: String) {
        switch event {
        case let .message(ch, .binary(bytes)):
            guard let n = DataBurst.number(bytes) else { return }
            let now = ProcessInfo.processInfo.systemUptime
            counts.withLock { $0[side, default: [:]][ch.label, default: NumberedCount()].take(n, at: now) }
        default:
            break
        }
    }

    /// Sends the bursts on both sides' channels, each from when it is open, until done or
    /// `deadline`; `channels` is read every 10 ms until `expected` channels have started.
    func sendBursts(on channels: @escaping @Sendable () -> [DataChannel], expected: Int, until deadline: Date) async {
        await withTaskGroup(of: Void.self) { group in
            var started: [ObjectIdentifier] = []
            while started.count < expected, Date() < deadline {
                for ch in channels() where ch.readyState == .open && !started.contains(ObjectIdentifier(ch)) {
                    started.append(ObjectIdentifier(ch))
                    for burst in bursts where burst.label == ch.label {
                        group.addTask { await Self.send(burst, on: ch, until: deadline) }
                    }
                }
                try? await Task.sleep(nanoseconds: 10_000_000)
            }
        }
    }

    /// Sends `burst` on `ch`, at most ``CallRun/burstHighWater`` bytes buffered (polled every ms).
    private static func send(_ burst: DataBurst, on ch: DataChannel, until deadline: Date) async {
        var n = 0
        while n < burst.count, Date() < deadline, ch.readyState == .open {
            if ch.bufferedAmount >= CallRun.burstHighWater {
                try? await Task.sleep(nanoseconds: 1_000_000)
                continue
            }
            do { try ch.send(.binary(burst.message(n))) } catch { break }
            n += 1
        }
    }

    /// What `side` received of the numbered messages, by label.
    func received(_ side: String) -> [String: NumberedCount] { counts.withLock { $0[side] ?? [:] } }
}
