// Reoffer: what a subsequent offer must keep of the current negotiation — m-section order, mids, kinds, BUNDLE and the DTLS fingerprint, unless an ICE restart brings a new certificate (RFC 8829 §5.2.2, §5.7, §5.11, RFC 8842 §5, RFC 8843 §7.5).
/// The checks a subsequent offer from the peer passes before it is applied (RFC 8829
/// §5.2.2: a re-offer keeps every m-section of the current description in its place,
/// with its mid and kind; new sections are appended, or take the place of a stopped one,
/// port 0, with a new mid; BUNDLE stays; RFC 8842 §5.5: the fingerprint and the roles stay
/// on the same DTLS association). A description that restarts ICE may carry a new
/// fingerprint (RFC 8829 §5.11, RFC 8842 §5: the peer came back with a new certificate):
/// that begins a new DTLS association, whose roles its negotiation gives
/// (``startsNewAssociation(_:against:)``).
public enum Reoffer {
    /// Checks `offer` against `current`, the remote description now in force (the peer's
    /// last offer or answer); `establishedSetup` is our `a=setup` role in the association in
    /// use (`active` or `passive`), which the offer may not swap (it offers `actpass` or the
    /// role it has).
    /// An offer that restarts ICE may carry a new fingerprint (a new DTLS association: its
    /// roles are not checked then).
    /// - Throws: ``ReofferError`` naming the first offending line and what it was.
    public static func check(_ offer: SessionDescription, against current: SessionDescription,
                             establishedSetup: Setup? = nil) throws(ReofferError) {
        guard offer.media.count >= current.media.count else {
            let lost = current.media[offer.media.count]
            throw .sectionRemoved(index: offer.media.count, mid: lost.mid ?? "", line: mLine(lost))
        }
        for (index, was) in current.media.enumerated() {
            let now = offer.media[index]
            // A stopped section (port 0) may be recycled for anything, with a new mid.
            if was.port == 0 { continue }
            guard now.mid == was.mid else {
                throw .sectionReordered(index: index, mid: now.mid ?? "", expected: was.mid ?? "", line: mLine(now))
            }
            guard now.kind == was.kind else {
                throw .kindChanged(mid: was.mid ?? "", line: mLine(now), was: "\(was.kind)")
            }
        }
        if let group = current.bundleGroup, !group.mids.isEmpty {
            let stillOffered = Set(offer.media.filter { !$0.isRejected }.compactMap(\.mid))
            let kept = group.mids.filter(stillOffered.contains)
            if !kept.isEmpty {
                guard let now = offer.bundleGroup else {
                    throw .bundleDropped(line: "a=group:BUNDLE \(group.mids.joined(separator: " "))", now: nil)
                }
                if let lost = kept.first(where: { !now.mids.contains($0) }) {
                    throw .bundleDropped(line: "a=group:BUNDLE \(group.mids.joined(separator: " "))",
                                         now: "a=group:BUNDLE \(now.mids.joined(separator: " ")) (mid \(lost) left out)")
                }
            }
        }
        try keepsAssociation(offer, of: current, establishedSetup: establishedSetup, answering: false)
    }

    /// Checks the peer's answer to our subsequent offer against `current`, the remote
    /// description in force: the same DTLS fingerprint, and the peer's role in the
    /// association (`a=setup`, the opposite of `establishedSetup`) unchanged (RFC 8842 §5.5).
    /// When our offer restarted ICE (`iceRestartOffered`) and the answer does too (new
    /// ICE credentials), a new fingerprint is the peer back with a new certificate: a new
    /// DTLS association, in the roles the answer gives.
    /// - Throws: ``ReofferError`` naming the offending line.
    public static func checkAnswer(_ answer: SessionDescription, against current: SessionDescription,
                                   establishedSetup: Setup?, iceRestartOffered: Bool = false) throws(ReofferError) {
        try keepsAssociation(answer, of: current, establishedSetup: establishedSetup, answering: true,
                             newCertificateAllowed: iceRestartOffered)
    }

    /// True when `d`, a remote description, carries a fingerprint of another certificate
    /// than `current` and restarts ICE (its first section in use has another
    /// `a=ice-ufrag`): the peer came back with a new certificate (a restarted process, a
    /// reloaded page that kept its signaling), which begins a new DTLS association (RFC
    /// 8829 §5.11, RFC 8842 §5). False when either has no fingerprint or no ufrag.
    public static func startsNewAssociation(_ d: SessionDescription, against current: SessionDescription) -> Bool {
        guard let old = fingerprints(of: current).first, case let after = fingerprints(of: d), !after.isEmpty,
              !after.contains(where: { $0.matches(old) }) else { return false }
        guard let ufrag = iceUfrag(of: d), let was = iceUfrag(of: current) else { return false }
        return ufrag != was
    }

    /// The ICE ufrag of the first section in use, else the session's (RFC 8839 §5.4).
    public static func iceUfrag(of d: SessionDescription) -> String? {
        d.media.first { !$0.isRejected }?.iceUfrag ?? d.iceUfrag
    }

