// SctpTransport: W3C RTCSctpTransport — the connection's SCTP association over DTLS (RFC 8261, SDP RFC 8841 or the legacy a=sctpmap form) and its data channels: DCEP (RFC 8832; ours open on the peer's ACK), stream ids by DTLS role, sends in order per channel, channels in turn, with a buffered amount, closing by stream reset (RFC 8831 §6.7); receiving in SctpTransportReceiving.swift.
import DTLS
import EventLoop
import SCTP
import SDP
import Synchronization

/// The connection's data channel transport (W3C `RTCSctpTransport`): whether the
/// descriptions carry a data section (`m=application … webrtc-datachannel`), its
/// negotiation, the association once DTLS is connected, and every channel.
///
/// Threading: channels may be created, sent on and closed from any thread; the SCTP
/// work (the association, the queue of what waits to be sent) is confined to the event
/// loop (`confined`); what other threads read is behind `shared`, never held while
/// calling out.
public final class SctpTransport: Sendable {
    let loop: EventLoop
    let onEvent: @Sendable (DataChannelEvent) -> Void

    struct Shared {
        var channels: [DataChannel] = []
        /// The descriptions carry a data section (we created a channel, or accepted the peer's).
        var wanted = false
        var mid: String?
        /// From the negotiated remote section: its `a=sctp-port` and `a=max-message-size`.
        var remotePort: Int?
        var remoteMaxMessageSize = JSEP.defaultMaxMessageSize
        /// The data section was negotiated in the legacy `a=sctpmap` form: our later offers
        /// keep it, and messages are 64 KiB at most both ways.
        var legacyData: LegacyDataForm?
        /// The largest message we take, bytes (our `a=max-message-size`; 65,536 in the
        /// legacy form), fixed when the association starts.
        var localMaxMessageSize = JSEP.maxMessageSize
        /// What the peer sent that was dropped, by reason (``DataChannelDiscards``).
        var discards = DataChannelDiscards()
        var role: DTLSRole?
        var state: SctpTransportState = .new
        /// ``SctpTransport/close()`` ran (the connection closed): final, nothing restarts.
        var ended = false
        /// The next channel's ``DataChannel/serial``.
        var nextSerial = 0
        /// Streams whose reset the peer denied or failed: never given to a channel again in
        /// this association (their sequence numbers were never reset).
        var blockedStreams: Set<UInt16> = []
    }
    let shared = Mutex(Shared())

    /// A message (or DCEP message) waiting for room in the association.
    struct Outgoing {
        let channel: DataChannel
        let streamId: UInt16
        let ppid: DataChannelPPID
        let bytes: [UInt8]
        var offset = 0
        /// Counted in the channel's buffered amount and counts (a user message).
        let userBytes: Int?
    }

    /// Loop-thread state.
    final class Confined {
        var association: SCTPAssociation?
        /// What waits for room in the association, by stream, taken round-robin.
        var outbox = StreamSendQueue<Outgoing>()
        var up = false
        /// The association's last status, kept when it closes (for the final stats).
        var lastStatus: SCTPAssociation.Status?
        /// A drain is due in ``SctpTransport/retryMs`` (the queue stopped on a full buffer).
        var retry: UInt32 = 0
        /// Messages sent in parts with the deprecated PPIDs 52 and 54 (RFC 8831 §8).
        var partials = PartialMessages(messageLimit: JSEP.maxMessageSize, totalLimit: 4 << 20)
        /// Stream ids below this are usable: the fewer of the association's inbound and
        /// outbound stream counts (RFC 4960 §5.1.1; ours offered 1,024 each way).
        var streamLimit = SCTPAssociation.streams
        /// Streams we reset to refuse what the peer sent on them (no channel holds them),
        /// until that reset is done: more on them is counted, not reset or reported again.
        var refusing: Set<UInt16> = []
        /// The association's number: 0 for the first, one more for each made after a
        /// ``SctpTransport/restart()``; an older one's late events are dropped.
        var generation = 0
    }

