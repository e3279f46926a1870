// CallRun: one run of a Call — the state of its task (connections by peer, timers, what ended) and the handling of each input in order.
import PeerAgent
import DTLS
import EventLoop
import Foundation
import ICE
import Media
import SDP
import Synchronization
import WampClient

/// The state of one ``Call/run()`` and its handlers: router events, connection events,
/// ticks and hang-ups are taken from the call's input stream one at a time, in order.
/// Not `Sendable`: the compiler keeps it in the task that runs it, so nothing in it
/// needs a lock.
final class CallRun {
    /// The call this is a run of (its options, input stream and counters).
    let call: Call
    let options: CallOptions
    let onEvent: @Sendable (CallEvent) -> Void
    let feed: AsyncStream<Call.Input>.Continuation
    let profile: any SignalingProfile
    let hangUpRequest: HangUpRequest

    /// The router session: the call's own, or the shared one (``Call/shared``).
    var session: WampSession?
    /// The call's subscriptions on it, and the tasks feeding their events to the inputs.
    var subscriptions: [WampSubscription] = []
    var subscriptionTasks: [Task<Void, Never>] = []
    /// The task feeding the own session's status to the inputs, or the token of the shared
    /// session's listener.
    var statusTask: Task<Void, Never>?
    var statusToken: UInt64?
    var links: [String: CallLink] = [:]
    /// Candidates that came before their peer's offer, for the connection it makes.
    var earlyCandidates = EarlyCandidates()
    var ended: [PeerResult] = []
    var failedLinks: [(code: Int32, reason: String)] = []
    private var state: CallState = .connecting
    var establishedAt: Date?
    private var waitingSince = Date()
    /// When the last per-second snapshot was taken (``progressTick(_:)``).
    var lastProgress = Date()
    var finishing = false
    /// The `--at` actions waiting for their time (cancelled when the call ends).
    var scheduled: [Task<Void, Never>] = []
    /// `--data-out`, once open.
    var dataLog: DataLog?
    /// `--stats-timeline`: where each connection's snapshot goes every second.
    var timeline: StatsTimelineWriter?
    /// When the router event or connection event being handled came (`systemUptime`, s):
    /// the milestones it gives are dated by it, not by when this task got to them.
    private var inputArrival: TimeInterval = 0

    /// A run of `call`, before anything happened.
    init(call: Call) {
        self.call = call
        options = call.options
        onEvent = call.onEvent
        feed = call.feed
        profile = call.profile
        hangUpRequest = call.hangUpRequest
    }

    /// Runs the call to its end and returns the outcome (``Call/run()``).
    func run() async -> CallResult {
        report(.connecting, nil, nil)
        openTimeline()
        if let path = options.dataOut {
            do { dataLog = try DataLog(path: path) } catch {
                onEvent(.dataError(peer: "-", label: nil, reason: "--data-out \(path): \(error)"))
            }
        }
        if let ended = await comeToRouter() { return ended }
        defer {
            statusTask?.cancel()
            for t in subscriptionTasks { t.cancel() }
        }
        let ticker = Task { [feed] in
            while !Task.isCancelled {
                try? await Task.sleep(nanoseconds: 250_000_000)
                feed.yield(.tick)
            }
        }
        defer { ticker.cancel() }

        waitingSince = Date()
        if let peer = profile.offersAtStart {
            do { try await startOffer(to: peer) } catch {
                return await end(code: ExitCode.usage, state: .failed, reason: "\(error)")
            }
        } else {
            report(.ringing, nil, nil)
        }
        if let greeting = profile.greeting { await publish(greeting) }

        for await input in call.inputs {
            if let result = await handle(input) { return result }
        }
        return await end(code: ExitCode.interrupted, state: .finished, reason: "input stream ended")
    }

    /// Publishes `publication` on the router; a failure is not the call's (the router
    /// reconnects and the offer is republished). Room members on a shared session have
    /// their publications delivered to that session too (WAMP excludes the publisher's
    /// session by default), so the process's other members hear them; each member
    /// ignores its own (PROTOCOL.md: "do not rely on either").
    func publish(_ publication: Publication) async {
        guard let session else { return }
        let toOwnSession = call.shared != nil && profile.isMesh
        _ = try? await session.publish(publication.topic, args: publication.args, excludeMe: !toOwnSession)
    }

