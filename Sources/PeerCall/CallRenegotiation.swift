// CallRenegotiation: offers and answers during a call (shared/PROTOCOL.md "Renegotiation", RFC 8829 §5.2.2/§5.3.2) — actions, re-offers and their answers, glare (W3C perfect negotiation), hold state.
import PeerAgent
import Foundation
import SDP

extension CallRun {
    // MARK: Actions

    /// Takes `action` (from `--at` or `--control`) on every established connection and
    /// reports the result; a hang-up ends the call.
    func act(_ action: CallAction, origin: String) async -> CallResult? {
        await perform(action, origin: origin).result
    }

    /// ``act(_:origin:)``, also returning why the action was refused (nil when it was taken).
    func perform(_ action: CallAction, origin: String) async -> (result: CallResult?, refusal: String?) {
        if action == .hangup {
            onEvent(.action(action, ok: true, detail: nil, origin: origin))
            return (await end(code: nil, state: .finished, reason: "hung up (\(origin))"), nil)
        }
        let targets = links.values.filter(\.established).sorted { $0.peer < $1.peer }
        guard !targets.isEmpty, !finishing else {
            onEvent(.action(action, ok: false, detail: "the call is not established", origin: origin))
            return (nil, "the call is not established")
        }
        var refusals: [String] = []
        for link in targets {
            // What a rollback of the re-offer restores: the wishes before this action (or
            // before the first of the actions that re-offer will carry).
            let before = link.wishes
            if let refusal = change(link, for: action) {
                refusals.append(profile.isMesh ? "\(link.peer): \(refusal)" : refusal)
                continue
            }
            if link.reoffer == nil, link.wanted.isEmpty, link.rollbackWishes == nil { link.rollbackWishes = before }
            await renegotiate(link, reason: action.rawValue)
        }
        let refusal = refusals.isEmpty ? nil : refusals.joined(separator: "; ")
        onEvent(.action(action, ok: refusals.isEmpty, detail: refusal, origin: origin))
        return (nil, refusal)
    }

    /// Changes the wished directions of `link`'s transceivers for `action` (nothing is sent
    /// yet); returns why not, when the action does not apply.
    private func change(_ link: CallLink, for action: CallAction) -> String? {
        let transceivers = link.pc.allTransceivers
        switch action {
        case .hold:
            guard !link.localHold else { return "already on hold" }
            link.directionsBeforeHold = transceivers.map(\.direction)
            link.localHold = true
            // RFC 3264 §8.4: sendrecv → sendonly, recvonly → inactive.
            for t in transceivers { t.direction = Direction(sends: t.direction.sends, receives: false) }
        case .unhold:
            guard link.localHold else { return "not on hold" }
            link.localHold = false
            for (t, d) in zip(transceivers, link.directionsBeforeHold ?? []) { t.direction = d }
            link.directionsBeforeHold = nil
        case .videoOff, .audioOff, .videoOn, .audioOn:
            let kind: MediaKind = action == .videoOff || action == .videoOn ? .video : .audio
            let on = action == .videoOn || action == .audioOn
            if on, kind == .video ? options.video == .none : options.audio == .none {
                return "nothing to send as \(kind) (--\(kind) none)"
            }
            for (i, t) in transceivers.enumerated() where t.kind == kind {
                t.direction = Direction(sends: on, receives: t.direction.receives)
                // Unhold restores the directions before the hold, with this change in them.
                if let d = link.directionsBeforeHold?[i] { link.directionsBeforeHold?[i] = Direction(sends: on, receives: d.receives) }
            }
        case .iceRestart:
            link.pc.restartIce()
        case .hangup:
            break
        }
        return nil
    }

    // MARK: Our re-offers

