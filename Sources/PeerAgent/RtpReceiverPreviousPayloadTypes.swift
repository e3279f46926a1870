// RtpReceiver's previous payload types: the numbers earlier negotiations gave its m-section and a later one renumbered, still taken from a sender that keeps them (aiortc 1.16), counted and reported once (RFC 8843 §9.2, RFC 3264 §8.3.2).
extension RtpReceiver {
    /// True when this receiver takes packets of `payloadType`: negotiated now, or by an
    /// earlier negotiation of this m-section (``configure(mid:payloadTypes:remoteSSRC:)``).
    func accepts(payloadType: UInt8) -> Bool {
        network.withLock { $0.payloadTypes.contains(payloadType) || $0.previousPayloadTypes.contains(payloadType) }
    }

    /// True when the last negotiation gave this m-section `payloadType`.
    func negotiates(payloadType: UInt8) -> Bool { network.withLock { $0.payloadTypes.contains(payloadType) } }

    /// The payload types this m-section keeps from earlier negotiations once the one for
    /// `mid` gives it `negotiated`: those it had and the new one does not; none for a new mid.
    static func previousPayloadTypes(_ n: NetworkState, mid: String, negotiated: Set<UInt8>) -> Set<UInt8> {
        n.mid == mid ? n.previousPayloadTypes.union(n.payloadTypes).subtracting(negotiated) : []
    }

    /// A packet came with `pt`, a payload type an earlier negotiation gave this m-section
    /// and the last renumbered: counted, named in the stats, and reported once (under the
    /// receiver's lock; the event goes out in `e` once it is released).
    func previousPayloadType(_ pt: UInt8, _ n: inout NetworkState, _ e: inout Effects) {
        n.stats.packetsWithPreviousPayloadType += 1
        n.stats.previousPayloadType = Int(pt)
        guard !n.reportedPreviousPayloadType, let mid = n.mid, let negotiated = n.negotiatedPayloadType else { return }
        n.reportedPreviousPayloadType = true
        e.events.append(.previousPayloadType(mid: mid, payloadType: Int(pt), negotiated: negotiated))
    }
}
