// ResetRequestGate: holds the peer's Outgoing SSN Reset Requests (RFC 6525 §4.1, §5.2.2) back from libusrsctp until every TSN they wait for has arrived, so libusrsctp never defers one (its deferred path loses and ABORTs on unordered data); reads SCTP packets (RFC 9260 §3) in and out.

/// A guard in front of libusrsctp for the peer's stream resets.
///
/// The peer's Outgoing SSN Reset Request carries the last TSN it assigned; the receiver
/// resets once every TSN up to it has arrived (RFC 6525 §5.2.2). When some are still
/// missing, libusrsctp 0.9.5 answers "in progress" and holds each complete DATA chunk past
/// that TSN; once they arrive it replays the held chunks through its ordered-delivery path,
/// where unordered messages (on DATA chunks all numbered 0) collide: the first sits in the
/// stream's queue undelivered, the second ABORTs the association with Protocol Violation
/// "Queue to str MID: 0 duplicate" (sctp_indata.c, `pending_reply_queue`). Chromium resets
/// a closed channel's stream with its data still in flight, so under loss this ended every
/// channel of a call.
///
/// The gate keeps a RE-CONFIG chunk that holds such a request back until our own SACKs show
/// the cumulative TSN at its last TSN, then hands it to libusrsctp, which resets at once
/// (the result "performed"). In the meantime DATA flows as usual on every stream: the
/// peer sends nothing more on the streams it resets before our response (§5.1.2), and
/// repeats it never gets; repeats of a held request are dropped, of one handed on passed.
/// The packets it hands on keep their common header; their checksum is not recomputed,
/// since libusrsctp runs with CRC32c offload (DTLS authenticates every record, RFC 8261 §3).
///
/// Malformed packets, chunks and parameters are passed on untouched: libusrsctp judges them.
public struct ResetRequestGate: Sendable {
    /// A RE-CONFIG chunk held back: the packet's common header, the chunk (padded to 4
    /// bytes), and its requests as (request sequence number, sender's last assigned TSN).
    private struct Held: Sendable {
        let header: [UInt8]
        let chunk: [UInt8]
        let requests: [(sequence: UInt32, lastTSN: UInt32)]
        /// When it was taken out (the caller's clock, ms).
        let since: Int64
    }

    /// The cumulative TSN we acknowledged in the last SACK we sent (RFC 9260 §3.3.4), or,
    /// before one, the TSN before the peer's initial TSN (INIT or INIT ACK, §3.3.2);
    /// nil before either.
    public private(set) var acknowledged: UInt32?
    /// Held RE-CONFIG chunks, in arrival order.
    private var held: [Held] = []
    /// The highest request sequence number handed to libusrsctp.
    private var lastPassed: UInt32?
    /// At most this many chunks are held (a peer has one request outstanding, RFC 6525
    /// §5.1.1); more from a peer that breaks that rule go on to libusrsctp, which refuses
    /// them by their sequence numbers.
    public static let holdLimit = 8
    /// A held chunk goes on after this long, ms, whatever our SACKs say: a lost SACK
    /// count, a restarted association or a chunk that also answers a request of ours must
    /// never leave channels `closing` for good (libusrsctp then defers it as before).
    public static let holdDeadlineMs: Int64 = 3_000

    /// A gate with nothing held.
    public init() {}

    /// How many RE-CONFIG chunks are held back.
    public var heldCount: Int { held.count }

    /// Chunk types (RFC 9260 §3.2, RFC 4960 §3.2 for INIT ACK, RFC 6525 §3.1 for RE-CONFIG).
    private enum Chunk {
        static let initiation: UInt8 = 1, initiationAck: UInt8 = 2, sack: UInt8 = 3, nrSack: UInt8 = 16, reconfig: UInt8 = 130
    }
    /// The Outgoing SSN Reset Request Parameter type (RFC 6525 §4.1).
    private static let outgoingResetRequest: UInt16 = 13
    /// The SCTP common header, bytes (RFC 9260 §3.1).
    private static let headerSize = 12

    /// Filters one packet from the peer: the packet to hand to libusrsctp — the same bytes
    /// when nothing is held from it, the packet without the RE-CONFIG chunks held back
    /// otherwise, nil when nothing but the header would be left.
    /// - Parameters:
    ///   - packet: an SCTP packet as it came out of DTLS.
    ///   - now: the time, ms (any monotonic clock; ``overdue(now:)`` uses the same).
    public mutating func incoming(_ packet: [UInt8], now: Int64 = 0) -> [UInt8]? {
        var shortened: [UInt8]?  // made at the first chunk taken out (none in the usual packet)
        var at = Self.headerSize
        while let (type, length, end) = Self.chunk(in: packet, at: at) {
            var keep = true
            switch type {
            case Chunk.initiation, Chunk.initiationAck:
                // Only the first: a repeated INIT ACK must not move the mark back (or on).
                if length >= 20, acknowledged == nil { acknowledged = Self.word(packet, at + 16) &- 1 }
            case Chunk.reconfig:
                switch decide(Array(packet[at..<end])) {
                case .pass: break
                case .drop: keep = false
                case .hold(let requests):
                    held.append(Held(header: Array(packet[0..<Self.headerSize]), chunk: Array(packet[at..<end]), requests: requests, since: now))
                    keep = false
                }
            default: break
            }
            if !keep, shortened == nil { shortened = Array(packet[0..<at]) }
            if keep { shortened?.append(contentsOf: packet[at..<end]) }
            at = end
        }
        guard var shortened else { return packet }
        shortened.append(contentsOf: packet[at...])  // what could not be read goes on as it was
        return shortened.count > Self.headerSize ? shortened : nil
    }

