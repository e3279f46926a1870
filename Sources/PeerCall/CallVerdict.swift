// CallVerdict: how a call's end becomes its exit code, final state and reason — the step a never-established call reached, and --min-frames.
import PeerAgent
import Foundation

/// The exit code, final ``CallState`` and reason of a call that is ending, decided from
/// what ended it and what the call saw. A call that never reached `established` is never
/// a pass, however it ended: it takes the exit code of the step it stopped at and its
/// reason names that step.
struct CallVerdict: Equatable {
    /// The process exit code (``ExitCode``).
    var exitCode: Int32
    /// The call's final state.
    var state: CallState
    /// Why it ended, when there is more to say than "finished".
    var reason: String?

    /// The verdict.
    /// - Parameters:
    ///   - code: the exit code the ending asked for; nil for an ordinary end (hang-up,
    ///     --duration), which is 0 unless one of the rules below says otherwise.
    ///   - state, reason: the state and reason the ending asked for.
    ///   - reached: for a call never established, the exit code and phrase of the
    ///     furthest step (``furthestStep(of:role:)``); nil when it was established.
    ///   - failure: the first failed connection's code and reason, before `established`.
    ///   - ended: the peers recorded, for --min-frames.
    ///   - minFrames: --min-frames (nil: 1 for a peer that was to send us video).
    ///   - minMessages: --min-messages (nil: no check): each recorded peer must have sent
    ///     us at least this many data channel messages (exit code 7, as --min-frames).
    init(code: Int32?, state: CallState, reason: String?, reached: (code: Int32, step: String)?,
         failure: (code: Int32, reason: String)?, ended: [PeerResult], minFrames: Int?, minMessages: Int? = nil) {
        let neverEstablished = reached.map { "the call was never established (reached: \($0.step))" }
        (exitCode, self.state, self.reason) = (code ?? ExitCode.ok, state, reason)
        if code == nil {
            if let failure {
                (exitCode, self.state) = (failure.code, .failed)
                self.reason = [failure.reason, neverEstablished].compactMap { $0 }.joined(separator: ": ")
            } else if let reached {
                (exitCode, self.state) = (reached.code, .failed)
                self.reason = [reason, neverEstablished].compactMap { $0 }.joined(separator: ": ")
            } else if let (short, required) = Self.tooFewFrames(ended, minFrames: minFrames) {
                (exitCode, self.state) = (ExitCode.tooFewFrames, .failed)
                // Nothing recorded (peer load --record none): the frames received count.
                let what = short.videoPath.isEmpty ? "the video received from \(short.peer)" : short.videoPath
                self.reason = "\(what) has \(short.videoFramesWritten) frames, fewer than --min-frames \(required)"
                    + (minFrames == nil ? " (the default when video is received; --min-frames 0 turns it off)" : "")
            } else if let minMessages, let short = ended.first(where: { $0.messagesReceived < minMessages }) {
                (exitCode, self.state) = (ExitCode.tooFewFrames, .failed)
                self.reason = "\(short.peer) sent \(short.messagesReceived) data channel messages, fewer than --min-messages \(minMessages)"
            }
        } else if code == ExitCode.ice || code == ExitCode.dtls, let neverEstablished {
            // A transport failure before `established` names the step reached too.
            self.reason = [reason, neverEstablished].compactMap { $0 }.joined(separator: ": ")
        }
    }

    /// The first recorded peer with fewer video frames than required, and the requirement:
    /// `minFrames`, or by default 1 for a peer that was to send us video.
    static func tooFewFrames(_ ended: [PeerResult], minFrames: Int?) -> (PeerResult, Int)? {
        for peer in ended {
            let required = minFrames ?? (peer.receivesVideo ? 1 : 0)
            if required > 0, peer.videoFramesWritten < required { return (peer, required) }
        }
        return nil
    }

    /// For a call that never reached `established`: the exit code of the step it stopped
    /// at (4 no offer/answer exchanged, 5 ICE not connected, 6 DTLS not connected) and a
    /// phrase naming the furthest step any of `links` reached.
    static func furthestStep(of links: [CallLink], role: CallOptions.Role) -> (code: Int32, step: String) {
        let exchanged = links.filter { $0.answered && !$0.declined }
        if exchanged.isEmpty {
            let waiting = links.contains { $0.offerer } ? "offer published, no answer"
                : (role == .answer ? "no offer received" : "no peer connected")
            return (ExitCode.timeout, waiting)
        }
        if let ice = exchanged.first(where: { $0.iceConnected }) {
            return (ExitCode.dtls, "offer/answer exchanged, ICE connected, DTLS \(ice.pc.dtlsTransportState.rawValue)")
        }
        let states = Set(exchanged.map { $0.pc.iceConnectionState.rawValue }).sorted().joined(separator: "/")
        return (ExitCode.ice, "offer/answer exchanged, ICE \(states)")
    }
}
