// BundleRouter: which receiver an RTP packet on the one BUNDLE transport is for (RFC 8843 §9.2).
import RTP

/// Routes RTP packets arriving on the shared BUNDLE transport to the receiver of
/// their m-section (RFC 8843 §9.2): first by the mid header extension
/// (`urn:ietf:params:rtp-hdrext:sdes:mid`, RFC 8843 §15), then by an SSRC already
/// seen or announced in the SDP (`a=ssrc`), then by payload type among the
/// transceivers that receive. A route found by mid or payload type is remembered
/// for the SSRC, so later packets without the extension follow it.
///
/// A value type with no lock of its own: its owner (``PeerConnection``) keeps it
/// under the connection's lock.
struct BundleRouter {
    /// The negotiated id (1–14) of the mid header extension; nil when not negotiated.
    var midExtensionID: UInt8?
    /// Receivers by remote SSRC: announced ones and those already routed.
    private(set) var ssrcRoutes: [UInt32: RtpReceiver] = [:]

    /// Routes `ssrc` to `receiver` (an SSRC the remote description announced).
    mutating func announce(ssrc: UInt32, to receiver: RtpReceiver) { ssrcRoutes[ssrc] = receiver }

    /// Forgets every SSRC route (the peer's new process, a new DTLS association, sends from
    /// SSRCs of its own: its description announces them again, or packets teach them).
    mutating func forgetLearnedRoutes() { ssrcRoutes = [:] }

    /// The receiver for `packet` among `transceivers`, or nil when none takes it (the
    /// packet is dropped): by mid, else SSRC, else payload type — and in every case only
    /// with a payload type its m-section negotiated (a receiver ignores others, RFC 3550
    /// §5.1; after a renumbering re-offer, the old number no longer plays).
    mutating func route(_ packet: RTPPacket, among transceivers: [RtpTransceiver]) -> RtpReceiver? {
        if let id = midExtensionID, let data = packet.headerExtension?.element(id),
           let mid = String(validating: data, as: UTF8.self),
           let t = transceivers.first(where: { $0.mid == mid }) {
            ssrcRoutes[packet.ssrc] = t.receiver
            return t.receiver.accepts(payloadType: packet.payloadType) ? t.receiver : nil
        }
        if let r = ssrcRoutes[packet.ssrc] { return r.accepts(payloadType: packet.payloadType) ? r : nil }
        if let t = transceivers.first(where: { $0.currentDirection?.receives == true && $0.receiver.accepts(payloadType: packet.payloadType) }) {
            ssrcRoutes[packet.ssrc] = t.receiver
            return t.receiver
        }
        return nil
    }
}