    // MARK: Input handling (run task)

    private func handle(_ input: Call.Input) async -> CallResult? {
        switch input {
        case let .message(topic, event, at):
            call.queuedMessages.subtract(1, ordering: .relaxed)
            inputArrival = at
            return await message(topic: topic, event: event)
        case let .connection(peer, event, at):
            inputArrival = at
            return await connectionEvent(peer: peer, event: event)
        case let .routerStatus(status):
            switch status {
            case let .disconnected(reason): onEvent(.router("disconnected: \(reason)"))
            case let .reconnected(id): onEvent(.router("reconnected (session \(id))"))
            case let .reconnectFailed(attempt, error): onEvent(.router("reconnect attempt \(attempt) failed: \(error)"))
            case let .restoreFailed(uri, error): onEvent(.router("could not restore \(uri): \(error)"))
            case let .goodbye(reason, message, reconnectInMs):
                let said = "router said goodbye: \(reason)" + (message.map { " (\($0))" } ?? "")
                onEvent(.router(reconnectInMs.map { "\(said); reconnecting in \(Int($0)) ms" } ?? "\(said); not reconnecting"))
            case let .closed(reason): onEvent(.router("closed: \(reason)"))
            }
            return nil
        case .tick:
            return await tick()
        case let .hangUp(reason, interrupted):
            return await end(code: interrupted ? ExitCode.interrupted : nil, state: .finished, reason: reason)
        case let .action(action, origin):
            return await act(action, origin: origin)
        case let .send(request, origin):
            sendData(request, origin: origin)
            return nil
        }
    }

    private func tick() async -> CallResult? {
        let now = Date()
        let dropped = call.droppedMessages.exchange(0, ordering: .relaxed)
        if dropped > 0 {
            onEvent(.signalingError(topic: "\(options.prefix).*", reason: "\(dropped) router events dropped: more than "
                                    + "\(Call.maximumQueuedMessages) were waiting (a flood on the call's topics)"))
        }
        if let since = establishedAt, now.timeIntervalSince(since) >= options.durationSeconds {
            return await end(code: nil, state: .finished, reason: nil)
        }
        // --timeout covers waiting for the offer or answer; once one was exchanged, ICE (5)
        // and DTLS (6) failures bound the rest.
        // An answer waiting for gathering counts as exchanged (the offer was taken).
        let exchanged = links.values.contains { ($0.answered || (!$0.offerer && $0.awaitingGathering != nil)) && !$0.declined }
        if establishedAt == nil, !exchanged, !options.waitsWithoutTimeout, now.timeIntervalSince(waitingSince) >= options.timeoutSeconds {
            let what = options.role == .offer ? "no answer" : (options.role == .answer ? "no offer" : "no peer connected")
            return await end(code: ExitCode.timeout, state: .failed,
                             reason: "\(what) within --timeout \(formatSeconds(options.timeoutSeconds)) s")
        }
        await reofferTick(now)
        if let result = await iceRestartTick(now) { return result }
        // Republish unanswered offers (an answerer may join late).
        for link in links.values where link.offerer && !link.answered {
            if now.timeIntervalSince(link.lastOfferPublish) >= options.offerRepeatSeconds, let offer = link.offer {
                link.lastOfferPublish = now
                // With trickle, the repeat carries the candidates found so far (same o= line):
                // an answerer that joined late missed the trickled ones.
                await publish(options.trickle ? (link.pc.localDescription ?? offer) : offer, on: link)
            }
        }
        // Vanilla ICE: descriptions whose gathering has run out of time go with what there is.
        for link in links.values.sorted(by: { $0.peer < $1.peer }) {
            if let waiting = link.awaitingGathering, now >= waiting.deadline { await publishGathered(link) }
        }
        progressTick(now)
        return nil
    }

