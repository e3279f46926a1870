// CallState and ExitCode: the states a call reports and the process exit codes of `peer` (docs/EVENTS.md, `peer --help`).

/// The state of a call (what `peer offer|answer|room` reports).
public enum CallState: String, Sendable, Equatable, Codable {
    /// Joining the router.
    case connecting
    /// Offer published, no answer yet (or, answering: waiting for an offer).
    case ringing
    /// Media flowing: a peer connection reached `connected`.
    case established
    /// Negotiated with no direction that carries media (all inactive).
    case hold
    /// Ended normally: duration reached, hung up, or the peer closed.
    case finished
    /// Ended with an error (router, timeout, ICE, DTLS, files); the reason says which.
    case failed
    /// Our offer was declined: the answerer is in another call.
    case busy
}

/// The process exit codes of `peer` (documented in `peer --help` and docs/EVENTS.md).
public enum ExitCode {
    /// Call done and `--min-frames` met.
    public static let ok: Int32 = 0
    /// Bad arguments.
    public static let usage: Int32 = 2
    /// Router unreachable or authentication refused.
    public static let router: Int32 = 3
    /// No offer or answer within `--timeout`.
    public static let timeout: Int32 = 4
    /// ICE failed.
    public static let ice: Int32 = 5
    /// DTLS failed.
    public static let dtls: Int32 = 6
    /// Fewer frames than `--min-frames` in a recorded file.
    public static let tooFewFrames: Int32 = 7
    /// The answerer was busy.
    public static let busy: Int32 = 8
    /// Interrupted (SIGINT/SIGTERM), after hanging up and closing the files.
    public static let interrupted: Int32 = 130

    /// What exit code `code` means, in the words of docs/EVENTS.md "Exit codes" (`peer
    /// load` gives it with each call's end).
    public static func meaning(_ code: Int32) -> String {
        switch code {
        case ok: return "passed"
        case usage: return "bad arguments or input"
        case router: return "router unreachable or authentication refused"
        case timeout: return "no offer/answer within --timeout"
        case ice: return "ICE failed"
        case dtls: return "DTLS failed"
        case tooFewFrames: return "fewer frames than --min-frames"
        case busy: return "busy: the answerer is in another call"
        case interrupted, 143: return "interrupted"
        default: return "exit code \(code)"
        }
    }
}