    /// How soon a queue that stopped on a full send buffer tries again, ms, should no
    /// `writable` event come first: libusrsctp's send callback and sender-dry event were
    /// seen to stay silent with room in its buffer after a partial send (explicit EOR),
    /// leaving thousands of messages queued and the association idle (a 10 % loss run).
    static let retryMs: UInt32 = 10
    let confined: LoopBound<Confined>

    init(loop: EventLoop, onEvent: @escaping @Sendable (DataChannelEvent) -> Void) {
        self.loop = loop
        self.onEvent = onEvent
        confined = LoopBound(Confined(), loop: loop)
    }

    /// The association's state.
    public var state: SctpTransportState { shared.withLock { $0.state } }
    /// The largest message the peer takes, bytes (its `a=max-message-size`; 0 there means
    /// any; 65,536 at most in the legacy `a=sctpmap` form).
    public var remoteMaxMessageSize: Int { shared.withLock { $0.remoteMaxMessageSize } }
    /// What the peer sent that the data channels dropped, by reason, and the streams reset for it.
    public var discards: DataChannelDiscards { shared.withLock { $0.discards } }
    /// The descriptions should carry a data section.
    var wantsSection: Bool { shared.withLock { $0.wanted } }
    /// Every channel, ours and the peer's, in the order they were made.
    public var channels: [DataChannel] { shared.withLock { $0.channels } }

    // MARK: Channels

    /// Makes a channel (W3C `createDataChannel`); it opens once the association is up and
    /// the peer acknowledged its DATA_CHANNEL_OPEN (a negotiated one: once it is up).
    /// - Throws: ``DataChannelError/invalidOptions(_:)`` for a label or protocol over
    ///   65,535 bytes, both `maxRetransmits` and `maxPacketLifeTime`, `negotiated` without
    ///   an id, an id of 1,024 or more, or an id another channel holds.
    func createChannel(label: String, options: DataChannelInit) throws(DataChannelError) -> DataChannel {
        guard label.utf8.count <= 65_535 else { throw .invalidOptions("label of \(label.utf8.count) bytes (at most 65535)") }
        guard options.protocol.utf8.count <= 65_535 else { throw .invalidOptions("protocol of \(options.protocol.utf8.count) bytes (at most 65535)") }
        guard options.maxRetransmits == nil || options.maxPacketLifeTime == nil else {
            throw .invalidOptions("maxRetransmits and maxPacketLifeTime both given for \"\(label)\" (one at most)")
        }
        guard !options.negotiated || options.id != nil else { throw .invalidOptions("negotiated channel \"\(label)\" without an id") }
        if let id = options.id, id >= SCTPAssociation.streams {
            throw .invalidOptions("id \(id) for \"\(label)\" (stream ids 0–\(SCTPAssociation.streams - 1))")
        }
        var options = options
        if !options.negotiated { options.id = nil }  // W3C: the id is the DTLS role's to choose (RFC 8832 §6)
        let channel = try shared.withLock { s throws(DataChannelError) in
            guard s.state != .closed else { throw DataChannelError.invalidOptions("the connection is closed") }
            if let id = options.id, s.channels.contains(where: { $0.id == id && $0.readyState != .closed }) {
                throw .invalidOptions("id \(id) for \"\(label)\" is taken")
            }
            let channel = DataChannel(label: label, options: options, transport: self, serial: s.nextSerial)
            s.nextSerial += 1
            s.channels.append(channel)
            s.wanted = true
            return channel
        }
        loop.async { [weak self] in self?.openWaitingChannels() }
        return channel
    }

    // MARK: Negotiation

    /// The data section for our next description, when there is one to offer or accept.
    func localTrack(cname: String) -> LocalTrack? {
        shared.withLock { s in
            guard s.wanted else { return nil }
            var track = LocalTrack(kind: .application, direction: .sendrecv, ssrc: 0, cname: cname, streamId: "", trackId: "", mid: s.mid)
            track.legacyData = s.legacyData  // a re-offer in the form the peer understood
            return track
        }
    }

