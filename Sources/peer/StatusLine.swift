// StatusLine: the one line `peer` rewrites on stderr each second of a call — state, video frames in and out, kbit/s each way, RTT, loss — shown when stderr is a terminal or with --progress.
import Bytes
import EventLoop
import Foundation
import PeerCall
import Synchronization

/// The status line. Every other stderr line (``say(_:level:)``, the log's) goes through
/// ``emit(_:)``, which wipes it first, so the line never mixes with them. Thread-safe.
final class StatusLine: Sendable {
    /// The process's one status line.
    static let shared = StatusLine()

    private struct State {
        var enabled = false
        var showing = false
        var callState = "connecting"
        var peers: [String: LinkProgress] = [:]
    }
    private let state = Mutex(State())

    /// Shows the line from now on (when the log level takes info lines).
    func enable() { state.withLock { $0.enabled = true } }

    /// The call's state, shown first.
    func setState(_ s: String) { state.withLock { $0.callState = s } }

    /// True once ``enable()`` was called.
    var isEnabled: Bool { state.withLock { $0.enabled } }

    /// Draws `text` as the line (`peer load`'s aggregates), when enabled and the log takes
    /// info lines.
    func show(_ text: String) {
        state.withLock { s in
            guard s.enabled, Log.enabled(.info) else { return }
            s.showing = true
            FileHandle.standardError.write(Data(("\r\u{1B}[K" + text).utf8))
        }
    }

    /// Ends the line (a newline after it when it shows), so what follows starts a line of its own.
    func finish() {
        state.withLock { s in
            guard s.showing else { return }
            s.showing = false
            FileHandle.standardError.write(Data("\n".utf8))
        }
    }

    /// New figures of `peer`: the line is drawn again (written with the lock held, so it
    /// never lands inside another line).
    func update(peer: String, _ p: LinkProgress) {
        state.withLock { s in
            guard s.enabled, Log.enabled(.info) else { return }
            s.peers[peer] = p
            s.showing = true
            FileHandle.standardError.write(Data(("\r\u{1B}[K" + Self.text(s.callState, s.peers)).utf8))
        }
    }

    /// Writes `line` (newline included) to stderr, wiping the status line first when it
    /// shows; the next second draws it again. Every other stderr line goes through here.
    func emit(_ line: String) {
        state.withLock { s in
            let wipe = s.showing ? "\r\u{1B}[K" : ""
            s.showing = false
            FileHandle.standardError.write(Data((wipe + line).utf8))
        }
    }

    /// `established · offerer: video 120 in / 118 out · 950 kbit/s in, 1020 out · RTT 0.4 ms · loss 0.0 %`
    static func text(_ callState: String, _ peers: [String: LinkProgress]) -> String {
        let parts = peers.sorted { $0.key < $1.key }.map { peer, p in
            "\(Untrusted.quoted(peer, limit: 40)): video \(p.framesIn) in / \(p.framesOut) out · \(Int(p.kbpsIn.rounded())) kbit/s in, \(Int(p.kbpsOut.rounded())) out"
                + " · RTT " + (p.rttMs.map { String(format: "%.1f ms", $0) } ?? "-") + String(format: " · loss %.1f %%", p.lossPercent)
        }
        return ([callState] + parts).joined(separator: " · ")
    }
}
