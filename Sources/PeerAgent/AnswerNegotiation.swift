// AnswerNegotiation: an answer (ours or theirs) applied to the transceivers — mids, directions, payload types, SSRC routes — and the DTLS role it gives (RFC 8829 §5.10–5.11, RFC 8842 §5).
import DTLS
import SDP

/// Applying a negotiated answer to a connection's transceivers (JSEP, RFC 8829: the
/// offerer applies the remote answer, the answerer its own).
enum AnswerNegotiation {
    /// What applying an answer gave.
    struct Outcome {
        /// A `track` event for each accepted m-section that receives (from our side).
        var tracks: [PeerConnectionEvent] = []
        /// How many m-sections were accepted (a codec in common, not port 0).
        var accepted = 0
        /// For each rejected m-section, why, naming the codecs offered and ours.
        var rejections: [String] = []
        /// What a subsequent answer renumbered (payload type, mid extension id), in words.
        var remaps: [String] = []
    }

    /// Applies `answer` (a first or a subsequent one) to `transceivers`: each m-section with
    /// a mid takes its transceiver (the offerer's by mid; the answerer's by mid, else by
    /// kind, in order) and sets its mid, its direction from our side (`.inactive` when
    /// rejected), the sender's payload type and mid extension and the receiver's payload
    /// types and announced SSRC (a `track` event when it starts to receive);
    /// `router` learns the mid extension id and the announced SSRCs. `offer` names the
    /// codecs in a rejection; `remote` (the description from the peer) gives the SSRCs.
    static func apply(_ answer: SessionDescription, offer: SessionDescription?, remote: SessionDescription?,
                      to transceivers: [RtpTransceiver], weAreOfferer: Bool, router: inout BundleRouter) -> Outcome {
        var outcome = Outcome()
        var used: Set<ObjectIdentifier> = []
        for (index, m) in answer.media.enumerated() {
            guard let mid = m.mid else { continue }
            let t: RtpTransceiver?
            if weAreOfferer {
                t = transceivers.first { $0.mid == mid }
            } else {
                t = transceivers.first { $0.kind == m.kind && $0.mid == mid }
                    ?? transceivers.first { $0.kind == m.kind && !used.contains(ObjectIdentifier($0)) && $0.mid == nil }
            }
            guard let t else { continue }
            used.insert(ObjectIdentifier(t))
            t.mid = mid
            guard !m.isRejected, let pt = m.payloads.first?.payloadType else {
                t.currentDirection = .inactive
                let offered = offer.flatMap { $0.media.indices.contains(index) ? $0.media[index] : nil }
                let names = (offered?.payloads ?? []).compactMap { p in p.name.map { "\($0)/\(p.clockRate ?? 0)" } }
                outcome.rejections.append("mid \(mid) \(m.kind): no common codec (offered \(names.isEmpty ? "none" : names.joined(separator: ", ")); "
                    + "peer supports \(m.kind == .video ? "VP8/90000" : "opus/48000/2"))")
                continue
            }
            outcome.accepted += 1
            let ours = weAreOfferer ? m.effectiveDirection.reversed : m.effectiveDirection
            let receivedBefore = t.currentDirection?.receives == true
            t.currentDirection = ours
            if let was = t.payloadType, was != pt {
                outcome.remaps.append("mid \(mid): payload type \(was) is now \(pt)")
            }
            t.payloadType = pt
            if let ext = m.extmaps.first(where: { $0.uri == JSEP.midExtension }), (1...14).contains(ext.id) {
                if let was = router.midExtensionID, was != UInt8(ext.id) {
                    outcome.remaps.append("mid header extension id \(was) is now \(ext.id)")
                }
                router.midExtensionID = UInt8(ext.id)
            }
            t.sender.configure(payloadType: pt, mid: mid, midExtensionID: router.midExtensionID.map(Int.init))
            let remoteSSRC = remote?.media.first { $0.mid == mid }?.ssrcs.first?.ssrc
            t.receiver.configure(mid: mid, payloadTypes: m.payloads.map(\.payloadType), remoteSSRC: remoteSSRC)
            if let remoteSSRC { router.announce(ssrc: remoteSSRC, to: t.receiver) }
            if ours.receives, !receivedBefore {
                outcome.tracks.append(.track(RemoteTrackInfo(kind: "\(m.kind)", mid: mid, ssrc: remoteSSRC, payloadType: pt,
                                                             codec: m.payloads.first?.name ?? "")))
            }
        }
        return outcome
    }

    /// Our DTLS role (RFC 8842 §5): the answerer's `a=setup` decides — `passive` makes the
    /// offerer the client; `active` (or none) makes the answerer the client.
    static func dtlsRole(answer: SessionDescription, weAreOfferer: Bool) -> DTLSRole {
        let answerSetup = answer.media.first { !$0.isRejected }?.setup ?? answer.setup ?? .active
        if weAreOfferer { return answerSetup == .passive ? .client : .server }
        return answerSetup == .passive ? .server : .client
    }
}
