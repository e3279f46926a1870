// ReorderBuffer: the reorder stage the depayloaders share (VP8, RFC 7741 §4.4; Opus,
// RFC 7587): one SSRC's packets in arrival order in, buffered entries out in sequence
// number order (RFC 3550 §5.1), with duplicates and late packets told apart.

/// The counts every depayloader built on ``ReorderBuffer`` keeps, the same in both
/// (``VP8FrameAssembler``, ``OpusDepayloader``): the reorder stage's (received,
/// duplicate, late, other SSRC), what was given up, and the ``Depayloaded`` events
/// handed back. A depayloader's `Counters` show these fields as their own
/// (`counters.latePackets`).
public struct DepayloadCounts: Equatable, Sendable {
    /// Every packet passed to the depayloader's `push(_:)`.
    public var packetsReceived = 0
    /// Packets whose sequence number had already been received.
    public var duplicatePackets = 0
    /// Packets that came after their sequence number was passed (emitted, or given up
    /// without them: a VP8 frame declared lost, an Opus gap reported).
    public var latePackets = 0
    /// Packets with an SSRC other than the first one seen, ignored.
    public var otherSSRCPackets = 0
    /// Packets with an empty payload: VP8 padding (skipped), or an empty Opus packet
    /// (concealed as missing).
    public var emptyPackets = 0
    /// Sequence numbers given up on (never arrived in time; Opus: empty ones too).
    public var packetsMissing = 0
    /// `.delivered` events handed back: VP8 frames, Opus packets.
    public var delivered = 0
    /// `.missing` events handed back: VP8 loss reports, Opus gaps.
    public var missingReports = 0

    /// All zero.
    public init() {}
}

/// A depayloader's counters that hold ``DepayloadCounts`` and more: those fields read
/// and write as the counters' own (`counters.latePackets` is `counters.packets.latePackets`).
@dynamicMemberLookup
public protocol DepayloadCounted {
    /// The counts every depayloader keeps.
    var packets: DepayloadCounts { get set }
}

extension DepayloadCounted {
    /// Reads and writes the ``DepayloadCounts`` fields as if they were this value's own.
    public subscript<T>(dynamicMember field: WritableKeyPath<DepayloadCounts, T>) -> T {
        get { packets[keyPath: field] }
        set { packets[keyPath: field] = newValue }
    }
}

/// What a depayloader built on ``ReorderBuffer`` hands back, in decode order: a unit
/// to decode (a VP8 frame, an Opus packet) or what is missing before the next one (VP8
/// frames that could not be completed, an Opus gap to conceal).
public enum Depayloaded<Unit: Equatable & Sendable, Missing: Equatable & Sendable>: Equatable, Sendable {
    /// A complete unit, to decode or record.
    case delivered(Unit)
    /// What could not be delivered; comes before the unit that follows it.
    case missing(Missing)
}

/// The codec-agnostic reorder buffer under ``VP8FrameAssembler`` and ``OpusDepayloader``:
/// entries keyed by unwrapped (64-bit) sequence number (RFC 3550 §A.1, through
/// ``SequenceUnwrapper``) and a decode-order cursor that the owner moves on as it
/// consumes entries or gives up on holes.
///
/// - Only the first SSRC seen is accepted.
/// - A packet before the cursor is late, or a duplicate when its number was consumed;
///   only before anything was consumed or given up (``started``) may a packet less than
///   ``reorderWindow`` before the cursor move it back (the first packet to arrive need
///   not be the first one sent).
/// - A number already buffered is a duplicate (the first copy is kept).
/// - The consumed numbers kept for the duplicate-or-late test are trimmed to at least
///   `2 × max(1024, reorderWindow)` behind the cursor (``trimConsumed()``).
///
/// The owner decides when a hole has been waited for long enough (``isOverdue(_:)`` is
/// the packet-count bound both depayloaders use) and what it means.
struct ReorderBuffer<Entry> {
    /// Packets (at least 1): how far the newest packet must be past a missing sequence
    /// number before ``isOverdue(_:)`` says it is no longer waited for.
    let reorderWindow: Int
    /// The next unwrapped sequence number in decode order; `nil` before the first packet.
    private(set) var cursor: Int64?
    /// The highest unwrapped sequence number admitted (0 before the first packet).
    private(set) var highest: Int64 = 0
    /// True once the cursor has moved on (``advance(to:)``): from then on nothing older is admitted.
    private(set) var started = false

