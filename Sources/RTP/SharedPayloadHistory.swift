// SharedPayloadHistory: one stream's retransmission history over shared packetized frames — references, not copies, kept for a time (about 1 s), answering NACKs (RFC 4585 §6.2.1, RFC 4588 §1).

/// One stream's memory of the packets it sent from shared ``PacketizedFrame``s, so a
/// Generic NACK (RFC 4585 §6.2.1) is answered with the same packet again (RFC 4588 §1).
///
/// Each entry is a reference to the shared frame, the packet's index in it and the header
/// fields it was sent with (about 60 bytes, whatever the payload's size): the payload
/// bytes are the frame's, held once for every stream. Sized by time, not by count:
/// packets older than ``maximumAgeMs`` are let go as new ones are recorded (or on
/// ``prune(nowMs:)``), so the frames they hold are freed once every stream's history has
/// moved past them; ``maximumPackets`` only bounds a burst (at 1 s and 1,200-byte packets,
/// 4,096 packets is 39 Mbit/s).
///
/// Packets are recorded in sequence-number order (each the one after the last), so a
/// lookup is one subtraction; a recorded number that does not follow the last (a new
/// numbering) starts the history afresh.
public struct SharedPayloadHistory: RetransmissionStore, Sendable {
    /// Default age limit: 1,000 ms (a receiver has given up on the frame by then).
    public static let defaultMaximumAgeMs: Int64 = 1_000
    /// Default bound on packets held: 4,096.
    public static let defaultMaximumPackets = 4_096

    /// Packets older than this (ms since they were first sent) are neither resent nor kept.
    public let maximumAgeMs: Int64
    /// At most this many packets are held; beyond it the oldest goes first.
    public let maximumPackets: Int

    /// One packet sent: the shared frame, which of its packets, and how it went out.
    private struct Entry: Sendable {
        let frame: PacketizedFrame
        let index: Int
        let sequenceNumber: UInt16
        let timestamp: UInt32
        let sentAtMs: Int64
        let header: RTPStreamHeader
    }

    /// A ring of entries: `count` of them from `head`, oldest first.
    private var slots: [Entry?] = []
    private var head = 0
    /// Packets held.
    public private(set) var count = 0
    /// Payload bytes the held packets refer to (shared with other streams, not copies).
    public private(set) var payloadBytesReferenced = 0

    /// A history keeping packets up to `maximumAgeMs` old (≥ 1), at most `maximumPackets` (≥ 1).
    public init(maximumAgeMs: Int64 = SharedPayloadHistory.defaultMaximumAgeMs,
                maximumPackets: Int = SharedPayloadHistory.defaultMaximumPackets) {
        self.maximumAgeMs = max(1, maximumAgeMs)
        self.maximumPackets = max(1, maximumPackets)
    }

    /// Records that packet `index` of `frame` went out at `nowMs` with `sequenceNumber`,
    /// RTP `timestamp` and the stream's `header` fields (SSRC, payload type, extension) —
    /// kept as first sent. Lets go of packets older than ``maximumAgeMs`` first.
    public mutating func record(_ frame: PacketizedFrame, packet index: Int, sequenceNumber: UInt16, timestamp: UInt32,
                                header: RTPStreamHeader, nowMs: Int64) {
        guard frame.packets.indices.contains(index) else { return }
        prune(nowMs: nowMs)
        if let last = newest, last.sequenceNumber &+ 1 != sequenceNumber { removeAll() }
        if count == slots.count {
            if slots.count < maximumPackets {
                grow()
            } else {
                dropOldest()
            }
        }
        slots[(head + count) % slots.count] = Entry(frame: frame, index: index, sequenceNumber: sequenceNumber,
                                                    timestamp: timestamp, sentAtMs: nowMs, header: header)
        count += 1
        payloadBytesReferenced += frame.packets[index].length
    }

    /// Lets go of the packets sent more than ``maximumAgeMs`` before `nowMs` (and so of
    /// their share of the frames): for a stream that stopped sending (hold, the end of a
    /// source), called from its timer.
    public mutating func prune(nowMs: Int64) {
        while count > 0, let oldest = slots[head], nowMs - oldest.sentAtMs > maximumAgeMs {
            dropOldest()
        }
    }

    /// Lets go of every packet.
    public mutating func removeAll() {
        slots = Array(repeating: nil, count: slots.count)
        head = 0
        count = 0
        payloadBytesReferenced = 0
    }

    /// The shared frame packet `sequenceNumber` came from, when it is held (tests:
    /// identity of the shared payload).
    public func frame(of sequenceNumber: UInt16) -> PacketizedFrame? {
        entry(sequenceNumber)?.frame
    }

    /// The header and payload lengths (bytes) of packet `sequenceNumber` as first sent, when held.
    public func lengths(of sequenceNumber: UInt16) -> (header: Int, payload: Int)? {
        entry(sequenceNumber).map { ($0.header.headerLength, $0.frame.packets[$0.index].length) }
    }

    /// See ``RetransmissionStore/writePacket(sequenceNumber:nowMs:into:reserving:)``: the
    /// header as first sent (``RTPStreamHeader/write(_:packet:sequenceNumber:timestamp:into:reserving:)``)
    /// and the shared payload, one copy.
    public func writePacket(sequenceNumber: UInt16, nowMs: Int64, into buffer: inout [UInt8], reserving trailer: Int) -> Bool {
        guard let e = entry(sequenceNumber), nowMs - e.sentAtMs <= maximumAgeMs else { return false }
        return e.header.write(e.frame, packet: e.index, sequenceNumber: e.sequenceNumber, timestamp: e.timestamp,
                              into: &buffer, reserving: trailer)
    }

    // MARK: Ring

    private var newest: Entry? { count == 0 ? nil : slots[(head + count - 1) % slots.count] }

    private func entry(_ sequenceNumber: UInt16) -> Entry? {
        guard count > 0, let oldest = slots[head] else { return nil }
        let offset = Int(sequenceNumber &- oldest.sequenceNumber)
        guard offset < count, let e = slots[(head + offset) % slots.count], e.sequenceNumber == sequenceNumber else { return nil }
        return e
    }

    private mutating func dropOldest() {
        guard count > 0 else { return }
        if let e = slots[head] { payloadBytesReferenced -= e.frame.packets[e.index].length }
        slots[head] = nil
        head = (head + 1) % slots.count
        count -= 1
    }

    /// Doubles the ring (from 64), up to ``maximumPackets``, the entries laid out from 0.
    private mutating func grow() {
        let size = min(maximumPackets, max(64, slots.count * 2))
        var next: [Entry?] = Array(repeating: nil, count: size)
        for i in 0..<count { next[i] = slots[(head + i) % slots.count] }
        slots = next
        head = 0
    }
}