    /// Re-offers to `link`'s peer for `reason` when the connection is `stable` with no
    /// re-offer of ours waiting; otherwise remembers the reason for when it is.
    func renegotiate(_ link: CallLink, reason: String) async {
        guard link.reoffer == nil, link.pc.signalingState == .stable else {
            link.wanted.append(reason)
            return
        }
        let snapshot = link.rollbackWishes ?? link.wishes
        link.rollbackWishes = nil
        let offer: SessionDescriptionInit
        do {
            offer = try link.pc.createOffer()
            try link.pc.setLocalDescription(offer)
        } catch {
            onEvent(.renegotiationFailed(peer: link.peer, reason: "re-offer (\(reason)) not made: \(error)"))
            return
        }
        let published = link.pc.localDescription ?? offer
        let now = Date()
        let current = link.pc.currentLocalDescription.flatMap { try? SessionDescription(parsing: $0.sdp) }.flatMap(Self.ufrag(of:))
        let restarts = (try? SessionDescription(parsing: offer.sdp)).flatMap(Self.ufrag(of:)) != current
        link.reoffer = PendingReoffer(reason: reason, offer: published, sentAt: now, lastPublish: now, before: directions(of: link),
                                      wishes: snapshot, restartsIce: restarts)
        await publish(published, on: link)
    }

    /// The peer's answer to our re-offer: applied, reported, and the next renegotiation
    /// started if one is wanted.
    func reanswered(_ answer: SessionDescriptionInit, on link: CallLink) async {
        guard let pending = link.reoffer else { return }
        // Only the peer's: its session id, or its fingerprint (a busy decline to a third
        // party, or a stray answer, is not ours to apply) — or, to our ICE restart, the
        // peer back with a new certificate (its new process answered), where the profile
        // takes it so (room: the user it names; legacy: while the connection is down).
        let parsedAnswer = try? SessionDescription(parsing: answer.sdp)
        let back = pending.restartsIce && profile.takesPeerBack(connectionDown: link.isDown)
            && parsedAnswer.map { InCallOffer.isNewCertificate($0, fingerprints: link.remoteFingerprints, ufrag: link.remoteUfrag) } == true
        guard back || InCallOffer.isFromPeer(answer.sdp, remoteId: link.remoteSession?.id, fingerprints: link.remoteFingerprints) else { return }
        do { try link.pc.setRemoteDescription(answer) } catch {
            onEvent(.signalingError(topic: profile.answerTopic, reason: "answer to our re-offer (\(pending.reason)) from \(link.peer) refused: \(error)"))
            rollBack(link, because: "its answer was refused")
            return
        }
        link.reoffer = nil
        let parsed = parsedAnswer
        took(answer.sdp, parsed: parsed, on: link)
        // The peer may hold us in its answer too (after glare, its hold met by our offer):
        // it receives nothing of what we offered to send (RFC 3264 §8.4).
        if let parsed, let start = link.remoteReceivedAtStart, link.pc.allTransceivers.contains(where: \.direction.sends) {
            link.remoteHolds = start && !Self.receives(parsed)
        }
        onEvent(.renegotiated(peer: link.peer, offerer: "local", reason: pending.reason, before: pending.before,
                              after: directions(of: link), ms: Date().timeIntervalSince(pending.sentAt) * 1000))
        answerPendingControl(link, ok: true, reason: nil)
        updateHold(link)
        await renegotiateIfNeeded(link)
    }

    /// Our re-offer is dropped (no answer in time, or a refused one): the connection goes
    /// back to `stable` with what was negotiated, and the wishes of before it.
    func rollBack(_ link: CallLink, because why: String) {
        guard let pending = link.reoffer else { return }
        link.reoffer = nil
        try? link.pc.rollback()
        link.wishes = pending.wishes
        let queued = link.wanted.isEmpty ? "" : " (the changes waiting for it, \(link.wanted.joined(separator: ",")), are undone too)"
        link.wanted = []
        link.rollbackWishes = nil
        onEvent(.renegotiationFailed(peer: link.peer, reason: "our re-offer (\(pending.reason)) was rolled back: \(why); the call goes on as before\(queued)"))
        answerPendingControl(link, ok: false, reason: "the re-offer was rolled back: \(why)")
    }

    /// Timers of re-offers (each tick): republished while unanswered, rolled back after `--timeout`.
    func reofferTick(_ now: Date) async {
        for link in links.values.sorted(by: { $0.peer < $1.peer }) {
            guard let pending = link.reoffer else { continue }
            if now.timeIntervalSince(pending.sentAt) >= options.timeoutSeconds {
                rollBack(link, because: "no answer within --timeout \(formatSeconds(options.timeoutSeconds)) s")
            } else if now.timeIntervalSince(pending.lastPublish) >= options.offerRepeatSeconds {
                link.reoffer?.lastPublish = now
                await publish(pending.offer, on: link)
            }
        }
    }

