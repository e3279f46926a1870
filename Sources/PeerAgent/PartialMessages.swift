// PartialMessages: messages a peer sends in parts with the deprecated PPIDs 52 and 54 (RFC 8831 §8), joined per stream up to their last part (51 or 53), within a limit per message and over all streams.

/// What arrived of the messages in parts, by stream. A message over ``messageLimit``, or
/// one that would take all streams' parts over ``totalLimit``, is dropped whole: its later
/// parts too, up to and including its last.
struct PartialMessages {
    /// Most bytes of one message (our max-message-size).
    let messageLimit: Int
    /// Most bytes the unfinished messages of all streams together hold, so a peer cannot
    /// hold 1,024 × ``messageLimit``.
    let totalLimit: Int
    private var parts: [UInt16: [UInt8]] = [:]
    private var discarding: Set<UInt16> = []

    /// Why a message in parts was dropped.
    enum Drop: Equatable {
        /// It came to `bytes`, over ``messageLimit``.
        case tooLarge(bytes: Int)
        /// All streams' parts came to `total`, over ``totalLimit``; this one had `bytes`.
        case tooMuchInParts(total: Int, bytes: Int)
    }

    init(messageLimit: Int, totalLimit: Int) {
        self.messageLimit = messageLimit
        self.totalLimit = totalLimit
    }

    /// A part that is not the last (PPID 52 or 54): kept, or the message dropped (said once).
    mutating func part(_ data: [UInt8], stream sid: UInt16) -> Drop? {
        guard !discarding.contains(sid) else { return nil }
        parts[sid, default: []].append(contentsOf: data)
        let bytes = parts[sid]?.count ?? 0
        let total = parts.values.reduce(0) { $0 + $1.count }
        let drop: Drop? = bytes > messageLimit ? .tooLarge(bytes: bytes)
            : (total > totalLimit ? .tooMuchInParts(total: total, bytes: bytes) : nil)
        if drop != nil {
            parts[sid] = nil
            discarding.insert(sid)
        }
        return drop
    }

    /// A whole message or a last part (PPID 51 or 53): `data` after the parts before it;
    /// nil when it ends a message that was dropped.
    mutating func last(_ data: [UInt8], stream sid: UInt16) -> [UInt8]? {
        guard discarding.remove(sid) == nil else { return nil }
        guard let head = parts.removeValue(forKey: sid) else { return data }
        return head + data
    }

    /// The stream was reset: what it held is gone.
    mutating func forget(_ sid: UInt16) {
        parts[sid] = nil
        discarding.remove(sid)
    }
}
