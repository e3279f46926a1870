// Trickled candidates from a peer that has no connection yet: they may overtake its offer
// (each WAMP topic's events reach the call on a task of their own; RFC 8838 §4 trickle).

import PeerAgent
import Foundation

/// Holds remote candidates (W3C `RTCIceCandidateInit`) that came before the offer of the
/// peer they belong to, so the connection that offer makes gets them instead of their
/// being dropped. Bounded: at most ``perPeer`` per peer and ``peers`` peers; a candidate
/// older than ``lifetime`` (s) is stale and let go. Used by one task (the call's).
struct EarlyCandidates {
    /// Most candidates held for one peer.
    static let perPeer = 100
    /// Most peers held for.
    static let peers = 64
    /// Seconds a held candidate stays usable.
    static let lifetime: TimeInterval = 10

    private var held: [String: [(candidate: IceCandidateInit, topic: String, at: Date)]] = [:]

    /// Holds `candidate` from `peer`, received on `topic`; dropped when the bounds are reached.
    mutating func hold(_ candidate: IceCandidateInit, topic: String, from peer: String) {
        held[peer]?.removeAll { $0.at.timeIntervalSinceNow < -Self.lifetime }
        guard held[peer, default: []].count < Self.perPeer, held[peer] != nil || held.count < Self.peers else { return }
        held[peer, default: []].append((candidate, topic, Date()))
    }

    /// The usable candidates held for `peer`, in the order they came, with their topics; forgets them all.
    mutating func take(for peer: String) -> [(candidate: IceCandidateInit, topic: String)] {
        (held.removeValue(forKey: peer) ?? []).filter { $0.at.timeIntervalSinceNow > -Self.lifetime }.map { ($0.candidate, $0.topic) }
    }

    /// Forgets what is held for `peer` (a connection to it was made or closed).
    mutating func forget(_ peer: String) { held[peer] = nil }
}
