// VP8FrameAssembler: the VP8 depayloader — RTP packets of one SSRC to whole frames in decode order, with loss and key-frame tracking (RFC 7741 §4.4).
import Bytes

/// The VP8 depayloader (RFC 7741 §4.4): turns the RTP packets of one SSRC, fed in
/// arrival order, into whole VP8 frames in decode (sequence number) order, and reports
/// the frames that could not be completed so the caller can send a PLI.
///
/// A frame is complete when the packets from one with S = 1 and PID = 0 to one with
/// the marker bit have contiguous sequence numbers and all carry the same RTP
/// timestamp; its VP8 bytes are the payloads after each packet's descriptor. A frame is
/// never emitted with a piece missing: it is dropped and reported in a ``Loss``.
///
/// Reordering: sequence numbers are unwrapped to 64 bits (``SequenceUnwrapper``), so
/// the 2^16 wrap is invisible. A missing packet is waited for until a packet at least
/// ``reorderWindow`` sequence numbers after it has arrived (default 64 packets); then it
/// is declared lost, with everything up to the next frame start. Optionally
/// (``reorderDelay``, in 90 kHz ticks) it is also declared lost once a packet has arrived
/// whose RTP timestamp is that far past the frame before the hole: a time bound taken
/// from the media clock, since there is no wall clock in here (at low packet rates 64
/// packets can be seconds; 9000 ticks = 100 ms is a reasonable bound for live video). Packets that arrive after their sequence number
/// was passed (the frame was emitted or declared lost) are ignored and counted as late;
/// repeated sequence numbers are ignored and counted as duplicates.
///
/// Loss reports: each ``Loss`` lists the frames it covers, in decode order. A frame of
/// which some packet arrived is named by its RTP timestamp and PictureID. A frame of
/// which nothing arrived is found from the PictureIDs around the gap (15- or 7-bit, with
/// wrap) and named by its PictureID alone; without PictureIDs it appears as one entry
/// with neither. Frames sent before the first packet received or after the last are
/// not knowable and never reported.
///
/// Garbage never traps: a packet whose descriptor does not parse (or whose SSRC is not
/// the first one seen) is counted and treated as a hole; an empty payload (a padding-only
/// packet) is skipped.
public struct VP8FrameAssembler: Sendable {
    /// One reassembled VP8 frame.
    public struct Frame: Equatable, Sendable {
        /// The VP8 frame bytes (descriptors stripped), starting with the frame tag (RFC 6386 §9.1).
        public var data: [UInt8]
        /// The RTP timestamp shared by the frame's packets (90 kHz ticks).
        public var timestamp: UInt32
        /// The PictureID from the first packet's descriptor (0–32767 or 0–127), if present.
        public var pictureID: UInt16?
        /// True when the frame tag's P bit (bit 0 of the first byte) is 0: a key frame.
        public var isKeyframe: Bool
        /// Key frames with a valid header (start code 9d 01 2a): the width in pixels, else `nil`.
        public var width: Int?
        /// Key frames with a valid header: the height in pixels, else `nil`.
        public var height: Int?
        /// Sequence number of the frame's first packet (S = 1, PID = 0).
        public var firstSequenceNumber: UInt16
        /// Sequence number of the frame's last packet (marker bit).
        public var lastSequenceNumber: UInt16
        /// Number of RTP packets the frame came in.
        public var packetCount: Int

        /// Creates a frame value from its fields.
        public init(data: [UInt8], timestamp: UInt32, pictureID: UInt16?, isKeyframe: Bool, width: Int?,
                    height: Int?, firstSequenceNumber: UInt16, lastSequenceNumber: UInt16, packetCount: Int) {
            self.data = data
            self.timestamp = timestamp
            self.pictureID = pictureID
            self.isKeyframe = isKeyframe
            self.width = width
            self.height = height
            self.firstSequenceNumber = firstSequenceNumber
            self.lastSequenceNumber = lastSequenceNumber
            self.packetCount = packetCount
        }
    }

