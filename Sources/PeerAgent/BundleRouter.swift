// BundleRouter: which receiver an RTP packet on the one BUNDLE transport is for (RFC 8843 §9.2).
import RTP

/// Routes RTP packets arriving on the shared BUNDLE transport to the receiver of
/// their m-section (RFC 8843 §9.2): first by the mid header extension
/// (`urn:ietf:params:rtp-hdrext:sdes:mid`, RFC 8843 §15), then by an SSRC already
/// seen or announced in the SDP (`a=ssrc`), then by payload type among the
/// transceivers that receive. A route found by mid or payload type is remembered
/// for the SSRC when the receiver takes the packet (its payload type, and its SSRC: the
/// stream's, or any while it has none), so later packets without the extension follow
/// it; at most ``learnedRoutesPerReceiver`` such routes per receiver, the oldest
/// forgotten first (announced ones are kept), so a peer sending from ever new SSRCs grows
/// nothing. A packet that goes nowhere says why (``Route``), for the drop counts.
///
/// A value type with no lock of its own: its owner (``MediaPlane``) keeps it under the
/// plane's lock, with the transceivers it routes among.
struct BundleRouter {
    /// The negotiated id (1–14) of the mid header extension; nil when not negotiated.
    var midExtensionID: UInt8?
    /// Receivers by remote SSRC: announced ones and those learned from packets taken.
    private(set) var ssrcRoutes: [UInt32: RtpReceiver] = [:]
    /// The SSRCs the remote descriptions announced (kept whatever is learned).
    private var announced: Set<UInt32> = []
    /// The SSRCs learned from packets, oldest first.
    private var learned: [UInt32] = []
    /// Most routes learned from packets kept for one receiver.
    static let learnedRoutesPerReceiver = 16

    /// Routes `ssrc` to `receiver` (an SSRC the remote description announced).
    mutating func announce(ssrc: UInt32, to receiver: RtpReceiver) {
        ssrcRoutes[ssrc] = receiver
        announced.insert(ssrc)
        learned.removeAll { $0 == ssrc }
    }

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
    mutating func forgetLearnedRoutes() {
        ssrcRoutes = [:]
        announced = []
        learned = []
    }

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
    /// renumbering re-offer the number may be another section's now). The route is learned
    /// for the packet's SSRC only when the receiver takes it (``learn(_:_:)``).
    mutating func resolve(_ packet: RTPPacket, among transceivers: [RtpTransceiver]) -> Route {
        var namedUnknownMid = false
        if let id = midExtensionID, let data = packet.headerExtension?.element(id),
           let mid = String(validating: data, as: UTF8.self) {
            if let t = transceivers.first(where: { $0.mid == mid }) {
                guard t.receiver.accepts(payloadType: packet.payloadType) else { return .unknownPayloadType }
                learn(packet.ssrc, t.receiver)
                return .receiver(t.receiver)
            }
            namedUnknownMid = true
        }
        if let r = ssrcRoutes[packet.ssrc] { return r.accepts(payloadType: packet.payloadType) ? .receiver(r) : .unknownPayloadType }
        let pt = packet.payloadType
        if let t = transceivers.first(where: { $0.currentDirection?.receives == true && $0.receiver.negotiates(payloadType: pt) })
            ?? transceivers.first(where: { $0.currentDirection?.receives == true && $0.receiver.accepts(payloadType: pt) }) {
            learn(packet.ssrc, t.receiver)
            return .receiver(t.receiver)
        }
        return namedUnknownMid ? .unknownSource : .unknownPayloadType
    }

    /// Remembers that `ssrc` goes to `receiver` (whose payload type check the packet
    /// passed), unless the receiver drops that SSRC (it has another stream's,
    /// ``RtpReceiver/takes(ssrc:)``); beyond ``learnedRoutesPerReceiver`` routes learned
    /// for the receiver, its oldest is forgotten. Nothing to do for a route known already.
    private mutating func learn(_ ssrc: UInt32, _ receiver: RtpReceiver) {
        guard ssrcRoutes[ssrc] !== receiver, receiver.takes(ssrc: ssrc) else { return }
        ssrcRoutes[ssrc] = receiver
        guard !announced.contains(ssrc) else { return }
        learned.removeAll { $0 == ssrc }
        learned.append(ssrc)
        let mine = learned.filter { ssrcRoutes[$0] === receiver }
        guard mine.count > Self.learnedRoutesPerReceiver, let oldest = mine.first else { return }
        learned.removeAll { $0 == oldest }
        ssrcRoutes[oldest] = nil
    }
}
