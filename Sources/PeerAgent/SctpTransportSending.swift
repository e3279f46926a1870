// SctpTransport's sending: messages queued by stream and handed to the association in turn (StreamSendQueue), the buffered amount and bufferedamountlow (W3C RTCDataChannel), retries on a full send buffer.
import SCTP

extension SctpTransport {
    /// Queues `message` of `channel` (its buffered amount already counts it).
    func enqueue(_ message: DataChannelMessage, on channel: DataChannel) {
        let (ppid, bytes): (DataChannelPPID, [UInt8]) = switch message {
        case .text(let t): t.isEmpty ? (.stringEmpty, [0]) : (.string, Array(t.utf8))
        case .binary(let b): b.isEmpty ? (.binaryEmpty, [0]) : (.binary, b)
        }
        loop.async { [weak self] in
            guard let self, let sid = channel.id else { return }
            self.queue(Outgoing(channel: channel, streamId: sid, ppid: ppid, bytes: bytes, userBytes: message.byteCount))
            self.drain()
        }
    }

    /// Queues `item` last on its stream (loop thread).
    func queue(_ item: Outgoing) { confined.value.outbox.append(item, stream: item.streamId) }

    /// Test hook: sends `bytes` as they are on `stream` with payload protocol `ppid`
    /// (malformed DCEP, unknown PPIDs, oversized messages), after what is queued; the rest
    /// of a message the buffer did not take is sent 1 ms later (one raw message at a time).
    func sendRaw(_ bytes: [UInt8], stream: UInt16, ppid: UInt32, from offset: Int = 0) {
        loop.async { [weak self] in
            guard let self, let association = self.confined.value.association else { return }
            var offset = offset
            while offset < bytes.count {
                guard case .accepted(let n)? = try? association.send(bytes[offset...], streamId: stream, ppid: ppid,
                                                                     unordered: false, reliability: .reliable) else {
                    let at = offset
                    self.loop.after(milliseconds: 1) { [weak self] in self?.sendRaw(bytes, stream: stream, ppid: ppid, from: at) }
                    return
                }
                offset += n
            }
        }
    }

    /// Sends what waits, in order, until the association's buffer is full.
    func drain() {
        let c = confined.value
        guard c.up, let association = c.association else { return }
        while let (_, item) = c.outbox.current {
            let ch = item.channel
            if ch.readyState == .closed, item.offset == 0 {  // a closed channel's queue is dropped
                finished(sent: false)
                continue
            }
            // DCEP goes ordered; user messages exist only once the peer confirmed the channel
            // (our channel opens on its ACK or first message), so unordered ones may go so
            // (RFC 8832 §6).
            let unordered = item.userBytes != nil && !ch.ordered
            let reliability: SCTPReliability = item.userBytes == nil ? .reliable : ch.reliability
            let outcome: SCTPAssociation.SendOutcome
            do {
                outcome = try association.send(item.bytes[item.offset...], streamId: item.streamId, ppid: item.ppid.rawValue,
                                               unordered: unordered, reliability: reliability)
            } catch {
                onEvent(.error(ch, "data channel \"\(ch.label)\": \(error)"))
                finished(sent: false)
                continue
            }
            guard case .accepted(let n) = outcome else {
                retryLater()
                break
            }
            guard item.offset + n >= item.bytes.count else {  // the rest keeps the turn
                c.outbox.updateCurrent { $0.offset += n }
                retryLater()
                break
            }
            finished(sent: true)
        }
    }

    /// Drains again in ``retryMs`` unless a drain is due already.
    private func retryLater() {
        let c = confined.value
        guard c.retry == 0 else { return }
        c.retry = loop.after(milliseconds: Self.retryMs) { [weak self] in
            guard let self else { return }
            self.confined.value.retry = 0
            self.drain()
        }
    }

    /// The current item left the queue: counts, the buffered amount, a closing channel's reset.
    private func finished(sent: Bool) {
        guard let item = confined.value.outbox.removeCurrent() else { return }
        let ch = item.channel
        if let size = item.userBytes {
            let low = ch.state.withLock { s -> Bool in
                // Dropped unsent from a closed channel: W3C keeps it in bufferedAmount.
                guard sent || s.readyState != .closed else { return false }
                let before = s.bufferedAmount
                s.bufferedAmount = max(0, s.bufferedAmount - size)
                if sent {
                    s.messagesSent += 1
                    s.bytesSent += size
                }
                return before > s.bufferedAmountLowThreshold && s.bufferedAmount <= s.bufferedAmountLowThreshold
            }
            if low { onEvent(.bufferedAmountLow(ch)) }
        }
        if ch.readyState == .closing { resetIfDrained(ch) }
    }
}