    /// Our offer placed the data section: its mid.
    func offered(_ offer: SessionDescription) {
        shared.withLock { s in
            guard s.wanted, s.mid == nil else { return }
            s.mid = offer.media.first { $0.kind == .application && !$0.isRejected }?.mid
        }
    }

    /// Our offer, or the peer's, was rolled back (RFC 8829 §5.7): a data section mid that
    /// only it gave is forgotten, and a section only the peer's offer wanted is no longer
    /// wanted (our own channels still want one).
    func rolledBack(keeping mids: Set<String>) {
        shared.withLock { s in
            guard let mid = s.mid, !mids.contains(mid) else { return }
            s.mid = nil
            s.wanted = s.channels.contains { $0.readyState != .closed }
        }
    }

    /// A remote offer with a data section: we accept it (the answerer takes whatever
    /// channels the peer opens). One we cannot use (a malformed `a=sctpmap`) is reported
    /// (``DataChannelEvent/error(_:_:)``, naming the line): our answer rejects it.
    func remoteOffered(_ offer: SessionDescription) {
        for m in offer.media where !m.isRejected {
            if let problem = JSEP.dataSectionProblem(m) { onEvent(.error(nil, Self.unusable(m, problem, outcome: "our answer rejects it"))) }
        }
        guard let m = offer.media.first(where: { JSEP.isDataSection($0) && !$0.isRejected }) else { return }
        shared.withLock { s in
            s.wanted = true
            if s.mid == nil { s.mid = m.mid }
        }
    }

    /// An answer was applied: true when the data section was accepted (the peer's port,
    /// message size and form taken from `remote`: ``JSEP/sctpPort(of:)``,
    /// ``JSEP/peerMaxMessageSize(of:)``, ``JSEP/legacyForm(of:)``); a rejected one closes
    /// every channel — and when the peer's answer kept a section it cannot have meant (a
    /// malformed `a=sctpmap`), that is reported too.
    func negotiated(answer: SessionDescription, remote: SessionDescription?, role: DTLSRole?) -> Bool {
        let result: (accepted: Bool, closing: [DataChannel], problem: String?) = shared.withLock { s in
            guard s.wanted, let mid = s.mid, let ours = answer.media.first(where: { $0.mid == mid }) else { return (false, [], nil) }
            guard !ours.isRejected, JSEP.isDataSection(ours), let theirs = remote?.media.first(where: { $0.mid == mid }) else {
                s.wanted = false
                let problem = ours.isRejected ? nil : JSEP.dataSectionProblem(ours).map { Self.unusable(ours, $0, outcome: "the channels close") }
                return (false, s.channels.filter { $0.readyState != .closed }, problem)
            }
            s.remotePort = JSEP.sctpPort(of: theirs)
            s.remoteMaxMessageSize = JSEP.peerMaxMessageSize(of: theirs)
            s.legacyData = JSEP.legacyForm(of: theirs)
            if s.state == .new { s.localMaxMessageSize = s.legacyData == nil ? JSEP.maxMessageSize : JSEP.legacyMaxMessageSize }
            if let role { s.role = role }  // the DTLS role of the association in use (a new one may swap it)
            return (true, [], nil)
        }
        if !result.closing.isEmpty || result.problem != nil {
            // Off the caller's thread (it may hold the connection's lock): on the loop, as
            // every other channel state change.
            loop.async { [weak self] in
                if let problem = result.problem { self?.onEvent(.error(nil, problem)) }
                for channel in result.closing { self?.setState(channel, .closed) }
            }
        }
        return result.accepted
    }

    /// What an error event says of the peer's data section `m` that cannot be used for
    /// `problem`, and what follows (`outcome`).
    static func unusable(_ m: MediaDescription, _ problem: String, outcome: String) -> String {
        "the data section (mid \(m.mid ?? "none")) cannot be used, \(outcome): \(problem)"
    }

    /// Starts the association over `transport` once DTLS is connected and the data
    /// section negotiated (either may come last; at most once).
    func start(over transport: DtlsSrtpTransport) {
        loop.async { [weak self] in
            guard transport.state == .connected else { return }
            self?.startOnLoop(output: { packet in transport.sendApplicationData(packet) }, attach: { association in
                transport.setApplicationDataHandler { [weak association] record in association?.receive(record) }
            })
        }
    }

