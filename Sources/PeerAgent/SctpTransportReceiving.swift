// SctpTransport's receiving side: each message the peer sends judged by the stream rules (StreamVerdict: RFC 8832 §4–§6, RFC 8831 §6) — the peer's channels opened and acknowledged, ours opened by its ACK, messages delivered, the rest refused with the stream reset or dropped, each counted — and the peer's stream resets.
import SCTP

extension SctpTransport {
    /// A whole message from the peer on stream `sid` (loop thread).
    func received(_ data: [UInt8], stream sid: UInt16, ppid: UInt32) {
        let ch = channel(sid)
        let holder: StreamVerdict.Holder = ch.map { ch in .channel(label: ch.label, awaitingAck: ch.state.withLock { $0.awaitingAck }) } ?? .none
        let role = shared.withLock { $0.role }
        let verdict = StreamVerdict.judge(ppid: ppid, data: data, streamId: sid, weAreDTLSClient: role.map { $0 == .client }, holder: holder)
        if ch == nil, confined.value.refusing.contains(sid) {
            // Our reset of this stream is under way (reported once): what else comes on it
            // is counted, not taken — an OPEN there too, as on a stream in use.
            switch verdict {
            case .refuse(let why): count(Self.key(why))
            case .open: count(\.openStreamInUse)
            case .drop(let why): count(why == .unexpectedAck ? \.unexpectedAck : \.dcepMalformed)
            case .deliver, .acknowledged: break
            }
            return
        }
        switch verdict {
        case .deliver:
            guard let ch else { return }
            acknowledged(ch)  // the peer's first message on our channel stands for its ACK
            deliver(data, ppid: ppid, on: ch, stream: sid)
        case .acknowledged:
            if let ch { acknowledged(ch) }
        case let .open(type, _, label, proto):
            openRemote(type: type, label: label, protocol: proto, stream: sid)
        case .refuse(let why):
            refuse(why, data: data, stream: sid, holder: ch)
        case .drop(let why):
            count(why == .unexpectedAck ? \.unexpectedAck : \.dcepMalformed)
            onEvent(.error(ch, "stream \(sid): \(why): dropped"))
        }
    }

    /// The discard count of a refusal.
    static func key(_ why: StreamRefusal) -> WritableKeyPath<DataChannelDiscards, Int> {
        switch why {
        case .wrongParity: \.openWrongParity
        case .streamInUse: \.openStreamInUse
        case .malformedOpen: \.openMalformed
        case .unknownMessageType: \.dcepUnknownType
        case .noChannel: \.noChannel
        }
    }

    /// Adds one to the discard count at `key`.
    func count(_ key: WritableKeyPath<DataChannelDiscards, Int>) {
        shared.withLock { $0.discards[keyPath: key] += 1 }
    }

    /// The peer's DATA_CHANNEL_OPEN on a free stream of its parity: the channel is made,
    /// acknowledged (the ACK first on the stream) and reported, and open at once.
    private func openRemote(type: DCEPChannelType, label: String, protocol proto: String, stream sid: UInt16) {
        var options = DataChannelInit(ordered: type.ordered, protocol: proto, id: sid)
        switch type.reliability {
        case .reliable: break
        case .maxRetransmits(let n): options.maxRetransmits = UInt16(clamping: n)
        case .maxPacketLifeTime(let ms): options.maxPacketLifeTime = UInt16(clamping: ms)
        }
        let ch = shared.withLock { s in
            let ch = DataChannel(label: label, options: options, transport: self, serial: s.nextSerial)
            s.nextSerial += 1
            s.channels.append(ch)
            return ch
        }
        queue(Outgoing(channel: ch, streamId: sid, ppid: .dcep, bytes: DCEPMessage.ack.serialized, userBytes: nil))
        onEvent(.remoteOpened(ch))
        setState(ch, .open)
        drain()
    }