    private func message(topic: String, event: WampEvent) async -> CallResult? {
        let message: SignalingMessage
        do { message = try profile.message(topic: topic, event: event) } catch { return drop(topic, error.reason) }
        switch message {
        case .ignored:
            break
        case let .offer(offer, from):
            // Our own (legacy: both sides hear both topics), by type and o= identity.
            if isOurs(offer, peer: from) { return nil }
            if let link = links[from], link.inCall, !finishing {
                await inCallOffer(offer, on: link)
            } else {
                await offered(offer, from: from)
            }
        case let .answer(answer, from):
            if isOurs(answer, peer: from) { return nil }
            if let link = links[from], link.reoffer != nil {
                await reanswered(answer, on: link)
                return nil
            }
            return await applyAnswer(answer, peer: from)
        case let .candidate(candidate, from):
            remoteCandidate(candidate, peer: from, topic: topic)
        case let .joined(user):
            onEvent(.peerJoined(user))
            if let link = links[user] {
                // A user we are in a call with announced itself again: its process restarted
                // or its page reloaded. Its new session joins this connection.
                if link.inCall, !finishing { await peerRejoined(link) }
                return nil
            }
            do { try await startOffer(to: user) } catch { return drop(topic, "cannot call \(user): \(error)") }
        case let .hangUp(from):
            guard profile.isMesh else {
                guard !finishing, let link = links[from], link.inCall else { return nil }
                link.closedByPeer = true
                // No close of our own in reply: it could end a new call started right after.
                return await end(code: nil, state: .finished, reason: "the peer hung up (close)", announce: false)
            }
            onEvent(.peerLeft(from))
            earlyCandidates.forget(from)
            if let link = links[from] {
                link.closedByPeer = true
                closeLink(link)
            }
        }
        return nil
    }

    /// True when `description` is one we published to `peer` (the router echoed it): the
    /// same type and `o=` identity. (A busy decline repeats the declined offer's `o=` line,
    /// so an offerer's own identity in an answer is not its own.)
    private func isOurs(_ description: SessionDescriptionInit, peer: String) -> Bool {
        guard let link = links[peer], let identity = Call.identity(description.sdp) else { return false }
        return (description.type == .offer ? link.publishedOffers : link.publishedAnswers).contains(identity)
    }

    /// Publishes our offer or answer `description` to `link`'s peer, noting its identity
    /// (``isOurs(_:peer:)``).
    func publish(_ description: SessionDescriptionInit, on link: CallLink) async {
        if let identity = Call.identity(description.sdp) {
            if description.type == .offer { link.publishedOffers.insert(identity) } else { link.publishedAnswers.insert(identity) }
        }
        await publish(description.type == .offer ? profile.offer(description, to: link.peer) : profile.answer(description, to: link.peer))
    }

    private func drop(_ topic: String, _ reason: String) -> CallResult? {
        onEvent(.signalingError(topic: topic, reason: reason))
        return nil
    }

    // MARK: Offer / answer

    private func makeLink(peer: String, offerer: Bool) throws -> CallLink {
        let several = profile.isMesh
        let videoPath = options.videoPath(peer: peer, several: several)
        let audioPath = options.audioPath(peer: peer, several: several)
        let feed = self.feed
        let pc = try PeerConnection(configuration: options.connectionConfiguration) { event in
            feed.yield(.connection(peer: peer, event: event, at: ProcessInfo.processInfo.systemUptime))
        }
        // The file format by the path's extension (ReceiveOptions.recording); nothing
        // written without recordsMedia (peer load --record none).
        let records = options.recordsMedia
        var receiveAudio = ReceiveOptions.recording(.audio, to: records ? audioPath : nil, decode: options.decode)
        var receiveVideo = ReceiveOptions.recording(.video, to: records ? videoPath : nil, decode: options.decode)
        var recorder: SyncedRecorder?
        if records, let path = options.recordPath(peer: peer, several: several) {  // --record: both in one file, in sync
            recorder = SyncedRecorder(path: path)
            receiveAudio.recorder = recorder
            receiveVideo.recorder = recorder
        }
        let decode = options.decode
        pc.receiveOptionsForAddedTracks = { kind, mid in
            ReceiveOptions.recording(kind, to: records ? Self.addedTrackPath(kind == .video ? videoPath : audioPath, mid: mid) : nil, decode: decode)
        }
        // `--video none --audio none` with data channels: a data-only call (no m-sections
        // for media; a peer's media sections still get recvonly transceivers when offered).
        if !(options.video == .none && options.audio == .none && !options.dataChannels.isEmpty) {
            pc.addTransceiver(.audio, direction: options.audio == .none ? .recvonly : .sendrecv,
                              audio: try options.audio.makeSource(), encoding: options.encoding, receive: receiveAudio)
            pc.addTransceiver(.video, direction: options.video == .none ? .recvonly : .sendrecv,
                              video: try options.video.makeSource(), encoding: options.encoding, receive: receiveVideo)
        }
        let link = CallLink(peer: peer, pc: pc, offerer: offerer, videoPath: records ? videoPath : "", audioPath: records ? audioPath : "")
        link.recorder = recorder
        try openDataChannels(link)
        links[peer] = link
        return link
    }

