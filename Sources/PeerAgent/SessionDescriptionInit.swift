// W3C RTCSessionDescriptionInit and RTCIceCandidateInit: what signaling carries (RFC 8829 JSEP, RFC 8838 trickle).
import Foundation

/// W3C `RTCSdpType` for the types `peer` uses.
public enum SdpType: String, Sendable, Equatable, Codable {
    case offer, answer
}

/// W3C `RTCSessionDescriptionInit`: a type and the SDP text.
public struct SessionDescriptionInit: Sendable, Equatable, Codable {
    /// Offer or answer.
    public var type: SdpType
    /// The SDP (RFC 8866), CRLF line ends.
    public var sdp: String
    /// Creates a description.
    public init(type: SdpType, sdp: String) { self.type = type; self.sdp = sdp }
}

/// W3C `RTCIceCandidateInit`: one trickled candidate (RFC 8838), or end-of-candidates
/// when `candidate` is empty.
public struct IceCandidateInit: Sendable, Equatable, Codable {
    /// `candidate:…` (the attribute value), or "" for end-of-candidates.
    public var candidate: String
    /// The m-section's mid.
    public var sdpMid: String?
    /// The m-section's index (0-based); `peer` sends 0 (everything is bundled on the first).
    public var sdpMLineIndex: Int?
    /// The ICE ufrag the candidate belongs to.
    public var usernameFragment: String?
    /// Creates a candidate value.
    public init(candidate: String, sdpMid: String? = nil, sdpMLineIndex: Int? = nil, usernameFragment: String? = nil) {
        self.candidate = candidate
        self.sdpMid = sdpMid
        self.sdpMLineIndex = sdpMLineIndex
        self.usernameFragment = usernameFragment
    }
    /// True for end-of-candidates.
    public var isEndOfCandidates: Bool { candidate.trimmingCharacters(in: .whitespaces).isEmpty }
}
