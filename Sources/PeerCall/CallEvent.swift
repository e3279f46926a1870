// CallEvent: what a Call reports while it runs (the `--json` events).

import PeerAgent

/// What a ``Call`` reports while it runs (the `--json` events).
public enum CallEvent: Sendable {
    /// The call's state changed; `peer` is the remote user for per-peer states in a room.
    case state(CallState, peer: String?, reason: String?)
    /// A signaling message could not be used; it was dropped and the call goes on.
    case signalingError(topic: String, reason: String)
    /// A candidate we sent or received.
    case candidate(peer: String, local: Bool, candidate: String)
    /// The W3C connection state of the connection with `peer` changed (`connecting`,
    /// `connected`, `disconnected` when the path went silent, `failed`, `closed`).
    case connectionState(peer: String, state: String, reason: String?)
    /// A remote candidate from `peer` was dropped (a `.local` name that did not resolve
    /// in time, or one beyond the 100 a connection takes); the call goes on with the others.
    case candidateDropped(peer: String, candidate: String, reason: String)
    /// A remote track was negotiated.
    case track(peer: String, kind: String, mid: String, codec: String)
    /// Periodic counts: video frames and audio packets recorded so far from `peer`.
    case frames(peer: String, video: Int, audio: Int, figures: LinkProgress)
    /// `--record`'s file of `peer` was closed: its path, whether its tracks were placed by
    /// the sender's RTCP reports (else by arrival times), and the problems met.
    case recorded(peer: String, path: String, bySenderReports: Bool, problems: [String])
    /// Once a second with the frames: the figures of a status line (``LinkProgress``).
    case progress(peer: String, LinkProgress)
    /// An offer arrived while in a call and was declined (we stay in our call).
    case busy(from: String, reason: String)
    /// A room member announced itself (`callme`), with its user id.
    case peerJoined(String)
    /// A room member left (`close`), with its user id.
    case peerLeft(String)
    /// The router connection dropped or came back (the call goes on).
    case router(String)
    /// A step of call set-up, for timing: `joined` (router WELCOME), `offerPublished`,
    /// `offerReceived`, `answerPublished`, `answerReceived`, `iceConnected`,
    /// `dtlsConnected`, `firstRemoteFrame` (video, complete), `firstRemoteFrameWritten`
    /// (in its file), `firstRemoteAudio`; `at` is when it
    /// happened (`ProcessInfo.systemUptime`, s), which a busy call task may report later.
    case milestone(String, peer: String?, at: Double)
    /// An offer/answer exchange during the call completed (`shared/PROTOCOL.md`
    /// "Renegotiation"): who offered (`local` or `remote`), why (the action, or `remote`),
    /// the negotiated directions from our side by m-section kind before and after, and how
    /// long from the offer (published or received) to the answer applied, ms.
    case renegotiated(peer: String, offerer: String, reason: String, before: [String: String], after: [String: String], ms: Double)
    /// A renegotiation did not happen and the call goes on as before: our re-offer got no
    /// answer within `--timeout` and was rolled back, was rolled back for the peer's in
    /// glare, or the peer's re-offer was refused (`reason` names the line) or ignored.
    case renegotiationFailed(peer: String, reason: String)
    /// `peer`'s renegotiation renumbered payload types or header-extension ids (`detail`);
    /// we follow it.
    case remapped(peer: String, detail: String)
    /// `peer` sends on m-section `mid` with `payloadType`, which its renegotiation
    /// renumbered to `negotiated` (aiortc 1.16 keeps its old numbers); we take the packets
    /// all the same. Once per m-section (``PeerConnectionEvent/previousPayloadType(mid:payloadType:negotiated:)``).
    case previousPayloadType(peer: String, mid: String, payloadType: Int, negotiated: Int)
    /// The result of an action (`--at`, `--control`): `ok`, or why not; `origin` says
    /// where it came from (`at 3` or `control`, with the command's id).
    case action(CallAction, ok: Bool, detail: String?, origin: String)
    /// ICE on the connection with `peer` stayed `disconnected` or failed; we restart it
    /// (new credentials, a re-offer) because of `reason`.
    case iceRestarting(peer: String, reason: String)
    /// `peer` came back with a new certificate (its process restarted, its page reloaded):
    /// an ICE restart with a new fingerprint began a new DTLS association on the call's
    /// connection (RFC 8829 §5.11, RFC 8842 §5) — new handshake, new SRTP keys, a new SCTP
    /// association (the old channels closed); recordings and stats go on.
    case dtlsRestarted(peer: String, DtlsRestart)
    /// ICE connected again after `seconds` of outage, `restarted` when an ICE restart (ours,
    /// or the peer's during the outage) brought it back; otherwise the path came back.
    case iceRecovered(peer: String, seconds: Double, restarted: Bool)
    /// A data channel of the connection with `peer`: the peer opened it (`datachannel`,
    /// with its order and reliability in `detail`) or its state changed (`open`,
    /// `closing`, `closed`); `id` is its SCTP stream id.
    case dataChannel(peer: String, label: String, id: Int?, state: String, detail: String?)
    /// A message from `peer` on the channel `label` (numbered `--data-burst` messages are
    /// counted instead, in `dataSummary`).
    case dataMessage(peer: String, label: String, message: DataChannelMessage)
    /// Something on a data channel could not be used or sent (the call goes on).
    case dataError(peer: String, label: String?, reason: String)
    /// The result of a `send` (`--at …:send:…`, the `send` control command).
    case dataSendResult(label: String, ok: Bool, detail: String?, origin: String)
    /// A command arrived on the `control` channel from `peer` (its answer goes back on the channel).
    case dataControl(peer: String, action: String)
    /// A channel's counts at the end: messages and bytes each way, and what arrived of the
    /// peer's numbered messages.
    case dataSummary(peer: String, label: String, messagesSent: Int, bytesSent: Int, messagesReceived: Int, bytesReceived: Int,
                     numbered: NumberedCount?)
    /// Final statistics of the connection with `peer`.
    case stats(peer: String, report: StatsReport, videoPath: String, audioPath: String)
}