    /// One frame that could not be completed.
    public struct LostFrame: Equatable, Sendable {
        /// Its RTP timestamp (90 kHz), when at least one of its packets arrived.
        public var timestamp: UInt32?
        /// Its PictureID, when one of its packets carried it or the neighbours' PictureIDs imply it.
        public var pictureID: UInt16?
        /// How many of its packets arrived (and were discarded); 0 when none did.
        public var receivedPackets: Int

        /// Creates a lost-frame value.
        public init(timestamp: UInt32?, pictureID: UInt16?, receivedPackets: Int) {
            self.timestamp = timestamp
            self.pictureID = pictureID
            self.receivedPackets = receivedPackets
        }
    }

    /// A report of frames dropped because packets were missing (the cue for a PLI, RFC 4585 §6.3.1).
    public struct Loss: Equatable, Sendable {
        /// The frames dropped, in decode order.
        public var frames: [LostFrame]
        /// Sequence numbers declared missing in the span this report covers, ascending in
        /// decode order (at most ``maximumListedMissing`` are listed). A hole that cost no
        /// frame (a lost padding packet: the PictureIDs around it are consecutive) is not
        /// reported, only counted in ``DepayloadCounts/packetsMissing``.
        public var missingSequenceNumbers: [UInt16]
        /// The number of sequence numbers declared missing in that span (may exceed the list).
        public var missingPacketCount: Int

        /// At most this many sequence numbers are listed in ``missingSequenceNumbers``.
        public static let maximumListedMissing = 256

        /// Creates a loss report.
        public init(frames: [LostFrame] = [], missingSequenceNumbers: [UInt16] = [], missingPacketCount: Int = 0) {
            self.frames = frames
            self.missingSequenceNumbers = missingSequenceNumbers
            self.missingPacketCount = missingPacketCount
        }
    }

    /// What the assembler hands back, in decode order: `.delivered` a complete frame,
    /// `.missing` the frames that could not be completed.
    public typealias Event = Depayloaded<Frame, Loss>

    /// Running totals since creation.
    public struct Counters: Equatable, Sendable, DepayloadCounted {
        /// The counts every depayloader keeps: packets received, duplicate, late (after
        /// their sequence number was passed: their frame emitted or declared lost), from
        /// another SSRC, empty (padding only, skipped), missing (never arrived in time);
        /// frames delivered and loss reports.
        public var packets = DepayloadCounts()
        /// Packets whose payload descriptor did not parse (RFC 7741 §4.2).
        public var malformedPackets = 0
        /// Packets that arrived in time but belonged to a frame that could not be completed.
        public var discardedPackets = 0
        /// Key frames among those delivered.
        public var keyFramesEmitted = 0
        /// Frames reported lost (entries over all ``Loss`` reports).
        public var framesLost = 0

        /// All zero.
        public init() {}
    }

    private enum Kind {
        case media(VP8PayloadDescriptor, descriptorLength: Int)
        case padding
        case malformed
    }

    /// What is kept of a buffered packet: only what the assembler reads (copying a whole
    /// ``RTPPacket`` in and out of the buffer retained its CSRC and extension arrays too).
    private struct Entry {
        var timestamp: UInt32
        var marker: Bool
        var payload: [UInt8]
        var kind: Kind
    }

    /// Packets: how far past a missing sequence number the stream must get before it is declared lost.
    public let reorderWindow: Int
    /// 90 kHz ticks: if set, a missing packet is also declared lost once a packet arrives
    /// whose RTP timestamp is more than this past the frame before the hole. `nil`: packets only.
    public let reorderDelay: UInt32?
    /// Packets: a frame still open after this many packets is abandoned (bounds memory).
    public let maximumFramePackets: Int
    /// Running totals.
    public private(set) var counters = Counters()