    private func startOffer(to peer: String) async throws {
        earlyCandidates.forget(peer)  // from before our offer: not for it
        let link = try makeLink(peer: peer, offerer: true)
        let offer = try link.pc.createOffer()
        try link.pc.setLocalDescription(offer)
        link.offerIdentity = Call.identity(offer.sdp)
        // Trickle: at once, with the candidates gathered so far (libnice has the host ones
        // already; RFC 8838 §4.1, as W3C's localDescription), the rest on the candidate
        // topic: the peer checks from the description instead of waiting for them.
        if options.trickle { await published(link.pc.localDescription ?? offer, on: link) } else { awaitGathering(offer, on: link) }
    }

    /// Vanilla ICE: `description` is published once `link`'s gathering completes, or after
    /// ``gatheringWaitSeconds`` with what was gathered by then.
    private func awaitGathering(_ description: SessionDescriptionInit, on link: CallLink) {
        link.awaitingGathering = (description, Date().addingTimeInterval(Call.gatheringWaitSeconds))
    }

    /// Publishes the description `link` waits to publish (vanilla ICE), with every
    /// candidate gathered so far.
    func publishGathered(_ link: CallLink) async {
        guard let (description, _) = link.awaitingGathering else { return }
        link.awaitingGathering = nil
        await published(link.pc.localDescription ?? description, on: link)
    }

    /// Publishes our offer or answer on `link` and records it.
    private func published(_ description: SessionDescriptionInit, on link: CallLink) async {
        if description.type == .offer {
            link.offer = description
            link.lastOfferPublish = Date()
            await publish(description, on: link)
            onEvent(.milestone("offerPublished", peer: link.peer, at: ProcessInfo.processInfo.systemUptime))
            if !profile.isMesh { report(.ringing, nil, nil) }
            return
        }
        link.answer = description
        link.answered = true
        await publish(description, on: link)
        onEvent(.milestone("answerPublished", peer: link.peer, at: ProcessInfo.processInfo.systemUptime))
        if link.pc.connectionState == .failed {
            link.failed = (ExitCode.ice, link.pc.failureReason ?? "negotiation failed")
            report(.failed, profile.isMesh ? link.peer : nil, link.pc.failureReason)
        }
    }


    /// An offer from `peer`: answered, or for a peer we have a connection with, what the
    /// profile's rule says (answer again, ignore, decline as busy, replace). `inCall`: the
    /// offer is another caller's while a call with `peer` exists (``InCallOffer``); a
    /// legacy offerer ignores offers until its call exists.
    func offered(_ offer: SessionDescriptionInit, from peer: String, inCall: Bool = false) async {
        let identity = Call.identity(offer.sdp)
        if let link = links[peer] {
            if link.offerer, !inCall, !profile.isMesh { return }
            switch profile.repeatedOffer(from: peer, identity: identity, taken: link.offerIdentity, haveAnswer: link.answer != nil,
                                         weOffered: link.offerer, answered: link.answered) {
            case .answerAgain:
                // Our answer may have been missed (now with every candidate).
                if let answer = link.answer { await publish(link.pc.localDescription ?? answer, on: link) }
                return
            case .ignore:
                return
            case .decline:
                await decline(offer, from: peer, identity: identity)
                return
            case .replace:
                closeLink(link)
            }
        }
        await answerOffer(offer, from: peer, identity: identity)
    }