/// One second of a link, for a status line: video frames in and out so far, kbit/s each
/// way over the last interval (transport bytes: SRTP, SRTCP, DTLS), the RTCP round trip
/// (ms) and the share of inbound RTP packets lost so far (RFC 3550 A.3, %); and for
/// `peer load`'s aggregates, jitter, freezes and packet counts.
public struct LinkProgress: Sendable, Equatable {
    /// Video frames written from the peer (inbound `framesWritten`) and sent to it.
    public var framesIn = 0, framesOut = 0
    /// Transport kbit/s each way over the last interval.
    public var kbpsIn = 0.0, kbpsOut = 0.0
    /// The RTCP round trip, ms (nil before one).
    public var rttMs: Double?
    /// Inbound RTP packets lost so far, % of those expected.
    public var lossPercent = 0.0
    /// Video frames per second each way (inbound rendered, outbound encoded), nil before.
    public var fpsIn: Double?, fpsOut: Double?
    /// End-to-end latency of the last second from the frame markers, ms (nil without).
    public var latencyMs: Double?
    /// The largest interarrival jitter of the inbound RTP streams (RFC 3550 A.8), ms
    /// (nil before a packet).
    public var jitterMs: Double?
    /// Video freezes so far (W3C `freezeCount` of the inbound video; 0 without).
    public var freezeCount = 0
    /// Inbound video frames complete so far (W3C `framesReceived`), whether written or not.
    public var framesReceived = 0
    /// RTP packets so far, all streams: sent to the peer, received from it, and lost on
    /// the way from it (RFC 3550 A.3, cumulative, never below 0).
    public var packetsSent = 0, packetsReceived = 0, packetsLost = 0
}