    /// The DTLS association stays: a fingerprint is given and matches, and no section in use
    /// swaps the roles (an offer may say `actpass`, an answer may not) — unless
    /// `newCertificateAllowed` and `d` restarts ICE with a new fingerprint
    /// (``startsNewAssociation(_:against:)``): a new association, whose roles are free.
    static func keepsAssociation(_ d: SessionDescription, of current: SessionDescription,
                                 establishedSetup: Setup?, answering: Bool, newCertificateAllowed: Bool = true) throws(ReofferError) {
        let usable = d.media.filter { !$0.isRejected }
        let before = fingerprints(of: current), after = fingerprints(of: d)
        if after.isEmpty, !usable.isEmpty {
            throw .fingerprintMissing(line: usable.first.map(mLine) ?? "")
        }
        if newCertificateAllowed, startsNewAssociation(d, against: current) { return }
        if let old = before.first, !after.isEmpty, !after.contains(where: { $0.matches(old) }) {
            let new = after[0]
            throw .fingerprintChanged(line: "a=fingerprint:\(new.algorithm) \(new.value)", was: "\(old.algorithm) \(old.value)")
        }
        guard let ours = establishedSetup, ours == .active || ours == .passive else { return }
        let theirs: Setup = ours == .active ? .passive : .active
        for m in usable {
            let setup = m.setup ?? d.setup ?? (answering ? .active : .actpass)
            guard setup == theirs || (!answering && setup == .actpass) else {
                throw .roleSwap(mid: m.mid ?? "", setup: setup.rawValue, kept: ours.rawValue)
            }
        }
    }

    /// The fingerprints of the first section in use, else the session's (RFC 8122 §5).
    public static func fingerprints(of d: SessionDescription) -> [Fingerprint] {
        let media = d.media.first { !$0.isRejected }?.fingerprints ?? []
        return media.isEmpty ? d.fingerprints : media
    }

    /// The `m=` line of `m` as written.
    static func mLine(_ m: MediaDescription) -> String {
        "m=\(m.kind) \(m.port) \(m.proto) \(m.formats.joined(separator: " "))"
    }
}

extension Fingerprint {
    /// True for the same hash function (case-insensitive) and value (hex, case-insensitive).
    public func matches(_ other: Fingerprint) -> Bool {
        algorithm.lowercased() == other.algorithm.lowercased() && value.uppercased() == other.value.uppercased()
    }
}

/// Why a subsequent offer is refused (``Reoffer/check(_:against:)``); the connection keeps
/// its previous state.
public enum ReofferError: Error, Equatable, CustomStringConvertible {
    /// The offer has fewer m-sections: the one at `index` (0-based) with `mid` is gone.
    case sectionRemoved(index: Int, mid: String, line: String)
    /// The m-section at `index` has mid `mid` where the current description has `expected`.
    case sectionReordered(index: Int, mid: String, expected: String, line: String)
    /// The m-section `mid` changed its media kind (from `was`).
    case kindChanged(mid: String, line: String, was: String)
    /// The DTLS fingerprint changed on the same association (`was` the current one): no
    /// ICE restart came with it.
    case fingerprintChanged(line: String, was: String)
    /// The BUNDLE group in force (`line`) is missing or lost a mid (`now`: the offer's).
    case bundleDropped(line: String, now: String?)
    /// No `a=fingerprint` at all, though sections (the first: `line`) are in use.
    case fingerprintMissing(line: String)
    /// The section `mid`'s `a=setup:<setup>` swaps the DTLS roles in use (ours: `kept`).
    case roleSwap(mid: String, setup: String, kept: String)

    /// The refusal in words, naming the line and the rule.
    public var description: String {
        switch self {
        case let .sectionRemoved(index, mid, line):
            return "re-offer removes m-section \(index) (mid \(mid), \(line)); a section is stopped with port 0, never removed (RFC 8829 §5.2.2)"
        case let .sectionReordered(index, mid, expected, line):
            return "re-offer m-section \(index) (\(line)) has a=mid:\(mid); the current description has mid \(expected) there (RFC 8829 §5.2.2)"
        case let .kindChanged(mid, line, was):
            return "re-offer changes m-section mid \(mid) to \"\(line)\"; it was \(was) (RFC 8829 §5.2.2)"
        case let .fingerprintChanged(line, was):
            return "\(line) changes the DTLS fingerprint of the association in use (was \(was)) without an ICE restart; a new certificate comes with new a=ice-ufrag/a=ice-pwd (RFC 8829 §5.11)"
        case let .bundleDropped(line, now):
            return "re-offer drops the BUNDLE group in force (\(line)): \(now ?? "no a=group:BUNDLE") (RFC 8843 §7.5)"
        case let .fingerprintMissing(line):
            return "no a=fingerprint for the sections in use (\(line)); the DTLS association in use needs it (RFC 8842 §5.5)"
        case let .roleSwap(mid, setup, kept):
            return "m-section mid \(mid) has a=setup:\(setup), which swaps the DTLS roles in use (ours is a=setup:\(kept)) (RFC 8842 §5.5)"
        }
    }
}