    /// Starts the renegotiation that was wanted while another was under way, once `stable`
    /// (W3C: negotiation needed), or the one the connection needs.
    func renegotiateIfNeeded(_ link: CallLink) async {
        guard link.reoffer == nil, link.pc.signalingState == .stable else { return }
        let wanted = link.wanted
        link.wanted = []
        guard link.pc.isNegotiationNeeded else { return }
        await renegotiate(link, reason: wanted.isEmpty ? "negotiationneeded" : wanted.joined(separator: ","))
    }

    // MARK: The peer's re-offers

    /// An offer from a peer we are in a call with: a renegotiation is applied and answered
    /// (glare by the perfect-negotiation rule), a repeat answered again, a stale one
    /// ignored, the peer back with a new certificate applied as an ICE restart with a new
    /// DTLS association where the profile takes it so and it fits the connection, another
    /// caller's handed to the profile's rule (busy or replace).
    func inCallOffer(_ offer: SessionDescriptionInit, on link: CallLink) async {
        let parsed = try? SessionDescription(parsing: offer.sdp)
        var newCertificate = false
        switch InCallOffer.classify(offer.sdp, parsed: parsed, remote: link.remoteSession, fingerprints: link.remoteFingerprints,
                                    ufrag: link.remoteUfrag, answered: link.answeredIdentity) {
        case .repeated:
            // The answer we gave it (not the local description: that may be our own re-offer now).
            if let answer = link.answer { await publish(answer, on: link) }
            return
        case let .stale(latest, offered):
            onEvent(.renegotiationFailed(peer: link.peer, reason: "stale offer from \(link.peer) ignored: o= version \(offered) is below its latest, \(latest)"))
            return
        case .newCertificate where !(link.offerer && !profile.isMesh) && profile.takesPeerBack(connectionDown: link.isDown):
            newCertificate = true
        case .otherCaller, .newCertificate:
            // Legacy: the offerer ignores offers not from its peer; the answerer declines.
            if !profile.isMesh, link.offerer { return }
            await offered(offer, from: link.peer, inCall: true)
            return
        case .renegotiation:
            break
        }
        if link.reoffer != nil || link.pc.signalingState == .haveLocalOffer {
            // The peer back with a new certificate: our pending offer went to its old session,
            // which is gone; it is rolled back whatever our side (its change is wanted still).
            guard newCertificate || profile.isPolite(toward: link.peer, weOfferedFirst: link.offerer) else {
                onEvent(.renegotiationFailed(peer: link.peer, reason: "glare: \(link.peer)'s re-offer crossed ours; we are the impolite side and ignore it"))
                return
            }
            let ours = link.reoffer?.reason ?? "offer"
            link.reoffer = nil
            try? link.pc.rollback()
            link.wanted.append(ours)
            onEvent(.renegotiationFailed(peer: link.peer, reason: newCertificate
                ? "our re-offer (\(ours)) rolled back: \(link.peer) is back with a new certificate and offers"
                : "glare: our re-offer (\(ours)) rolled back for \(link.peer)'s (we are the polite side)"))
        }
        let before = directions(of: link)
        let started = Date()
        let restart = parsed.flatMap { Self.ufrag(of: $0) } != link.remoteUfrag
        do { try link.pc.setRemoteDescription(offer) } catch {
            if newCertificate {
                // It does not fit this connection (other sections): someone else, or the peer
                // with another set-up: the profile's rule as for another caller.
                onEvent(.renegotiationFailed(peer: link.peer, reason: "offer from \(link.peer) with a new certificate does not fit the call's connection: \(error)"))
                if !profile.isMesh, link.offerer { return }
                await offered(offer, from: link.peer, inCall: true)
                return
            }
            onEvent(.signalingError(topic: profile.offerTopic, reason: "re-offer from \(link.peer) refused: \(error)"))
            onEvent(.renegotiationFailed(peer: link.peer, reason: "re-offer from \(link.peer) refused; the call keeps its state"))
            await renegotiateIfNeeded(link)  // ours, if glare rolled it back for this one
            return
        }
        let answer: SessionDescriptionInit
        do {
            answer = try link.pc.createAnswer()
            try link.pc.setLocalDescription(answer)
        } catch {
            try? link.pc.rollback()
            onEvent(.signalingError(topic: profile.offerTopic, reason: "re-offer from \(link.peer) not answerable: \(error)"))
            return
        }
        took(offer.sdp, parsed: parsed, on: link)
        link.answeredIdentity = Call.identity(offer.sdp)
        if restart { peerRestartedIce(link) }
        let heldBefore = link.remoteHolds
        if let parsed, let start = link.remoteReceivedAtStart {
            link.remoteHolds = start && !Self.receives(parsed)
        }
        let published = link.pc.localDescription ?? answer
        link.answer = published
        await publish(published, on: link)
        let why = newCertificate ? "new-certificate" : restart ? "ice-restart"
            : link.remoteHolds != heldBefore ? (link.remoteHolds ? "hold" : "unhold") : "update"
        onEvent(.renegotiated(peer: link.peer, offerer: "remote", reason: why, before: before, after: directions(of: link),
                              ms: Date().timeIntervalSince(started) * 1000))
        updateHold(link)
        await renegotiateIfNeeded(link)
    }

