// The W3C RTCPeerConnection state enums (connection, ICE gathering, signaling) and the events a PeerConnection reports.
import DTLS
import ICE

/// W3C `RTCPeerConnectionState`, derived from the ICE and DTLS states.
public enum PeerConnectionState: String, Sendable, Equatable {
    case new, connecting, connected, disconnected, failed, closed
}

/// W3C `RTCIceGatheringState`.
public enum IceGatheringState: String, Sendable, Equatable {
    case new, gathering, complete
}

/// W3C `RTCSignalingState` (no provisional answers).
public enum SignalingState: String, Sendable, Equatable {
    case stable
    case haveLocalOffer = "have-local-offer"
    case haveRemoteOffer = "have-remote-offer"
    case closed
}

/// A remote track announced by negotiation (W3C `RTCTrackEvent`, reduced).
public struct RemoteTrackInfo: Sendable, Equatable {
    /// "audio" or "video".
    public var kind: String
    /// The m-section's mid.
    public var mid: String
    /// The remote SSRC when the SDP announced one.
    public var ssrc: UInt32?
    /// The negotiated RTP payload type, e.g. 96.
    public var payloadType: Int
    /// The codec's encoding name as negotiated, e.g. "VP8" or "opus".
    public var codec: String
}

/// What a ``PeerConnection`` reports, in order, on the event-loop thread.
public enum PeerConnectionEvent: Sendable, Equatable {
    /// A local candidate to trickle to the peer; `candidate == ""` is end-of-candidates.
    case localCandidate(IceCandidateInit)
    /// `icegatheringstatechange`.
    case iceGatheringState(IceGatheringState)
    /// `iceconnectionstatechange`.
    case iceConnectionState(IceConnectionState)
    /// The DTLS transport's state changed (`new` again when a new association begins).
    case dtlsState(DTLSTransportState)
    /// The peer came back with a new certificate: its description restarted ICE and carried
    /// a new fingerprint (RFC 8829 §5.11, RFC 8842 §5), so a new DTLS association begins —
    /// a new handshake in the roles this negotiation gave, the certificate checked against
    /// the new fingerprint, new SRTP keys; the SCTP association ends with the old one (its
    /// channels report `closed`, after this event) and a new one starts once DTLS connects.
    /// Reported once the transports are renewed: a data channel made in its handler opens
    /// on the new association. Media goes on into the same receivers.
    case dtlsRestarted(DtlsRestart)
    /// `connectionstatechange`; `reason` says why for `failed` (and `closed` by the peer).
    case connectionState(PeerConnectionState, reason: String?)
    /// `track`: the remote side sends on this m-section.
    case track(RemoteTrackInfo)
    /// `signalingstatechange`.
    case signalingState(SignalingState)
    /// `negotiationneeded` (W3C "update the negotiation-needed flag"), in `stable` when the
    /// flag was clear: a transceiver or data channel was added, a transceiver's
    /// ``RtpTransceiver/direction`` no longer matches what was negotiated, one was stopped,
    /// or an ICE restart was asked for; again after an offer/answer or rollback that left a
    /// change unnegotiated. A new offer carries the change.
    case negotiationNeeded
    /// A subsequent negotiation renumbered what the first agreed (payload types, the mid
    /// header extension id), which the peer's stack may do (aiortc): we follow it on what
    /// we send and receive (PROTOCOL.md "Renegotiation"); `detail` names each change.
    case remapped(String)
    /// The remote sends on m-section `mid` with `payloadType`, a number an earlier
    /// negotiation gave it and the last renumbered to `negotiated` (aiortc 1.16's re-offers
    /// do, while its running sender keeps the old numbers): the packets are taken all the
    /// same (``RtpReceiver/accepts(payloadType:)``). Once per m-section, at the first such packet.
    case previousPayloadType(mid: String, payloadType: Int, negotiated: Int)
    /// The first complete remote frame (video) or packet (audio) of a track arrived.
    case firstRemoteFrame(kind: String, mid: String)
    /// The first remote video frame was written to its file, at `at` (`systemUptime`, s;
    /// on the sink thread, after the frame came).
    case firstRemoteFrameWritten(at: Double)
    /// A remote candidate could not be used: a name (mDNS `.local`) not resolved in time
    /// or at all, or candidates beyond ``PeerConnection/maximumRemoteCandidates`` in a
    /// description; `reason` says which. The connection goes on.
    case remoteCandidateDropped(candidate: String, reason: String)
    /// A data channel event: the peer opened one, a state change, a message, the buffered
    /// amount low, or bad input from the peer (the call goes on).
    case dataChannel(DataChannelEvent)
}