    private func answerOffer(_ offer: SessionDescriptionInit, from peer: String, identity: String?) async {
        let link: CallLink
        do { link = try makeLink(peer: peer, offerer: false) } catch {
            onEvent(.signalingError(topic: "offer", reason: "cannot create a connection for \(peer): \(error)"))
            return
        }
        link.offerIdentity = identity
        onEvent(.milestone("offerReceived", peer: peer, at: inputArrival))
        for held in earlyCandidates.take(for: peer) {  // the connection holds them until the offer is set
            remoteCandidate(held.candidate, peer: peer, topic: held.topic)
        }
        do {
            try link.pc.setRemoteDescription(offer)
            took(offer.sdp, on: link)
            link.answeredIdentity = identity
            let answer = try link.pc.createAnswer()
            try link.pc.setLocalDescription(answer)
            if options.trickle { await published(link.pc.localDescription ?? answer, on: link) } else { awaitGathering(answer, on: link) }
        } catch {
            onEvent(.signalingError(topic: profile.offerTopic, reason: "offer from \(peer) refused: \(error)"))
            closeLink(link)
        }
    }

    /// Declines `offer` while in a call (busy, ``LegacyProfile/declineAnswer(to:)``).
    /// An offer whose SDP does not parse is no call to decline: it is reported as a
    /// signaling error with the parser's reason and dropped.
    private func decline(_ offer: SessionDescriptionInit, from peer: String, identity: String?) async {
        let answer: SessionDescriptionInit
        do { answer = try LegacyProfile.declineAnswer(to: offer) } catch {
            onEvent(.signalingError(topic: profile.offerTopic, reason: "offer refused: unusable session description: \(error)"))
            return
        }
        onEvent(.busy(from: identity.map { "offer o=\($0)" } ?? "an offer", reason: "already in a call"))
        if let link = links[peer] { await publish(answer, on: link) } else { await publish(profile.answer(answer, to: peer)) }
    }

    private func applyAnswer(_ answer: SessionDescriptionInit, peer: String) async -> CallResult? {
        guard let link = links[peer], link.offerer, !link.answered else { return nil }
        if let parsed = try? SessionDescription(parsing: answer.sdp), !parsed.media.isEmpty,
           parsed.media.allSatisfy({ $0.port == 0 }) {
            // A decline: ours only when it repeats our offer's o= line.
            guard let mine = link.offerIdentity, Call.identity(answer.sdp) == mine else { return nil }
            link.answered = true
            link.declined = true
            if profile.isMesh {
                closeLink(link)
                report(.busy, peer, "\(peer) declined the call")
                return nil
            }
            return await end(code: ExitCode.busy, state: .busy, reason: "the answerer is busy in another call")
        }
        do {
            onEvent(.milestone("answerReceived", peer: peer, at: inputArrival))
            try link.pc.setRemoteDescription(answer)
            took(answer.sdp, on: link)
            link.answered = true
            link.answer = answer
        } catch {
            return drop(profile.answerTopic, "answer from \(peer) refused: \(error)")
        }
        return nil
    }

    // MARK: Connection events

