// SharedFrameStream: one connection's stream of shared packetized frames — header write, one payload copy into its reused SRTP buffer, its time-sized history, NACK answers and counts (RFC 3550 §5.1, §6.4.1; RFC 4585 §6.2.1).

/// The per-connection half of a shared stream: what a sender fed by the media hub does
/// with each ``PacketizedFrame`` — for every packet, its RTP header
/// (``RTPStreamHeader``) and one copy of the shared payload into one reused buffer with
/// room for the SRTP trailer, handed to `transmit` (which protects it in place and sends
/// it), the packet recorded in the ``SharedPayloadHistory`` (a reference, not a copy);
/// NACKed packets answered from that history. Counts what W3C `outbound-rtp` and the
/// RTCP sender report (RFC 3550 §6.4.1) need.
///
/// No thread and no lock: a value owned by one connection's loop, changed only there.
public struct SharedFrameStream: Sendable {
    /// What the stream sent (W3C `RTCOutboundRtpStreamStats` names).
    public struct Counts: Sendable, Equatable {
        /// RTP packets sent, retransmissions included.
        public var packetsSent = 0
        /// Payload bytes sent (RTP headers not counted), retransmissions included.
        public var bytesSent = 0
        /// RTP header bytes sent (12 + extension per packet).
        public var headerBytesSent = 0
        /// Frames whose packets were all handed over.
        public var framesSent = 0
        /// Key frames among them.
        public var keyFramesSent = 0
        /// Packets sent again for a NACK, and their payload bytes.
        public var retransmittedPacketsSent = 0, retransmittedBytesSent = 0
        /// Packets `transmit` refused (no SRTP keys yet, a full queue).
        public var packetsNotSent = 0
        /// The RTP timestamp of the last frame sent (the sender report's basis).
        public var lastRTPTimestamp: UInt32 = 0
        /// When the last frame was sent, on the caller's millisecond clock.
        public var lastSentAtMs: Int64 = 0

        /// No packets yet.
        public init() {}
    }

    /// The stream's header fields; change its payload type or extension between frames.
    public var header: RTPStreamHeader
    /// The packets sent in the last ``SharedPayloadHistory/maximumAgeMs``.
    public private(set) var history: SharedPayloadHistory
    /// What was sent so far.
    public private(set) var counts = Counts()
    /// Bytes reserved behind each packet for the SRTP trailer (auth tag, MKI).
    public let trailer: Int
    /// The one buffer every packet of this stream is built in.
    private var buffer: [UInt8] = []

    /// A stream with `header`, a history of `history`, `trailer` bytes of room for SRTP
    /// (e.g. `SRTPProfile.maxTrailerLength`, 144).
    public init(header: RTPStreamHeader, history: SharedPayloadHistory = SharedPayloadHistory(), trailer: Int) {
        self.header = header
        self.history = history
        self.trailer = max(0, trailer)
    }

    /// Sends every packet of `frame` at `nowMs` (milliseconds, the history's clock):
    /// builds each in the stream's buffer and calls `transmit` with it (the RTP packet,
    /// `trailer` bytes of spare capacity; it may protect and change it in place) — true
    /// when it went out. Each packet uses a sequence number and is recorded whether or
    /// not it went out (a receiver NACKs what it missed).
    public mutating func send(_ frame: PacketizedFrame, nowMs: Int64, _ transmit: (inout [UInt8]) -> Bool) {
        let timestamp = header.rtpTimestamp(of: frame)
        let headerLength = header.headerLength
        for index in frame.packets.indices {
            guard let seq = header.write(frame, packet: index, into: &buffer, reserving: trailer) else { continue }
            history.record(frame, packet: index, sequenceNumber: seq, timestamp: timestamp, header: header, nowMs: nowMs)
            if transmit(&buffer) {
                counts.packetsSent += 1
                counts.bytesSent += frame.packets[index].length
                counts.headerBytesSent += headerLength
            } else {
                counts.packetsNotSent += 1
            }
        }
        counts.framesSent += 1
        if frame.isKeyframe, frame.clockRate == 90_000 { counts.keyFramesSent += 1 }
        counts.lastRTPTimestamp = timestamp
        counts.lastSentAtMs = nowMs
    }

    /// Sends again the packets of `sequenceNumbers` still in the history (RFC 4585 §6.2.1,
    /// as first sent, RFC 4588 §1), in the order asked, each through `transmit`; returns
    /// how many went out. Numbers not held (too old, never sent) are skipped.
    @discardableResult
    public mutating func resend(_ sequenceNumbers: [UInt16], nowMs: Int64, _ transmit: (inout [UInt8]) -> Bool) -> Int {
        var sent = 0
        for seq in sequenceNumbers where history.writePacket(sequenceNumber: seq, nowMs: nowMs, into: &buffer, reserving: trailer) {
            let (headerLength, payload) = history.lengths(of: seq) ?? (header.headerLength, buffer.count - header.headerLength)
            guard transmit(&buffer) else {
                counts.packetsNotSent += 1
                continue
            }
            sent += 1
            counts.packetsSent += 1
            counts.retransmittedPacketsSent += 1
            counts.bytesSent += payload
            counts.retransmittedBytesSent += payload
            counts.headerBytesSent += headerLength
        }
        return sent
    }

    /// Lets go of history older than its age limit (a stream that stopped sending).
    public mutating func prune(nowMs: Int64) { history.prune(nowMs: nowMs) }

    /// Lets go of the whole history (the stream stops, or its frames must be freed now).
    public mutating func forgetHistory() { history.removeAll() }
}