    // MARK: State

    /// Notes the peer's description `sdp` as its latest (session id, version, fingerprints,
    /// ICE ufrag); `parsed` is `sdp` parsed, when the caller has it.
    func took(_ sdp: String, parsed: SessionDescription? = nil, on link: CallLink) {
        link.remoteSession = Call.session(sdp)
        if let parsed = parsed ?? (try? SessionDescription(parsing: sdp)) {
            let ufrag = Self.ufrag(of: parsed)
            if let old = link.remoteUfrag, old != ufrag { link.previousRemoteUfrags.insert(old) }
            link.remoteUfrag = ufrag
            let prints = Reoffer.fingerprints(of: parsed)
            if !prints.isEmpty { link.remoteFingerprints = prints }
            if link.remoteReceivedAtStart == nil { link.remoteReceivedAtStart = Self.receives(parsed) }
        }
    }

    /// Reports `hold` when a hold of either side comes into force on `link`, and
    /// `established` when the last one ends.
    func updateHold(_ link: CallLink) {
        let held = link.localHold || link.remoteHolds
        guard held != link.holdReported, link.established else { return }
        link.holdReported = held
        report(held ? .hold : .established, profile.isMesh ? link.peer : nil, nil)
    }

    /// The negotiated direction from our side of each transceiver, by kind (`audio`,
    /// `video`); a second track of a kind as `kind:mid` (`video:2`).
    func directions(of link: CallLink) -> [String: String] {
        var out: [String: String] = [:]
        for t in link.pc.allTransceivers {
            let key = out["\(t.kind)"] == nil ? "\(t.kind)" : "\(t.kind):\(t.mid ?? "-")"
            out[key] = t.currentDirection?.rawValue ?? "none"
        }
        return out
    }

    /// True when `d`, a description from the peer, receives on any RTP m-section in use.
    static func receives(_ d: SessionDescription) -> Bool {
        d.media.contains { !$0.isRejected && $0.isRTP && $0.effectiveDirection.receives }
    }

    /// The file of a track the peer adds mid-call: `-mid<mid>` before the extension of
    /// `path` (the track kind's file). Letters and digits of the mid as they are; any other
    /// mid gets a hash of itself too, so mids `a.b` and `a-b` do not share a file.
    static func addedTrackPath(_ path: String, mid: String) -> String {
        var safe = String(mid.prefix(32).map { $0.isASCII && ($0.isLetter || $0.isNumber) ? $0 : "_" })
        if safe != mid { safe += "-" + String(mid.utf8.reduce(UInt32(2_166_136_261)) { ($0 ^ UInt32($1)) &* 16_777_619 }, radix: 16) }
        let url = URL(fileURLWithPath: path)
        return url.deletingPathExtension().path + "-mid\(safe)." + url.pathExtension
    }

    /// The ICE ufrag of the first m-section in use (or the session's).
    static func ufrag(of d: SessionDescription) -> String? {
        d.media.first { !$0.isRejected }?.iceUfrag ?? d.iceUfrag
    }
}