    /// Starts the association (loop thread, at most once): its packets go to `output`, and
    /// `attach` hands it to whatever carries the peer's packets to its `receive` — the DTLS
    /// transport's application data, or a test's wire to an association of its own.
    func startOnLoop(output: @escaping @Sendable ([UInt8]) -> Void, attach: (SCTPAssociation) -> Void) {
        let c = confined.value
        guard c.association == nil else { return }
        let started: (port: Int, limit: Int)? = shared.withLock { s in
            guard s.state == .new, let port = s.remotePort else { return nil }
            s.state = .connecting
            return (port, s.localMaxMessageSize)
        }
        guard let started, let remotePort = UInt16(exactly: started.port) else { return }
        let box = WeakBox(self)
        let generation = c.generation
        do {
            let association = try SCTPAssociation(localPort: UInt16(JSEP.sctpPort), remotePort: remotePort,
                                                  maximumReceiveMessageSize: started.limit, loop: loop, output: output,
                                                  onEvent: { event in
                                                      guard let me = box.value, me.confined.value.generation == generation else { return }
                                                      me.associationEvent(event)
                                                  })
            c.association = association
            c.partials = PartialMessages(messageLimit: started.limit, totalLimit: c.partials.totalLimit)
            attach(association)
            try association.connect()
        } catch {
            onEvent(.error(nil, "\(error)"))
            shared.withLock { $0.state = .closed }
        }
    }

    /// Closes the association and every channel (the connection closes). Loop thread or any.
    func close() {
        loop.sync {
            let c = confined.value
            if let status = c.association?.status { c.lastStatus = status }
            c.association?.close()
            c.association = nil
            c.outbox.removeAll()
            c.up = false
        }
        let open = shared.withLock { s in
            s.state = .closed
            s.ended = true
            return s.channels.filter { $0.readyState != .closed }
        }
        for channel in open { setState(channel, .closed) }
    }

    /// The DTLS association under this one was replaced (the peer came back with a new
    /// certificate, RFC 8829 §5.11, RFC 8842 §5): the SCTP association ends with it — its
    /// peer is gone, so nothing is sent, and its late events are dropped — every channel
    /// still open closes (W3C: the transport closed), and the transport is `new` again:
    /// once the new DTLS association connects, ``start(over:)`` makes a new SCTP
    /// association, where channels made from now on open (either side may make them, as at
    /// the start). After ``close()`` (the connection closed) it does nothing: `closed` is
    /// final there. (A transport `closed` because its association went down is restarted:
    /// the new DTLS association brings a new one.) Loop thread or any (waits for the loop
    /// thread).
    /// - Returns: the channels it closed, whose `closed` the caller reports
    ///   (``DataChannelEvent/state(_:_:)``) after what it reports first.
    func restart() -> [DataChannel] {
        guard !shared.withLock({ $0.ended }) else { return [] }
        loop.sync {
            let c = confined.value
            if let status = c.association?.status { c.lastStatus = status }
            c.generation += 1
            c.association?.close()
            c.association = nil
            c.outbox.removeAll()
            c.up = false
            c.partials = PartialMessages(messageLimit: JSEP.maxMessageSize, totalLimit: 4 << 20)
            c.streamLimit = SCTPAssociation.streams
            c.refusing = []
        }
        let open = shared.withLock { s -> [DataChannel] in
            guard !s.ended else { return [] }  // closed meanwhile
            s.state = .new
            s.blockedStreams = []
            return s.channels.filter { $0.readyState != .closed }
        }
        return open.filter { mark($0, .closed) }
    }

    /// The association's status for stats (waits for the loop thread).
    func status() -> SCTPAssociation.Status? {
        loop.sync { confined.value.association?.status ?? confined.value.lastStatus }
    }

    // MARK: Loop thread: the association's events

