// BundleRouter: which receiver an RTP packet on the one BUNDLE transport is for (RFC 8843 §9.2).
import RTP

/// Routes RTP packets arriving on the shared BUNDLE transport to the receiver of
/// their m-section (RFC 8843 §9.2): first by the mid header extension
/// (`urn:ietf:params:rtp-hdrext:sdes:mid`, RFC 8843 §15), then by an SSRC already
/// seen or announced in the SDP (`a=ssrc`), then by payload type among the
/// transceivers that receive. A route found by mid or payload type is remembered
/// for the SSRC, so later packets without the extension follow it. A packet that goes
/// nowhere says why (``Route``), for the drop counts.
///
/// A value type with no lock of its own: its owner (``MediaPlane``) keeps it under the
/// plane's lock, with the transceivers it routes among.
struct BundleRouter {
    /// The negotiated id (1–14) of the mid header extension; nil when not negotiated.
    var midExtensionID: UInt8?
    /// Receivers by remote SSRC: announced ones and those already routed.
    private(set) var ssrcRoutes: [UInt32: RtpReceiver] = [:]

    /// Routes `ssrc` to `receiver` (an SSRC the remote description announced).
    mutating func announce(ssrc: UInt32, to receiver: RtpReceiver) { ssrcRoutes[ssrc] = receiver }

    /// Where a packet goes, or why nowhere.
    enum Route {
        /// To this receiver.
        case receiver(RtpReceiver)
        /// Its m-section (by mid or SSRC) takes no packet of its payload type; or, with
        /// neither a mid nor a known SSRC, no receiving m-section does.
        case unknownPayloadType
        /// Its mid names no m-section of ours, and neither its SSRC nor its payload type routes it.
        case unknownSource
    }
    /// Forgets every SSRC route (the peer's new process, a new DTLS association, sends from
    /// SSRCs of its own: its description announces them again, or packets teach them).
    mutating func forgetLearnedRoutes() { ssrcRoutes = [:] }

    /// The receiver for `packet` among `transceivers`, or nil when none takes it (the
    /// packet is dropped): ``resolve(_:among:)``'s receiver.
    mutating func route(_ packet: RTPPacket, among transceivers: [RtpTransceiver]) -> RtpReceiver? {
        if case let .receiver(r) = resolve(packet, among: transceivers) { r } else { nil }
    }

    /// Where `packet` goes among `transceivers`: by mid, else SSRC, else payload type — and
    /// in every case only with a payload type its m-section takes (a receiver ignores
    /// others, RFC 3550 §5.1): one it negotiated, or one an earlier negotiation gave it
    /// (``RtpReceiver/accepts(payloadType:)``). By payload type alone, a section that
    /// negotiates the number now wins over one that kept it from before (after a
    /// renumbering re-offer the number may be another section's now).
    mutating func resolve(_ packet: RTPPacket, among transceivers: [RtpTransceiver]) -> Route {
        var namedUnknownMid = false
        if let id = midExtensionID, let data = packet.headerExtension?.element(id),
           let mid = String(validating: data, as: UTF8.self) {
            if let t = transceivers.first(where: { $0.mid == mid }) {
                ssrcRoutes[packet.ssrc] = t.receiver
                return t.receiver.accepts(payloadType: packet.payloadType) ? .receiver(t.receiver) : .unknownPayloadType
            }
            namedUnknownMid = true
        }
        if let r = ssrcRoutes[packet.ssrc] { return r.accepts(payloadType: packet.payloadType) ? .receiver(r) : .unknownPayloadType }
        let pt = packet.payloadType
        if let t = transceivers.first(where: { $0.currentDirection?.receives == true && $0.receiver.negotiates(payloadType: pt) })
            ?? transceivers.first(where: { $0.currentDirection?.receives == true && $0.receiver.accepts(payloadType: pt) }) {
            ssrcRoutes[packet.ssrc] = t.receiver
            return .receiver(t.receiver)
        }
        return namedUnknownMid ? .unknownSource : .unknownPayloadType
    }
}