    private func connectionEvent(peer: String, event: PeerConnectionEvent) async -> CallResult? {
        guard let link = links[peer] else { return nil }
        switch event {
        case let .localCandidate(c):
            guard options.trickle else { return nil }
            link.published.insert(c.candidate)
            if let ufrag = c.usernameFragment { link.localUfrags.insert(ufrag) }
            if !c.isEndOfCandidates { onEvent(.candidate(peer: peer, local: true, candidate: c.candidate)) }
            await publish(profile.candidate(c, to: peer))
        case .iceGatheringState(.complete):
            await publishGathered(link)
        case let .track(info):
            onEvent(.track(peer: peer, kind: info.kind, mid: info.mid, codec: info.codec))
        case let .remapped(detail):
            onEvent(.remapped(peer: peer, detail: detail))
        case let .previousPayloadType(mid, pt, new): onEvent(.previousPayloadType(peer: peer, mid: mid, payloadType: pt, negotiated: new))
        case let .dtlsRestarted(restart):
            onEvent(.dtlsRestarted(peer: peer, restart))
            reopenDataChannels(link, offeredByUs: restart.offeredByUs)
        case let .remoteCandidateDropped(candidate, reason):
            onEvent(.candidateDropped(peer: peer, candidate: candidate, reason: reason))
        case let .iceConnectionState(s) where s == .connected || s == .completed:
            iceReconnected(link)
            guard !link.iceConnected else { return nil }
            link.iceConnected = true
            onEvent(.milestone("iceConnected", peer: peer, at: inputArrival))
        case .iceConnectionState(.disconnected), .iceConnectionState(.failed):
            if link.established, link.iceDisconnectedSince == nil { link.iceDisconnectedSince = Date() }
        case let .dtlsState(s) where s == .connected:
            onEvent(.milestone("dtlsConnected", peer: peer, at: inputArrival))
        case let .firstRemoteFrameWritten(at):
            onEvent(.milestone("firstRemoteFrameWritten", peer: peer, at: at))
        case let .firstRemoteFrame(kind, _):
            onEvent(.milestone(kind == "video" ? "firstRemoteFrame" : "firstRemoteAudio", peer: peer, at: inputArrival))
        case let .connectionState(s, reason):
            onEvent(.connectionState(peer: peer, state: s.rawValue, reason: reason))
            return await connectionState(s, reason: reason, of: link)
        case let .dataChannel(e):
            return await dataChannelEvent(e, on: link)
        default: break
        }
        return nil
    }

    private func connectionState(_ s: PeerConnectionState, reason: String?, of link: CallLink) async -> CallResult? {
        let mesh = profile.isMesh
        switch s {
        case .connected:
            guard !link.established else { return nil }
            link.established = true
            let directions = link.pc.allTransceivers.compactMap(\.currentDirection)
            let hold = !directions.isEmpty && directions.allSatisfy { $0 == .inactive }
            if establishedAt == nil {
                establishedAt = Date()
                report(hold ? .hold : .established, mesh ? link.peer : nil, nil)
                scheduleActions()
            } else if mesh {
                report(hold ? .hold : .established, link.peer, nil)
            }
        case .failed:
            let text = reason ?? "failed"
            let code = text.hasPrefix("DTLS") ? ExitCode.dtls : ExitCode.ice
            // An established call whose path failed waits for (or makes) an ICE restart.
            if code == ExitCode.ice, restartsIce(after: text, on: link) { return nil }
            link.failed = (code, text)
            guard mesh else { return await end(code: code, state: .failed, reason: text) }
            report(.failed, link.peer, text)
            closeLink(link)
        case .closed:
            if link.pc.closedByPeer, !mesh {
                link.closedByPeer = true
                return await end(code: nil, state: .finished, reason: "the peer hung up (DTLS close_notify)", announce: false)
            }
        default: break
        }
        return nil
    }

    /// Starts the `--at` timers (actions and sends), measured from now (`established`).
    private func scheduleActions() {
        let timed = options.scheduledActions.map { ($0.seconds, Call.Input.action($0.action, origin: "at \(formatSeconds($0.seconds))")) }
            + options.scheduledSends.map { ($0.seconds, Call.Input.send($0.send, origin: "at \(formatSeconds($0.seconds))")) }
        for (seconds, input) in timed {
            scheduled.append(Task { [feed] in
                try? await Task.sleep(nanoseconds: UInt64(seconds * 1_000_000_000))
                guard !Task.isCancelled else { return }
                feed.yield(input)
            })
        }
    }

    func report(_ s: CallState, _ peer: String?, _ reason: String?) {
        if peer == nil { state = s }
        onEvent(.state(s, peer: peer, reason: reason))
    }
}