    private func associationEvent(_ event: SCTPAssociationEvent) {
        switch event {
        case let .up(inbound, outbound):
            confined.value.up = true
            confined.value.streamLimit = UInt16(clamping: min(inbound, outbound, Int(SCTPAssociation.streams)))
            shared.withLock { $0.state = .connected }
            openWaitingChannels()
            drain()
        case let .message(sid, ppid, data):
            received(data, stream: sid, ppid: ppid)
        case let .messageTooLarge(sid, ppid, bytes):
            count(\.tooLarge)
            let limit = confined.value.association?.maximumReceiveMessageSize ?? JSEP.maxMessageSize
            onEvent(.error(channel(sid), "a message of \(bytes) bytes (PPID \(ppid)) on stream \(sid) is over our max-message-size \(limit): dropped"))
        case .incomingStreamsReset(let sids):
            for sid in everyStreamIfEmpty(sids) { peerReset(sid) }
        case let .outgoingResetFailed(sids, denied):
            // The stream cannot be reused while its reset is not done: the channel is over.
            for sid in everyStreamIfEmpty(sids) {
                shared.withLock { _ = $0.blockedStreams.insert(sid) }
                confined.value.refusing.remove(sid)
                confined.value.partials.forget(sid)
                guard let ch = channel(sid) else { continue }
                onEvent(.error(ch, "data channel \"\(ch.label)\": the peer \(denied ? "denied" : "failed") the reset of stream \(sid) (RFC 6525); the channel is closed and the stream not used again"))
                setState(ch, .closed)
            }
        case .outgoingStreamsReset(let sids):
            for sid in everyStreamIfEmpty(sids) {
                confined.value.refusing.remove(sid)  // a refused stream is free again
                guard let ch = channel(sid) else { continue }
                let done = ch.state.withLock { s in
                    s.outgoingReset = true
                    return s.incomingReset
                }
                if done { setState(ch, .closed) }
            }
        case .writable:
            drain()
        case .down(let reason):
            confined.value.up = false
            let open = shared.withLock { s in
                s.state = .closed
                return s.channels.filter { $0.readyState != .closed }
            }
            // Not an error in itself: the peer's close aborts the association too (its
            // channels' `closed` says what ended).
            for ch in open { setState(ch, .closed) }
            _ = reason
        }
    }

    /// `sids`, or when it is empty (a reset of every stream, RFC 6525 §4.1) the stream of
    /// every channel not closed.
    private func everyStreamIfEmpty(_ sids: [UInt16]) -> [UInt16] {
        guard sids.isEmpty else { return sids }
        return shared.withLock { s in s.channels.filter { $0.readyState != .closed }.compactMap(\.id) }
    }

    /// The open channel (not closed) on stream `sid`.
    func channel(_ sid: UInt16) -> DataChannel? {
        shared.withLock { s in s.channels.last { $0.id == sid && $0.readyState != .closed } }
    }

    /// Gives each channel without a stream an id (even for the DTLS client, odd for the
    /// server, RFC 8832 §6) and opens it: DATA_CHANNEL_OPEN sent, the channel `open` when
    /// the peer acknowledges it (``acknowledged(_:)``); a negotiated one at once.
    private func openWaitingChannels() {
        guard confined.value.up else { return }
        let (waiting, role) = shared.withLock { s in
            (s.channels.filter { $0.readyState == .connecting && !$0.state.withLock { $0.awaitingAck } }, s.role)
        }
        let limit = confined.value.streamLimit
        for ch in waiting {
            var id = ch.id
            if id == nil {
                let refusing = confined.value.refusing
                let taken = shared.withLock { s in
                    Set(s.channels.filter { $0.readyState != .closed }.compactMap(\.id)).union(s.blockedStreams).union(refusing)
                }
                var next: UInt16 = role == .server ? 1 : 0
                while taken.contains(next), next < limit { next += 2 }
                guard next < limit else {
                    onEvent(.error(ch, "data channel \"\(ch.label)\": no stream id left (\(limit) streams)"))
                    setState(ch, .closed)
                    continue
                }
                id = next
                ch.state.withLock { $0.id = next }
            }
            guard let sid = id else { continue }
            guard !shared.withLock({ $0.blockedStreams.contains(sid) }) else {
                onEvent(.error(ch, "data channel \"\(ch.label)\": stream \(sid) cannot be used again (the peer refused its reset)"))
                setState(ch, .closed)
                continue
            }
            guard sid < limit else {
                onEvent(.error(ch, "data channel \"\(ch.label)\": id \(sid) is beyond the association's \(limit) streams (ids below \(limit))"))
                setState(ch, .closed)
                continue
            }
            if ch.negotiated {
                setState(ch, .open)
            } else {
                let open = DCEPMessage.open(type: ch.channelType, priority: 256, label: ch.label, protocol: ch.protocol)
                ch.state.withLock { $0.awaitingAck = true }
                queue(Outgoing(channel: ch, streamId: sid, ppid: .dcep, bytes: open.serialized, userBytes: nil))
            }
        }
        drain()
    }

