// CallResult and PeerResult: the outcome of a call and what was recorded from each remote peer.

import PeerAgent

/// The outcome of ``Call/run()``.
public struct CallResult: Sendable {
    /// The process exit code (``ExitCode``).
    public var exitCode: Int32
    /// The final state.
    public var state: CallState
    /// Why it failed or was cut short, if so.
    public var reason: String?
    /// One entry per remote peer the call connected with.
    public var peers: [PeerResult]
}

/// What was recorded from one remote peer.
public struct PeerResult: Sendable {
    /// The remote peer: its user id (room) or "offerer"/"answerer" (legacy).
    public var peer: String
    /// The IVF file of its video (empty when nothing was recorded: ``CallOptions/recordsMedia``).
    public var videoPath: String
    /// The Ogg Opus file of its audio (empty when nothing was recorded).
    public var audioPath: String
    /// Final statistics.
    public var stats: StatsReport
    /// Video frames written to the IVF file (without recording: frames received).
    public var videoFramesWritten: Int
    /// Opus packets written to the Ogg file (without recording: packets received).
    public var audioPacketsWritten: Int
    /// True when the negotiation had this peer send us video (its m-section's direction
    /// toward us is sendrecv or sendonly), so its IVF should hold frames.
    public var receivesVideo: Bool
    /// Data channel messages received from this peer, every channel.
    public var messagesReceived = 0
}