    private var unwrapper = SequenceUnwrapper()
    private var ssrc: UInt32?
    private var buffer = SequenceBuffer<Entry>()
    private var consumed = SequenceNumberSet()

    /// An empty buffer; `reorderWindow` is in packets (values below 1 count as 1).
    init(reorderWindow: Int) {
        self.reorderWindow = max(1, reorderWindow)
    }

    /// Takes one arriving packet (its `ssrc` and 16-bit `sequenceNumber`) and buffers
    /// `entry()` for it, counting it in `counters`; `entry` is called only for a packet
    /// that is neither from another SSRC nor late.
    ///
    /// Returns the unwrapped sequence number and whether it is now the ``highest``
    /// (always for the first packet), or `nil` when the packet was not buffered
    /// (another SSRC, late or duplicate; the counter says which).
    mutating func admit(ssrc packetSSRC: UInt32, sequenceNumber: UInt16, counters: inout DepayloadCounts,
                        entry: () -> Entry) -> (sequence: Int64, isNewest: Bool)? {
        counters.packetsReceived += 1
        if let s = ssrc, s != packetSSRC {
            counters.otherSSRCPackets += 1
            return nil
        }
        ssrc = packetSSRC
        let seq = unwrapper.unwrap(sequenceNumber)
        var isFirst = false
        if let c = cursor {
            if seq < c {
                if !started && c - seq < Int64(reorderWindow) {
                    cursor = seq
                } else {
                    if consumed.contains(seq) { counters.duplicatePackets += 1 } else { counters.latePackets += 1 }
                    return nil
                }
            }
        } else {
            cursor = seq
            highest = seq
            isFirst = true
        }
        guard buffer.insertIfAbsent(entry(), for: seq) else {
            counters.duplicatePackets += 1
            return nil
        }
        let isNewest = isFirst || seq > highest
        highest = max(highest, seq)
        return (seq, isNewest)
    }

    /// The entry buffered for unwrapped sequence number `sequence`, if any.
    subscript(sequence: Int64) -> Entry? { buffer[sequence] }

    /// True when the newest packet is at least ``reorderWindow`` sequence numbers past
    /// `sequence`: a hole there has been waited for long enough.
    func isOverdue(_ sequence: Int64) -> Bool { highest - sequence >= Int64(reorderWindow) }

    /// Removes and returns the entry for `sequence`, if buffered, and remembers the number
    /// as consumed (a later copy counts as a duplicate). Does not move the cursor.
    mutating func consume(_ sequence: Int64) -> Entry? {
        guard let entry = buffer.removeValue(forKey: sequence) else { return nil }
        consumed.insert(sequence)
        return entry
    }

    /// Consumes every entry with a sequence number in `range`, calling `body` with each in
    /// order (O(1) per entry when they are the oldest). Does not move the cursor.
    mutating func consumeAll(in range: ClosedRange<Int64>, _ body: (Int64, Entry) -> Void) {
        buffer.removeAll(in: range) { sequence, entry in
            consumed.insert(sequence)
            body(sequence, entry)
        }
    }

    /// The buffered entries from `sequence` on, in order.
    func entries(from sequence: Int64) -> [(key: Int64, value: Entry)] { buffer.entries(from: sequence) }

    /// The smallest buffered sequence number greater than `sequence`, if any.
    func firstSequence(after sequence: Int64) -> Int64? { buffer.firstKey(after: sequence) }

    /// Moves the cursor to `next`: everything before it has been consumed or given up.
    mutating func advance(to next: Int64) {
        cursor = next
        started = true
    }

    /// Forgets consumed numbers far behind the cursor once more than
    /// `4 × max(1024, reorderWindow)` are kept (bounds memory; call after draining).
    mutating func trimConsumed() {
        let span = max(1024, reorderWindow)
        if consumed.count > 4 * span, let c = cursor {
            consumed.removeAll(below: c - Int64(2 * span))
        }
    }
}

extension ReorderBuffer: Sendable where Entry: Sendable {}