    private var reorderBuffer: ReorderBuffer<Entry>
    private var lostTimestamps: [UInt32] = []
    private var lastPictureID: VP8PictureID?
    private var lastFrameEnded = true
    private var missingSinceLastFrame = false
    private var pendingLoss = Loss()
    private var newestTimestamp: UInt32 = 0
    private var referenceTimestamp: UInt32?
    /// The frame at the cursor was checked (present, same timestamp, no marker) from
    /// `scanned.start` up to `scanned.next - 1`; scanning resumes there (keeps push O(1)).
    private var scanned: (start: Int64, next: Int64) = (.min, .min)

    /// Creates an assembler. `reorderWindow` (packets, at least 1, default 64) and
    /// `reorderDelay` (90 kHz ticks, default none) bound how long a missing packet is
    /// waited for; `maximumFramePackets` (default 4096) bounds the size of one frame.
    public init(reorderWindow: Int = 64, reorderDelay: UInt32? = nil, maximumFramePackets: Int = 4096) {
        self.reorderWindow = max(1, reorderWindow)
        reorderBuffer = ReorderBuffer(reorderWindow: reorderWindow)
        self.reorderDelay = reorderDelay
        self.maximumFramePackets = max(1, maximumFramePackets)
    }

    /// Takes one received RTP packet (after SRTP unprotect and parsing) and returns the
    /// frames and loss reports it makes ready, in decode order (often none).
    public mutating func push(_ packet: RTPPacket) -> [Event] {
        var kind = Kind.padding
        guard let (_, isNewest) = reorderBuffer.admit(ssrc: packet.ssrc, sequenceNumber: packet.sequenceNumber,
                                                counters: &counters.packets, entry: {
            kind = Self.kind(of: packet.payload)
            return Entry(timestamp: packet.timestamp, marker: packet.marker, payload: packet.payload, kind: kind)
        }) else { return [] }
        switch kind {
        case .padding: counters.emptyPackets += 1
        case .malformed: counters.malformedPackets += 1
        case .media: break
        }
        if isNewest { newestTimestamp = packet.timestamp }
        return drain(force: false)
    }

    /// What a payload is: empty (padding), VP8 with a descriptor that parses, or malformed.
    private static func kind(of payload: [UInt8]) -> Kind {
        if payload.isEmpty { return .padding }
        if let (d, n) = try? VP8PayloadDescriptor.parse(payload) { return .media(d, descriptorLength: n) }
        return .malformed
    }

    /// Ends the stream: emits every frame that is complete and reports everything else
    /// buffered as lost. Packets pushed afterwards that are older than the last one
    /// seen count as late.
    public mutating func flush() -> [Event] {
        drain(force: true)
    }

    // MARK: - Decode-order cursor

    private mutating func drain(force: Bool) -> [Event] {
        var out: [Event] = []
        outer: while let c = reorderBuffer.cursor, c <= reorderBuffer.highest {
            guard let e = reorderBuffer[c] else {
                if force || reorderBuffer.isOverdue(c) || waitedTooLong(since: referenceTimestamp) {
                    let overLimit = reorderBuffer.highest - c >= Int64(maximumFramePackets)
                    if abandon(from: c, force: force || overLimit) { continue outer }
                }
                break outer
            }
            if case .padding = e.kind {
                _ = reorderBuffer.consume(c)
                reorderBuffer.advance(to: c + 1)
                continue outer
            }
            if lostTimestamps.contains(e.timestamp) {
                // A packet of a frame already reported lost; the holes before it were that frame's.
                missingSinceLastFrame = false
                _ = reorderBuffer.consume(c)
                counters.latePackets += 1
                if e.marker { lastFrameEnded = true }
                reorderBuffer.advance(to: c + 1)  // `started` is already true: only abandon(from:force:) records lost frames
                continue outer
            }
            guard case let .media(d, _) = e.kind else {
                _ = abandon(from: c, force: force)
                continue outer
            }
            if !d.isFrameStart {
                // Before anything was consumed, an earlier packet may still arrive.
                if !reorderBuffer.started && !force && !reorderBuffer.isOverdue(c)
                    && !waitedTooLong(since: e.timestamp) { break outer }
                _ = abandon(from: c, force: force)
                continue outer
            }
            var k = scanned.start == c ? scanned.next : c
            while true {
                let tooLong = reorderBuffer.highest - c + 1 >= Int64(maximumFramePackets)
                guard let ek = reorderBuffer[k] else {
                    let giveUp = k <= reorderBuffer.highest
                        && (reorderBuffer.isOverdue(k) || waitedTooLong(since: e.timestamp))
                    if force || giveUp || tooLong { _ = abandon(from: c, force: force); continue outer }
                    break outer
                }
                if k > c {
                    guard case let .media(dk, _) = ek.kind, !dk.isFrameStart,
                          ek.timestamp == e.timestamp else {
                        _ = abandon(from: c, force: force)
                        continue outer
                    }
                }
                if ek.marker {
                    complete(c, k, descriptor: d, into: &out)
                    continue outer
                }
                if tooLong { _ = abandon(from: c, force: force); continue outer }
                k += 1
                scanned = (c, k)
            }
        }
        if !pendingLoss.frames.isEmpty { emitLoss(into: &out) }
        reorderBuffer.trimConsumed()
        return out
    }