    /// Notes one packet libusrsctp sends: the cumulative TSN of its SACK, if it has one.
    /// - Returns: true when a held request can now be handed on (``releasable()``).
    /// - Parameter packet: an SCTP packet libusrsctp gave to send.
    public mutating func outgoing(_ packet: [UInt8]) -> Bool {
        var at = Self.headerSize
        while let (type, length, end) = Self.chunk(in: packet, at: at) {
            if type == Chunk.sack || type == Chunk.nrSack, length >= 8 { acknowledged = Self.word(packet, at + 4) }
            at = end
        }
        guard let first = held.first else { return false }
        return satisfied(first)
    }

    /// Takes the held RE-CONFIG chunks whose TSNs have all arrived, oldest first (stopping
    /// at the first that still waits), each as a packet of its own to hand to libusrsctp.
    public mutating func releasable() -> [[UInt8]] {
        var packets: [[UInt8]] = []
        while let first = held.first, satisfied(first) {
            held.removeFirst()
            for request in first.requests { notePassed(request.sequence) }
            packets.append(first.header + first.chunk)
        }
        return packets
    }

    /// Takes the held chunks older than ``holdDeadlineMs`` at `now` (ms), oldest first,
    /// each as a packet of its own to hand to libusrsctp.
    public mutating func overdue(now: Int64) -> [[UInt8]] {
        var packets: [[UInt8]] = []
        while let first = held.first, now - first.since >= Self.holdDeadlineMs {
            held.removeFirst()
            for request in first.requests { notePassed(request.sequence) }
            packets.append(first.header + first.chunk)
        }
        return packets
    }

    private enum Decision { case pass, drop, hold([(sequence: UInt32, lastTSN: UInt32)]) }

    /// What to do with one RE-CONFIG chunk (`chunk`: its bytes, padded).
    private mutating func decide(_ chunk: [UInt8]) -> Decision {
        let requests = Self.outgoingResetRequests(in: chunk)
        guard !requests.isEmpty else { return .pass }
        let heldSequences = held.flatMap { $0.requests.map(\.sequence) }
        if requests.contains(where: { heldSequences.contains($0.sequence) }) { return .drop }  // a repeat of one held
        let fresh = requests.filter { request in lastPassed.map { Self.after(request.sequence, $0) } ?? true }
        if fresh.isEmpty { return .pass }  // a repeat of one answered: libusrsctp answers it again
        if held.isEmpty && fresh.allSatisfy(arrived) || held.count >= Self.holdLimit {
            for request in fresh { notePassed(request.sequence) }
            return .pass
        }
        return .hold(requests)
    }

    /// Whether every TSN up to `request`'s last TSN was acknowledged.
    private func arrived(_ request: (sequence: UInt32, lastTSN: UInt32)) -> Bool {
        guard let acknowledged else { return false }
        return !Self.after(request.lastTSN, acknowledged)
    }

    private func satisfied(_ chunk: Held) -> Bool { chunk.requests.allSatisfy(arrived) }

    private mutating func notePassed(_ sequence: UInt32) {
        if let last = lastPassed, !Self.after(sequence, last) { return }
        lastPassed = sequence
    }

    /// The Outgoing SSN Reset Requests of a RE-CONFIG chunk (RFC 6525 §3.1, §4.1): each
    /// parameter of type 13 at least 16 bytes long, as (request sequence number, sender's
    /// last assigned TSN). Parameters that overrun the chunk end the reading.
    private static func outgoingResetRequests(in chunk: [UInt8]) -> [(sequence: UInt32, lastTSN: UInt32)] {
        let chunkLength = Int(chunk[2]) << 8 | Int(chunk[3])
        var found: [(UInt32, UInt32)] = []
        var at = 4
        while at + 4 <= chunkLength {
            let type = UInt16(chunk[at]) << 8 | UInt16(chunk[at + 1])
            let length = Int(chunk[at + 2]) << 8 | Int(chunk[at + 3])
            guard length >= 4, at + length <= chunkLength else { break }
            if type == outgoingResetRequest, length >= 16 { found.append((word(chunk, at + 4), word(chunk, at + 12))) }
            at += (length + 3) & ~3
        }
        return found
    }

    /// The chunk at `at` (RFC 9260 §3.2): its type, its length field (bytes, header
    /// included) and where the next one starts (after the padding, or the packet's end when
    /// the padding is missing); nil at the end or when the length field is under 4 or runs
    /// past the packet.
    private static func chunk(in packet: [UInt8], at: Int) -> (type: UInt8, length: Int, end: Int)? {
        guard at + 4 <= packet.count else { return nil }
        let length = Int(packet[at + 2]) << 8 | Int(packet[at + 3])
        guard length >= 4, at + length <= packet.count else { return nil }
        return (packet[at], length, min(at + (length + 3) & ~3, packet.count))
    }

    /// The big-endian 32-bit word at `at` (the caller checked the bounds).
    private static func word(_ bytes: [UInt8], _ at: Int) -> UInt32 {
        UInt32(bytes[at]) << 24 | UInt32(bytes[at + 1]) << 16 | UInt32(bytes[at + 2]) << 8 | UInt32(bytes[at + 3])
    }

    /// Serial-number order of 32-bit sequence numbers and TSNs (RFC 1982, RFC 9260 §1.6):
    /// whether `a` comes after `b`.
    private static func after(_ a: UInt32, _ b: UInt32) -> Bool { a != b && (a &- b) < 0x8000_0000 }
}