    /// A message the stream rules refuse: not acknowledged, dropped and counted, and our
    /// side of the stream reset (RFC 6525), so the peer's channel on it closes (RFC 8831
    /// §6.7); a channel on it here closes by that reset too. One error event per reset:
    /// what else arrives on a stream whose reset is under way is only counted
    /// (``received(_:stream:ppid:)``).
    private func refuse(_ why: StreamRefusal, data: [UInt8], stream sid: UInt16, holder ch: DataChannel?) {
        count(Self.key(why))
        let c = confined.value
        var what = "stream \(sid): \(why)"
        if case let .open(_, _, label, _)? = try? DCEPMessage(parsing: data) { what += " (its label \"\(StreamVerdict.shown(label))\")" }
        let isOpen = switch why {
        case .wrongParity, .streamInUse, .malformedOpen: true
        case .unknownMessageType, .noChannel: false
        }
        what += isOpen ? ": not acknowledged" : ": dropped"
        guard let ch else {
            c.refusing.insert(sid)
            count(\.streamsReset)
            onEvent(.error(nil, what + "; the stream is reset"))
            do { try c.association?.resetOutgoing([sid]) } catch {
                c.refusing.remove(sid)
                onEvent(.error(nil, "stream \(sid): \(error)"))
            }
            return
        }
        let closing = ch.readyState == .open || ch.readyState == .connecting
        onEvent(.error(ch, what + "; the stream is reset, closing data channel \"\(StreamVerdict.shown(ch.label))\""))
        guard closing else { return }  // closing already: its reset is under way
        count(\.streamsReset)
        setState(ch, .closing)
        resetIfDrained(ch)  // what it queued goes first (a send on a stream being reset waits)
    }

    /// User data for `ch`: a whole message (PPID 51, 53, 56, 57) or a part of one (the
    /// deprecated 52 and 54, joined by `PartialMessages`), delivered as a message event.
    private func deliver(_ data: [UInt8], ppid: UInt32, on ch: DataChannel, stream sid: UInt16) {
        let message: DataChannelMessage
        let kind = DataChannelPPID(rawValue: ppid)
        let c = confined.value
        if kind == .stringPartial || kind == .binaryPartial {
            switch c.partials.part(data, stream: sid) {
            case let .tooLarge(bytes)?:
                count(\.tooLarge)
                onEvent(.error(ch, "data channel \"\(ch.label)\": a message sent in parts (PPID \(ppid)) is over our max-message-size \(c.partials.messageLimit) at \(bytes) bytes: dropped"))
            case let .tooMuchInParts(total, bytes)?:
                count(\.tooLarge)
                onEvent(.error(ch, "data channel \"\(ch.label)\": messages in parts on every stream hold \(total) bytes, over \(c.partials.totalLimit): this one (PPID \(ppid), \(bytes) bytes so far) is dropped"))
            case nil: break
            }
            return
        }
        var data = data
        if kind == .string || kind == .binary {
            guard let joined = c.partials.last(data, stream: sid) else { return }  // the last part of one dropped
            data = joined
        }
        switch kind {
        case .string?:
            guard let text = String(validating: data, as: UTF8.self) else {
                count(\.notUTF8)
                onEvent(.error(ch, "data channel \"\(ch.label)\": a text message of \(data.count) bytes is not UTF-8: dropped"))
                return
            }
            message = .text(text)
        case .binary?: message = .binary(data)
        case .stringPartial?, .binaryPartial?: return
        case .stringEmpty?: message = .text("")
        case .binaryEmpty?: message = .binary([])
        case .dcep?, nil:
            count(\.unknownPPID)
            onEvent(.error(ch, "data channel \"\(ch.label)\": unknown PPID \(ppid) (\(data.count) bytes): dropped"))
            return
        }
        ch.state.withLock { s in
            s.messagesReceived += 1
            s.bytesReceived += message.byteCount
        }
        onEvent(.message(ch, message))
    }

    /// The peer reset its outgoing side of `sid`: the channel closes (we reset ours).
    func peerReset(_ sid: UInt16) {
        confined.value.partials.forget(sid)
        guard let ch = channel(sid) else { return }
        let (wasOpen, needReset, done) = ch.state.withLock { s in
            s.incomingReset = true
            let wasOpen = s.readyState == .open || s.readyState == .connecting
            defer { s.resetRequested = true }
            return (wasOpen, !s.resetRequested, s.outgoingReset)
        }
        if wasOpen { setState(ch, .closing) }
        if needReset {
            ch.state.withLock { $0.resetRequested = false }
            resetIfDrained(ch)  // what it queued goes first (a send on a stream being reset waits)
        }
        if done { setState(ch, .closed) }
    }
}