    /// True when ``reorderDelay`` is set and the newest packet's timestamp is more than
    /// that past `reference` (90 kHz, modulo 2^32).
    private func waitedTooLong(since reference: UInt32?) -> Bool {
        guard let bound = reorderDelay, let reference else { return false }
        return Int64(Int32(bitPattern: newestTimestamp &- reference)) > Int64(bound)
    }

    /// Emits packets `first...last` (all present, checked by the caller) as one frame.
    private mutating func complete(_ first: Int64, _ last: Int64, descriptor: VP8PayloadDescriptor, into out: inout [Event]) {
        var data: [UInt8] = []
        var timestamp: UInt32 = 0
        // Consumed all at once: they are the oldest entries.
        reorderBuffer.consumeAll(in: first...last) { _, e in
            guard case let .media(_, n) = e.kind else { return }
            timestamp = e.timestamp
            data += e.payload[n...]
        }
        noteFrame(descriptor.pictureID)
        lastFrameEnded = true
        referenceTimestamp = timestamp
        if !pendingLoss.frames.isEmpty { emitLoss(into: &out) } else { pendingLoss = Loss() }
        let header = try? VP8FrameHeader(parsing: data)
        let isKey = (data.first ?? 1) & 0x01 == 0
        counters.delivered += 1
        if isKey { counters.keyFramesEmitted += 1 }
        out.append(.delivered(Frame(data: data, timestamp: timestamp, pictureID: descriptor.pictureID?.value,
                                isKeyframe: isKey, width: isKey ? header?.width : nil,
                                height: isKey ? header?.height : nil,
                                firstSequenceNumber: UInt16(truncatingIfNeeded: first),
                                lastSequenceNumber: UInt16(truncatingIfNeeded: last),
                                packetCount: Int(last - first + 1))))
        reorderBuffer.advance(to: last + 1)
    }

    private mutating func emitLoss(into out: inout [Event]) {
        counters.framesLost += pendingLoss.frames.count
        counters.missingReports += 1
        out.append(.missing(pendingLoss))
        pendingLoss = Loss()
    }

