// SessionVersion: the `o=` version of our descriptions — raised for each description set that changes, kept by descriptions created and discarded (RFC 3264 §8, RFC 8829 §5.2.2, §5.3.2).
import SDP

/// The `<sess-version>` of the `o=` line of a connection's local descriptions.
///
/// RFC 3264 §8: a new description of a session carries the version of the previous one
/// plus one; a version that does not change means the description is the same. RFC 8829
/// §5.2.2 and §5.3.2 apply it to offers and answers. So the version follows what was
/// *set* (``PeerConnection/setLocalDescription(_:)``), not what was created:
/// `createOffer`/`createAnswer` called again without a `setLocalDescription` in between
/// give the same version; the next description set gets one more — unless it says exactly
/// what the last one set said (same text apart from the version), which then keeps that
/// version (RFC 3264 §8: the same version is the same description; a peer that saw it
/// takes it as a repeat). A rollback does not lower it: the rolled-back offer was set, and
/// may have been sent.
///
/// A value type with no lock: its owner (``PeerConnection``) keeps it under its lock.
struct SessionVersion: Sendable {
    /// The version of a connection's first description (as browsers number theirs).
    static let initial: UInt64 = 2

    /// The version and the text (`o=` version left out) of the last description set.
    private var last: (version: UInt64, text: String)?

    /// The version of the last description set (nil before one).
    var current: UInt64? { last?.version }

    /// The version for `description`, a local description about to be handed out: the
    /// last set one's when `description` says the same, else one more (``initial`` for the
    /// first).
    func version(for description: SessionDescription) -> UInt64 {
        guard let last else { return Self.initial }
        return Self.text(of: description) == last.text ? last.version : last.version &+ 1
    }

    /// `description` (with its `o=` version as written) was set as our local description.
    mutating func set(_ description: SessionDescription) {
        let version = UInt64(description.origin.sessionVersion) ?? (last.map { $0.version &+ 1 } ?? Self.initial)
        last = (max(version, last?.version ?? 0), Self.text(of: description))
    }

    /// `description` as written, with the `o=` version taken out (what "says the same" compares).
    private static func text(of description: SessionDescription) -> String {
        var d = description
        d.origin.sessionVersion = "0"
        return d.serialized()
    }
}
