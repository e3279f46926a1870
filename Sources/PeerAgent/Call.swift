// Call: one call over a WAMP router in the signaling profiles of shared/PROTOCOL.md (legacy, room) — its task, inputs, offer/answer, connection events and ending.
import DTLS
import Foundation
import ICE
import SDP
import Synchronization
import WampClient

/// A call over a WAMP router with the signaling profiles of `shared/PROTOCOL.md`:
/// `legacy` (one call per prefix; offer/answer/candidate/close topics; vanilla or
/// trickle ICE) and `room` (a mesh: one peer connection per remote user).
///
/// All call state lives in the task running ``run()``: router events, peer
/// connection events, timers and hang-up requests are queued into one stream and
/// handled in order, so nothing needs a lock.
///
/// Busy (legacy): an answerer in a call that gets a different offer keeps its call
/// and declines the new one with an answer that rejects every m-section (port 0,
/// RFC 3264 §6) whose `o=` line repeats the declined offer's session id and version,
/// so only that offerer takes it as "busy"; older clients in a call ignore answers.
public final class Call: @unchecked Sendable {
    /// The options given at init.
    public let options: CallOptions
    private let onEvent: @Sendable (CallEvent) -> Void
    private let inputs: AsyncStream<Input>
    private let feed: AsyncStream<Input>.Continuation
    /// Set by ``hangUp(interrupted:)`` from any thread, for the waits before the main loop.
    private let hangUpRequested = HangUpFlag()
    /// Router events queued for the run task but not yet handled, and those dropped because
    /// ``maximumQueuedMessages`` were waiting: a router flooding our topics (10,000 events
    /// a second) cannot grow memory without bound. Connection events are never dropped.
    private let queuedMessages = Atomic<Int>(0)
    private let droppedMessages = Atomic<Int>(0)
    /// Router events waiting at most; more are dropped and counted (a `signalingError`).
    public static let maximumQueuedMessages = 1_000

    private enum Input: Sendable {
        case message(topic: String, event: WampEvent)
        case connection(peer: String, event: PeerConnectionEvent)
        case routerStatus(WampStatus)
        case tick
        case hangUp(reason: String, interrupted: Bool)
    }

    /// One peer connection and what the call knows about it (run task only).
    private final class Link {
        let peer: String
        let pc: PeerConnection
        let offerer: Bool
        var offer: SessionDescriptionInit?
        var offerIdentity: String?
        var answer: SessionDescriptionInit?
        var answered = false
        var lastOfferPublish = Date.distantPast
        var established = false
        /// ICE reached `connected` at least once (it may be `disconnected` now).
        var iceConnected = false
        var published: Set<String> = []
        /// The ICE ufrags of our own candidates (to recognise them when the router echoes them).
        var localUfrags: Set<String> = []
        let videoPath: String
        let audioPath: String
        var failed: (code: Int32, reason: String)?
        var closedByPeer = false
        /// The answer was a decline (busy): no call ever existed with this peer.
        var declined = false
        /// True when a call was set up with this peer (answered for real, or connected).
        var inCall: Bool { established || (answered && !declined) }
        init(peer: String, pc: PeerConnection, offerer: Bool, videoPath: String, audioPath: String) {
            self.peer = peer; self.pc = pc; self.offerer = offerer; self.videoPath = videoPath; self.audioPath = audioPath
        }
    }

    // Run-task state.
    private var session: WampSession?
    private var links: [String: Link] = [:]
    /// Candidates that came before their peer's offer, for the connection it makes.
    private var earlyCandidates = EarlyCandidates()
    private var ended: [PeerResult] = []
    private var state: CallState = .connecting
    private var establishedAt: Date?
    private var waitingSince = Date()
    private var lastProgress = Date()
    private var finishing = false

    /// A call with `options`; events go to `onEvent` (from the run task, in order).
    public init(options: CallOptions, onEvent: @escaping @Sendable (CallEvent) -> Void = { _ in }) {
        self.options = options
        self.onEvent = onEvent
        (inputs, feed) = AsyncStream.makeStream(bufferingPolicy: .unbounded)
    }