    /// Our channel `ch` waited for the peer's DATA_CHANNEL_ACK and it came (or the peer's
    /// first message on the stream did, RFC 8832 §6): `open`, unless it was closed meanwhile.
    func acknowledged(_ ch: DataChannel) {
        let opens = ch.state.withLock { s in
            defer { s.awaitingAck = false }
            return s.awaitingAck && s.readyState == .connecting
        }
        guard opens else { return }
        setState(ch, .open)
        drain()
    }

    private func reset(_ ch: DataChannel, _ sid: UInt16) {
        do { try confined.value.association?.resetOutgoing([sid]) } catch {
            onEvent(.error(ch, "data channel \"\(ch.label)\": \(error)"))
            setState(ch, .closed)
        }
    }

    func setState(_ ch: DataChannel, _ new: DataChannelState) {
        guard mark(ch, new) else { return }
        onEvent(.state(ch, new))
    }

    /// Sets `ch`'s state to `new` without reporting it; false when it was `new` already or
    /// closed (closed is final).
    private func mark(_ ch: DataChannel, _ new: DataChannelState) -> Bool {
        let changed = ch.state.withLock { s -> Bool in
            guard s.readyState != new, s.readyState != .closed else { return false }
            s.readyState = new  // bufferedAmount stays as it is (W3C: it does not reset on close)
            return true
        }
        if changed, new == .closed { forgetClosedChannels() }
        return changed
    }

    /// Closed channels kept in ``channels`` (their stats stay readable); older ones are let
    /// go, so a peer that opens and closes channels all call long grows nothing.
    public static let closedChannelsKept = 64

    private func forgetClosedChannels() {
        shared.withLock { s in
            var closed = s.channels.count { $0.readyState == .closed }
            guard closed > Self.closedChannelsKept else { return }
            s.channels.removeAll { ch in
                guard closed > Self.closedChannelsKept, ch.readyState == .closed else { return false }
                closed -= 1
                return true
            }
        }
    }

    /// Closes `channel` (W3C close): `closing`; its stream is reset once what it queued
    /// has gone (RFC 8831 §6.7).
    func close(_ channel: DataChannel) {
        loop.async { [weak self] in
            guard let self else { return }
            switch channel.readyState {
            case .closing, .closed: return
            case .connecting where channel.state.withLock({ $0.awaitingAck }):
                // Our DATA_CHANNEL_OPEN is queued or sent: the peer has, or will have, the
                // channel, so the stream is reset after it (RFC 8831 §6.7).
                self.setState(channel, .closing)
                self.resetIfDrained(channel)
            case .connecting:  // no stream yet (the association is not up): nothing to reset
                self.setState(channel, .closing)  // W3C close(): closing first, then closed
                self.setState(channel, .closed)
            case .open:
                self.setState(channel, .closing)
                self.resetIfDrained(channel)
            }
        }
    }

    func resetIfDrained(_ ch: DataChannel) {
        let c = confined.value
        guard let sid = ch.id, !c.outbox.contains(stream: sid, where: { $0.channel === ch }) else { return }
        let needed = ch.state.withLock { s in
            defer { s.resetRequested = true }
            return !s.resetRequested
        }
        if needed { reset(ch, sid) }
    }
}