    /// Gives up on everything from `start` to the next frame start, recording the frames
    /// and holes in ``pendingLoss``. With no frame start buffered, it stops short of the
    /// newest frame (whose first packet may still be on its way) unless `force`; returns
    /// false, changing nothing, when that leaves nothing to give up yet.
    private mutating func abandon(from start: Int64, force: Bool) -> Bool {
        // The buffered packets from `start` on, in order (read here, not looked up one by one).
        let entries = reorderBuffer.entries(from: start)
        var end = reorderBuffer.highest + 1
        for (x, e) in entries where x > start {
            if case let .media(d, _) = e.kind, d.isFrameStart, !lostTimestamps.contains(e.timestamp) {
                end = x
                break
            }
        }
        if end == reorderBuffer.highest + 1 && !force, entries.first?.key != start || entries[0].value.timestamp != newestTimestamp,
           let n = entries.firstIndex(where: { $0.key > start && $0.value.timestamp == newestTimestamp }) {
            // The newest frame's packets begin at `newest`; its start may be missing or late.
            let newest = entries[n].key
            let before = n > 0 ? entries[n - 1].key + 1 : start
            if before < newest {
                guard before > start else { return false }
                end = before
            }
        }
        // Everything before `end` is given up: consumed all at once.
        guard end > start else { return false }
        reorderBuffer.consumeAll(in: start...end - 1) { _, _ in }
        var next = start
        var groupTimestamp: UInt32?
        for (x, e) in entries where x < end {
            if x > next { recordMissing(next, x) }
            next = x + 1
            switch e.kind {
            case .padding:
                break
            case .malformed, .media:
                let ts = e.timestamp
                var pictureID: VP8PictureID?
                if case let .media(d, _) = e.kind { pictureID = d.pictureID }
                if ts == groupTimestamp, let i = pendingLoss.frames.indices.last {
                    // Holes between two packets of one frame are that frame's.
                    missingSinceLastFrame = false
                    counters.discardedPackets += 1
                    pendingLoss.frames[i].receivedPackets += 1
                    if pendingLoss.frames[i].pictureID == nil, let p = pictureID {
                        pendingLoss.frames[i].pictureID = p.value
                        lastPictureID = p
                    }
                } else if lostTimestamps.contains(ts) {
                    missingSinceLastFrame = false
                    counters.latePackets += 1
                } else {
                    counters.discardedPackets += 1
                    if case .media = e.kind {
                        noteFrame(pictureID)
                    } else {
                        // No descriptor: this frame's PictureID is unknown, so none can be inferred past it.
                        lastPictureID = nil
                        missingSinceLastFrame = false
                    }
                    pendingLoss.frames.append(LostFrame(timestamp: ts, pictureID: pictureID?.value, receivedPackets: 1))
                    groupTimestamp = ts
                    referenceTimestamp = ts
                    lostTimestamps.append(ts)
                    if lostTimestamps.count > 32 { lostTimestamps.removeFirst() }
                    lastFrameEnded = false
                }
                if e.marker { lastFrameEnded = true }
            }
        }
        if end > next { recordMissing(next, end) }
        reorderBuffer.advance(to: end)
        return true
    }

    /// Sequence numbers `from..<to` never arrived.
    private mutating func recordMissing(_ from: Int64, _ to: Int64) {
        let n = Int(to - from)
        guard n > 0 else { return }
        counters.packetsMissing += n
        pendingLoss.missingPacketCount += n
        var x = from
        while x < to && pendingLoss.missingSequenceNumbers.count < Loss.maximumListedMissing {
            pendingLoss.missingSequenceNumbers.append(UInt16(truncatingIfNeeded: x))
            x += 1
        }
        missingSinceLastFrame = true
    }

    /// A new frame (complete or partial) with `pictureID` starts in decode order; if
    /// sequence numbers went missing since the previous frame, the frames in between
    /// (found from the PictureIDs) are recorded as lost.
    private mutating func noteFrame(_ pictureID: VP8PictureID?) {
        if missingSinceLastFrame {
            if let p = pictureID, let last = lastPictureID, p.isFifteenBit == last.isFifteenBit {
                let m = p.modulus
                let gap = (Int(p.value) - Int(last.value) - 1 + 2 * m) % m
                if gap > 0 && gap < min(m / 2, 1024) {
                    for i in 1...gap {
                        pendingLoss.frames.append(LostFrame(timestamp: nil, pictureID: UInt16((Int(last.value) + i) % m),
                                                            receivedPackets: 0))
                    }
                } else if gap > 0 {
                    pendingLoss.frames.append(LostFrame(timestamp: nil, pictureID: nil, receivedPackets: 0))
                }
            } else if lastFrameEnded {
                pendingLoss.frames.append(LostFrame(timestamp: nil, pictureID: nil, receivedPackets: 0))
            }
        }
        lastPictureID = pictureID
        missingSinceLastFrame = false
    }
}