    /// Ends the call from outside (a signal handler, a test): publishes `close`, closes
    /// every connection and file, and makes ``run()`` return exit code 130 when
    /// `interrupted`, else 0/7 as for a normal end. Safe from any thread.
    public func hangUp(interrupted: Bool = true) {
        hangUpRequested.set(interrupted ? 2 : 1)
        feed.yield(.hangUp(reason: interrupted ? "interrupted" : "hung up", interrupted: interrupted))
    }

    /// Runs the call to its end and returns the outcome. Never throws: every failure is
    /// an exit code with a reason.
    public func run() async -> CallResult {
        report(.connecting, nil, nil)
        var wamp = options.wamp
        wamp.joinTimeoutMs = UInt32(max(1, min(options.timeoutSeconds, 3_600)) * 1000)
        // Joining may take up to --timeout: race it against a hang-up (SIGINT/SIGTERM).
        let joining = Task { () -> Result<WampSession, WampError> in
            do throws(WampError) { return .success(try await WampSession.join(wamp)) } catch { return .failure(error) }
        }
        let joinOutcome: Result<WampSession, WampError>? = await withTaskGroup(of: Result<WampSession, WampError>?.self) { group in
            group.addTask { await joining.value }
            group.addTask { [hangUpRequested] in
                while hangUpRequested.value == 0 && !Task.isCancelled { try? await Task.sleep(nanoseconds: 20_000_000) }
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
        let joined: WampSession
        switch joinOutcome {
        case let .success(session)?: joined = session
        case let .failure(error)?:
            return finish(code: ExitCode.router, state: .failed, reason: "router \(options.wamp.url): \(error)")
        case nil:
            Task { if case let .success(late) = await joining.value { await late.leave() } }
            let interrupted = hangUpRequested.value == 2
            return finish(code: interrupted ? ExitCode.interrupted : ExitCode.ok, state: .finished,
                          reason: interrupted ? "interrupted while joining the router" : "hung up while joining the router")
        }
        session = joined
        onEvent(.milestone("joined", peer: nil))
        let statusTask = Task { [feed] in
            for await status in joined.status { feed.yield(.routerStatus(status)) }
        }
        defer { statusTask.cancel() }
        var subscriptionTasks: [Task<Void, Never>] = []
        defer { for t in subscriptionTasks { t.cancel() } }
        do {
            for topic in topics() {
                let subscription = try await joined.subscribe(topic)
                subscriptionTasks.append(Task { [feed, self] in
                    for await event in subscription {
                        guard queuedMessages.add(1, ordering: .relaxed).newValue <= Self.maximumQueuedMessages else {
                            queuedMessages.subtract(1, ordering: .relaxed)
                            droppedMessages.add(1, ordering: .relaxed)
                            continue
                        }
                        feed.yield(.message(topic: topic, event: event))
                    }
                })
            }
        } catch {
            await joined.leave()
            return finish(code: ExitCode.router, state: .failed, reason: "router \(options.wamp.url): subscribe: \(error)")
        }
        let ticker = Task { [feed] in
            while !Task.isCancelled {
                try? await Task.sleep(nanoseconds: 250_000_000)
                feed.yield(.tick)
            }
        }
        defer { ticker.cancel() }

        waitingSince = Date()
        switch options.role {
        case .offer:
            do { try await startOffer(to: "answerer") } catch {
                return await end(code: ExitCode.usage, state: .failed, reason: "\(error)")
            }
        case .answer:
            report(.ringing, nil, nil)
        case .room:
            report(.ringing, nil, nil)
            _ = try? await joined.publish(roomTopic("callme"), args: [.string(options.user)])
        }

        for await input in inputs {
            if let result = await handle(input) { return result }
        }
        return await end(code: ExitCode.interrupted, state: .finished, reason: "input stream ended")
    }

    // MARK: Topics

    private var isRoom: Bool { options.role == .room }
    private func legacyTopic(_ name: String) -> String { "\(options.prefix).\(name)" }
    private func roomTopic(_ name: String) -> String { "\(options.prefix).\(options.room).\(name)" }
    private func userTopic(_ user: String, _ name: String) -> String { "\(options.prefix).\(options.room).\(user).\(name)" }

    private func topics() -> [String] {
        if isRoom {
            return [userTopic(options.user, "offer"), userTopic(options.user, "answer"), userTopic(options.user, "candidate"),
                    roomTopic("callme"), roomTopic("close")]
        }
        return ["offer", "answer", "candidate", "close"].map(legacyTopic)
    }

    // MARK: Input handling (run task)

    private func handle(_ input: Input) async -> CallResult? {
        switch input {
        case let .message(topic, event):
            queuedMessages.subtract(1, ordering: .relaxed)
            return await message(topic: topic, event: event)
        case let .connection(peer, event):
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
        }
    }

    private func tick() async -> CallResult? {
        let now = Date()
        let dropped = droppedMessages.exchange(0, ordering: .relaxed)
        if dropped > 0 {
            onEvent(.signalingError(topic: "\(options.prefix).*", reason: "\(dropped) router events dropped: more than "
                                    + "\(Self.maximumQueuedMessages) were waiting (a flood on the call's topics)"))
        }
        if let since = establishedAt, now.timeIntervalSince(since) >= options.durationSeconds {
            return await end(code: nil, state: .finished, reason: nil)
        }
        // --timeout covers waiting for the offer or answer; once one was exchanged, ICE (5)
        // and DTLS (6) failures bound the rest.
        let exchanged = links.values.contains { $0.answered && !$0.declined }
        if establishedAt == nil, !exchanged, !options.waitsWithoutTimeout, now.timeIntervalSince(waitingSince) >= options.timeoutSeconds {
            let what = options.role == .offer ? "no answer" : (options.role == .answer ? "no offer" : "no peer connected")
            return await end(code: ExitCode.timeout, state: .failed,
                             reason: "\(what) within --timeout \(formatSeconds(options.timeoutSeconds)) s")
        }
        // Republish unanswered offers (an answerer may join late).
        for link in links.values where link.offerer && !link.answered {
            if now.timeIntervalSince(link.lastOfferPublish) >= options.offerRepeatSeconds, let offer = link.offer {
                link.lastOfferPublish = now
                // With trickle, the repeat carries the candidates found so far (same o= line):
                // an answerer that joined late missed the trickled ones.
                await publishOffer(options.trickle ? (link.pc.localDescription ?? offer) : offer, link: link)
            }
        }
        if now.timeIntervalSince(lastProgress) >= options.progressIntervalSeconds {
            lastProgress = now
            for link in links.values.sorted(by: { $0.peer < $1.peer }) where link.established {
                let s = link.pc.getStats()
                onEvent(.frames(peer: link.peer, video: s.inbound("video")?.framesWritten ?? 0,
                                audio: s.inbound("audio")?.framesWritten ?? 0))
            }
        }
        return nil
    }

    private func message(topic: String, event: WampEvent) async -> CallResult? {
        if isRoom { return await roomMessage(topic: topic, event: event) }
        switch topic {
        case legacyTopic("offer"):
            guard options.role == .answer else { return nil }  // the offerer ignores offers (its own included)
            guard let arg = event.args.first else { return drop(topic, "offer without arguments") }
            do { await legacyOffer(try Signaling.description(from: arg)) } catch { return drop(topic, error.reason) }
        case legacyTopic("answer"):
            guard options.role == .offer else { return nil }  // the answerer ignores answers
            guard let arg = event.args.first else { return drop(topic, "answer without arguments") }
            do { return await applyAnswer(try Signaling.description(from: arg), peer: "answerer") } catch { return drop(topic, error.reason) }
        case legacyTopic("candidate"):
            guard let arg = event.args.first else { return drop(topic, "candidate without arguments") }
            let peer = options.role == .offer ? "answerer" : "offerer"
            do { remoteCandidate(try Signaling.candidate(from: arg), peer: peer, topic: topic) } catch { return drop(topic, error.reason) }
        case legacyTopic("close"):
            // Our own close comes back too unless excluded; we publish it only when ending.
            guard !finishing, let link = links.values.first, link.inCall else { return nil }
            link.closedByPeer = true
            // No close of our own in reply: it could end a new call started right after.
            return await end(code: nil, state: .finished, reason: "the peer hung up (close)", announce: false)
        default: break
        }
        return nil
    }

    private func roomMessage(topic: String, event: WampEvent) async -> CallResult? {
        guard case let .string(from)? = event.args.first else {
            return drop(topic, "message without a fromUser string as first argument")
        }
        guard from != options.user else { return nil }  // our own publication
        switch topic {
        case roomTopic("callme"):
            onEvent(.peerJoined(from))
            guard links[from] == nil else { return nil }
            do { try await startOffer(to: from) } catch { return drop(topic, "cannot call \(from): \(error)") }
        case roomTopic("close"):
            onEvent(.peerLeft(from))
            earlyCandidates.forget(from)
            if let link = links[from] {
                link.closedByPeer = true
                closeLink(link)
            }
        case userTopic(options.user, "offer"):
            guard event.args.count >= 2 else { return drop(topic, "offer without a description argument") }
            do { await roomOffer(try Signaling.description(from: event.args[1]), from: from) } catch { return drop(topic, error.reason) }
        case userTopic(options.user, "answer"):
            guard event.args.count >= 2 else { return drop(topic, "answer without a description argument") }
            do { return await applyAnswer(try Signaling.description(from: event.args[1]), peer: from) } catch { return drop(topic, error.reason) }
        case userTopic(options.user, "candidate"):
            guard event.args.count >= 2 else { return drop(topic, "candidate without a candidate argument") }
            do { remoteCandidate(try Signaling.candidate(from: event.args[1]), peer: from, topic: topic) } catch { return drop(topic, error.reason) }
        default: break
        }
        return nil
    }

    private func drop(_ topic: String, _ reason: String) -> CallResult? {
        onEvent(.signalingError(topic: topic, reason: reason))
        return nil
    }

    // MARK: Offer / answer

    private func makeLink(peer: String, offerer: Bool) throws -> Link {
        let several = isRoom
        let videoPath = options.videoPath(peer: peer, several: several)
        let audioPath = options.audioPath(peer: peer, several: several)
        let feed = self.feed
        let pc = try PeerConnection(configuration: options.connectionConfiguration) { event in
            feed.yield(.connection(peer: peer, event: event))
        }
        let receive = ReceiveOptions(ivfPath: videoPath, oggPath: audioPath, decode: options.decode)
        pc.addTransceiver(.audio, direction: options.audio == .none ? .recvonly : .sendrecv,
                          audio: try options.audio.makeSource(), encoding: options.encoding, receive: receive)
        pc.addTransceiver(.video, direction: options.video == .none ? .recvonly : .sendrecv,
                          video: try options.video.makeSource(), encoding: options.encoding, receive: receive)
        let link = Link(peer: peer, pc: pc, offerer: offerer, videoPath: videoPath, audioPath: audioPath)
        links[peer] = link
        return link
    }

    private func startOffer(to peer: String) async throws {
        earlyCandidates.forget(peer)  // from before our offer: not for it
        let link = try makeLink(peer: peer, offerer: true)
        let offer = try link.pc.createOffer()
        try link.pc.setLocalDescription(offer)
        let sent = options.trickle ? offer : await vanilla(link.pc, offer)
        link.offer = sent
        link.offerIdentity = Self.identity(sent.sdp)
        link.lastOfferPublish = Date()
        await publishOffer(sent, link: link)
        onEvent(.milestone("offerPublished", peer: peer))
        if !isRoom { report(.ringing, nil, nil) }
    }

    /// Waits for gathering to complete (vanilla ICE) and returns the description with
    /// every candidate; gives up after 10 s with what there is.
    private func vanilla(_ pc: PeerConnection, _ fallback: SessionDescriptionInit) async -> SessionDescriptionInit {
        let deadline = Date().addingTimeInterval(10)
        while pc.iceGatheringState != .complete && Date() < deadline && hangUpRequested.value == 0 {
            try? await Task.sleep(nanoseconds: 10_000_000)
        }
        return pc.localDescription ?? fallback
    }

    private func publishOffer(_ offer: SessionDescriptionInit, link: Link) async {
        guard let session else { return }
        if isRoom {
            _ = try? await session.publish(userTopic(link.peer, "offer"),
                                           args: [.string(options.user), Signaling.value(offer, asString: true)])
        } else {
            _ = try? await session.publish(legacyTopic("offer"), args: [Signaling.value(offer, asString: options.descriptionAsString)])
        }
    }

    private func publishAnswer(_ answer: SessionDescriptionInit, to peer: String) async {
        guard let session else { return }
        if isRoom {
            _ = try? await session.publish(userTopic(peer, "answer"), args: [.string(options.user), Signaling.value(answer, asString: true)])
        } else {
            _ = try? await session.publish(legacyTopic("answer"), args: [Signaling.value(answer, asString: options.descriptionAsString)])
        }
    }

    /// The `o=` session id and version of an SDP, which identify an offer (RFC 8866 §5.2).
    static func identity(_ sdp: String) -> String? {
        guard let line = sdp.split(whereSeparator: \.isNewline).first(where: { $0.hasPrefix("o=") }) else { return nil }
        let fields = line.dropFirst(2).split(separator: " ")
        guard fields.count >= 3 else { return nil }
        return "\(fields[1]) \(fields[2])"
    }

    private func legacyOffer(_ offer: SessionDescriptionInit) async {
        guard offer.type == .offer else {
            onEvent(.signalingError(topic: legacyTopic("offer"), reason: "description of type \(offer.type.rawValue) on the offer topic"))
            return
        }
        let identity = Self.identity(offer.sdp)
        if let link = links["offerer"] {
            if identity != nil, identity == link.offerIdentity {
                // The same offer again: our answer may have been missed (now with every candidate).
                if let answer = link.answer { await publishAnswer(link.pc.localDescription ?? answer, to: "offerer") }
            } else {
                await decline(offer, identity: identity)
            }
            return
        }
        await answerOffer(offer, from: "offerer", identity: identity)
    }

    private func roomOffer(_ offer: SessionDescriptionInit, from peer: String) async {
        guard offer.type == .offer else {
            onEvent(.signalingError(topic: userTopic(options.user, "offer"), reason: "description of type \(offer.type.rawValue) from \(peer)"))
            return
        }
        let identity = Self.identity(offer.sdp)
        if let link = links[peer] {
            if identity == link.offerIdentity, let answer = link.answer {
                await publishAnswer(link.pc.localDescription ?? answer, to: peer)
                return
            }
            // Glare (both called each other) or a new session from the same user:
            // the lower user id keeps its own offer, the other answers.
            if link.offerer && !link.answered && options.user < peer { return }
            closeLink(link, publish: false)
        }
        await answerOffer(offer, from: peer, identity: identity)
    }

    private func answerOffer(_ offer: SessionDescriptionInit, from peer: String, identity: String?) async {
        let link: Link
        do { link = try makeLink(peer: peer, offerer: false) } catch {
            onEvent(.signalingError(topic: "offer", reason: "cannot create a connection for \(peer): \(error)"))
            return
        }
        link.offerIdentity = identity
        onEvent(.milestone("offerReceived", peer: peer))
        for held in earlyCandidates.take(for: peer) {  // the connection holds them until the offer is set
            remoteCandidate(held.candidate, peer: peer, topic: held.topic)
        }
        do {
            try link.pc.setRemoteDescription(offer)
            let answer = try link.pc.createAnswer()
            try link.pc.setLocalDescription(answer)
            let sent = options.trickle ? answer : await vanilla(link.pc, answer)
            link.answer = sent
            link.answered = true
            await publishAnswer(sent, to: peer)
            onEvent(.milestone("answerPublished", peer: peer))
            if link.pc.connectionState == .failed {
                link.failed = (ExitCode.ice, link.pc.failureReason ?? "negotiation failed")
                report(.failed, isRoom ? peer : nil, link.pc.failureReason)
            }
        } catch {
            onEvent(.signalingError(topic: isRoom ? userTopic(options.user, "offer") : legacyTopic("offer"),
                                    reason: "offer from \(peer) refused: \(error)"))
            closeLink(link, publish: false)
        }
    }

    /// Declines `offer` while in a call: an answer rejecting every m-section, with the
    /// offer's `o=` session id and version so only its offerer takes it.
    /// An offer whose SDP does not parse is no call to decline: it is reported as a
    /// signaling error with the parser's reason and dropped.
    private func decline(_ offer: SessionDescriptionInit, identity: String?) async {
        let parsed: SessionDescription
        do { parsed = try SessionDescription(parsing: offer.sdp) } catch {
            onEvent(.signalingError(topic: legacyTopic("offer"), reason: "offer refused: unusable session description: \(error)"))
            return
        }
        onEvent(.busy(from: identity.map { "offer o=\($0)" } ?? "an offer", reason: "already in a call"))
        var answer = SessionDescription(origin: Origin(sessionId: parsed.origin.sessionId, sessionVersion: parsed.origin.sessionVersion))
        answer.media = parsed.media.map { m in
            var r = MediaDescription(kind: m.kind, port: 0, proto: m.proto, formats: m.formats)
            r.mid = m.mid
            r.connection = Connection()
            r.direction = .inactive
            return r
        }
        await publishAnswer(SessionDescriptionInit(type: .answer, sdp: answer.serialized()), to: "offerer")
    }

    private func applyAnswer(_ answer: SessionDescriptionInit, peer: String) async -> CallResult? {
        guard answer.type == .answer else {
            return drop(isRoom ? userTopic(options.user, "answer") : legacyTopic("answer"), "description of type \(answer.type.rawValue) on the answer topic")
        }
        guard let link = links[peer], link.offerer, !link.answered else { return nil }
        if let parsed = try? SessionDescription(parsing: answer.sdp), !parsed.media.isEmpty,
           parsed.media.allSatisfy({ $0.port == 0 }) {
            // A decline: ours only when it repeats our offer's o= line.
            guard let mine = link.offerIdentity, Self.identity(answer.sdp) == mine else { return nil }
            link.answered = true
            link.declined = true
            if isRoom {
                closeLink(link, publish: false)
                report(.busy, peer, "\(peer) declined the call")
                return nil
            }
            return await end(code: ExitCode.busy, state: .busy, reason: "the answerer is busy in another call")
        }
        do {
            onEvent(.milestone("answerReceived", peer: peer))
            try link.pc.setRemoteDescription(answer)
            link.answered = true
            link.answer = answer
        } catch {
            return drop(isRoom ? userTopic(options.user, "answer") : legacyTopic("answer"), "answer from \(peer) refused: \(error)")
        }
        return nil
    }

    private func remoteCandidate(_ candidate: IceCandidateInit, peer: String, topic: String) {
        guard let link = links[peer] else { return earlyCandidates.hold(candidate, topic: topic, from: peer) }
        // Our own, echoed by the router: by our ufrag when the candidate names one, else by
        // its text (never for end-of-candidates, whose text is the same from both sides).
        if let ufrag = candidate.usernameFragment, !ufrag.isEmpty {
            if link.localUfrags.contains(ufrag) { return }
        } else if !candidate.isEndOfCandidates, link.published.contains(candidate.candidate) {
            return
        }
        if !candidate.isEndOfCandidates { onEvent(.candidate(peer: peer, local: false, candidate: candidate.candidate)) }
        do { try link.pc.addIceCandidate(candidate) } catch {
            onEvent(.signalingError(topic: topic, reason: "\(error)"))
        }
    }

    // MARK: Connection events

    private func connectionEvent(peer: String, event: PeerConnectionEvent) async -> CallResult? {
        guard let link = links[peer] else { return nil }
        switch event {
        case let .localCandidate(c):
            guard options.trickle, let session else { return nil }
            link.published.insert(c.candidate)
            if let ufrag = c.usernameFragment { link.localUfrags.insert(ufrag) }
            if !c.isEndOfCandidates { onEvent(.candidate(peer: peer, local: true, candidate: c.candidate)) }
            if isRoom {
                _ = try? await session.publish(userTopic(peer, "candidate"), args: [.string(options.user), Signaling.value(c)])
            } else {
                _ = try? await session.publish(legacyTopic("candidate"), args: [Signaling.value(c)])
            }
        case let .track(info):
            onEvent(.track(peer: peer, kind: info.kind, mid: info.mid, codec: info.codec))
        case let .remoteCandidateDropped(candidate, reason):
            onEvent(.candidateDropped(peer: peer, candidate: candidate, reason: reason))
        case let .iceConnectionState(s) where s == .connected || s == .completed:
            guard !link.iceConnected else { return nil }
            link.iceConnected = true
            onEvent(.milestone("iceConnected", peer: peer))
        case let .dtlsState(s) where s == .connected:
            onEvent(.milestone("dtlsConnected", peer: peer))
        case let .firstRemoteFrame(kind, _):
            onEvent(.milestone(kind == "video" ? "firstRemoteFrame" : "firstRemoteAudio", peer: peer))
        case let .connectionState(s, reason):
            onEvent(.connectionState(peer: peer, state: s.rawValue, reason: reason))
            switch s {
            case .connected:
                guard !link.established else { return nil }
                link.established = true
                let directions = link.pc.allTransceivers.compactMap(\.currentDirection)
                let hold = !directions.isEmpty && directions.allSatisfy { $0 == .inactive }
                if establishedAt == nil {
                    establishedAt = Date()
                    report(hold ? .hold : .established, isRoom ? peer : nil, nil)
                } else if isRoom {
                    report(hold ? .hold : .established, peer, nil)
                }
            case .failed:
                let text = reason ?? "failed"
                let code = text.hasPrefix("DTLS") ? ExitCode.dtls : ExitCode.ice
                link.failed = (code, text)
                if isRoom {
                    report(.failed, peer, text)
                    closeLink(link, publish: false)
                    return nil
                }
                return await end(code: code, state: .failed, reason: text)
            case .closed:
                if link.pc.closedByPeer, !isRoom {
                    link.closedByPeer = true
                    return await end(code: nil, state: .finished, reason: "the peer hung up (DTLS close_notify)", announce: false)
                }
            default: break
            }
        default: break
        }
        return nil
    }

    // MARK: Ending

    private func closeLink(_ link: Link, publish: Bool = false) {
        earlyCandidates.forget(link.peer)
        if let failure = link.failed { failedLinks.append(failure) }
        link.pc.close()
        let s = link.pc.getStats()
        let receivesVideo = link.pc.allTransceivers.contains { $0.kind == .video && $0.currentDirection?.receives == true }
        let result = PeerResult(peer: link.peer, videoPath: link.videoPath, audioPath: link.audioPath, stats: s,
                                videoFramesWritten: s.inbound("video")?.framesWritten ?? 0,
                                audioPacketsWritten: s.inbound("audio")?.framesWritten ?? 0,
                                receivesVideo: receivesVideo)
        if link.inCall { ended.append(result) }
        links[link.peer] = nil
        if link.inCall {
            onEvent(.stats(peer: link.peer, report: s, videoPath: link.videoPath, audioPath: link.audioPath))
        }
    }

    /// Ends the call: publishes close, closes every connection (files complete), leaves
    /// the router, and computes the exit code (`code` nil: 0, or 7 below --min-frames).
    private func end(code: Int32?, state final: CallState, reason: String?, announce: Bool = true) async -> CallResult {
        finishing = true
        if let session, announce {
            if isRoom {
                _ = try? await session.publish(roomTopic("close"), args: [.string(options.user)])
            } else if links.values.contains(where: { $0.inCall }) {
                _ = try? await session.publish(legacyTopic("close"))
            }
        }
        // Before the connections close: how far the furthest one got, for a call that
        // never reached `established`, and the words its final reason ends with.
        let reached = establishedAt == nil ? furthestStep() : nil
        let neverEstablished = reached.map { "the call was never established (reached: \($0.step))" }
        for link in links.values.sorted(by: { $0.peer < $1.peer }) { closeLink(link) }
        if let session { await session.leave() }
        session = nil
        var exit = code
        var finalState = final
        var why = reason
        if exit == nil {
            if establishedAt == nil, let failure = failedLinks.first {
                exit = failure.code
                finalState = .failed
                why = [failure.reason, neverEstablished].compactMap { $0 }.joined(separator: ": ")
            } else if let reached {
                // A call that never connected is never a pass, however it ended.
                exit = reached.code
                finalState = .failed
                why = [why, neverEstablished].compactMap { $0 }.joined(separator: ": ")
            } else if let (short, required) = tooFewFrames() {
                exit = ExitCode.tooFewFrames
                finalState = .failed
                why = "\(short.videoPath) has \(short.videoFramesWritten) frames, fewer than --min-frames \(required)"
                    + (options.minFrames == nil ? " (the default when video is received; --min-frames 0 turns it off)" : "")
            } else {
                exit = ExitCode.ok
            }
        } else if code == ExitCode.ice || code == ExitCode.dtls, let neverEstablished {
            // A transport failure before `established` names the step reached too.
            why = [why, neverEstablished].compactMap { $0 }.joined(separator: ": ")
        }
        return finish(code: exit ?? ExitCode.ok, state: finalState, reason: why)
    }

    /// The first recorded peer with fewer video frames than required, and the requirement:
    /// `--min-frames`, or by default 1 for a peer that was to send us video.
    private func tooFewFrames() -> (PeerResult, Int)? {
        for peer in ended {
            let required = options.minFrames ?? (peer.receivesVideo ? 1 : 0)
            if required > 0, peer.videoFramesWritten < required { return (peer, required) }
        }
        return nil
    }

    /// For a call that never reached `established`: the exit code of the step it stopped
    /// at (4 no offer/answer exchanged, 5 ICE not connected, 6 DTLS not connected) and a
    /// phrase naming the furthest step any connection reached.
    private func furthestStep() -> (code: Int32, step: String) {
        let exchanged = links.values.filter { $0.answered && !$0.declined }
        if exchanged.isEmpty {
            let waiting = links.values.contains { $0.offerer } ? "offer published, no answer"
                : (options.role == .answer ? "no offer received" : "no peer connected")
            return (ExitCode.timeout, waiting)
        }
        if let ice = exchanged.first(where: { $0.iceConnected }) {
            return (ExitCode.dtls, "offer/answer exchanged, ICE connected, DTLS \(ice.pc.dtlsTransportState.rawValue)")
        }
        let states = Set(exchanged.map { $0.pc.iceConnectionState.rawValue }).sorted().joined(separator: "/")
        return (ExitCode.ice, "offer/answer exchanged, ICE \(states)")
    }

    private var failedLinks: [(code: Int32, reason: String)] = []

    private func finish(code: Int32, state final: CallState, reason: String?) -> CallResult {
        report(final, nil, reason)
        feed.finish()
        return CallResult(exitCode: code, state: final, reason: reason, peers: ended)
    }

    private func report(_ s: CallState, _ peer: String?, _ reason: String?) {
        if peer == nil { state = s }
        onEvent(.state(s, peer: peer, reason: reason))
    }
}

/// 0 = no hang-up, 1 = hung up, 2 = interrupted; set from any thread.
final class HangUpFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var stored = 0
    /// The current value.
    var value: Int { lock.withLock { stored } }
    /// Sets the value (the larger of the old and new: interrupted wins).
    func set(_ v: Int) { lock.withLock { stored = max(stored, v) } }
}

func formatSeconds(_ s: Double) -> String { s == s.rounded() ? String(Int(s)) : String(s) }
