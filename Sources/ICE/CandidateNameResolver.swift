// Resolving the names in remote candidates (mDNS `.local` names, RFC 8839 §5.1 and
// draft-ietf-mmusic-mdns-ice-candidates; or host names) without blocking anyone.
import EventLoop
import Foundation
import Synchronization

/// Resolves candidate names with the system resolver (`getaddrinfo`) on threads of its
/// own (`peer.resolve`, one per lookup), never on the caller's or the event loop's: on a
/// host whose resolver sends `.local` names to unicast DNS, one lookup can stall for the
/// resolver's whole timeout (5 s × attempts). Each lookup ends after at most `timeoutMs` from the caller's point
/// of view; a stalled thread finishes by itself later. At most
/// ``maximumConcurrentLookups`` threads exist at once, so a flood of names cannot
/// spawn threads without bound.
final class CandidateNameResolver: Sendable {
    /// Lookups running at once, at most (further names are refused at once).
    static let maximumConcurrentLookups = 8
    private let running = Atomic<Int>(0)

    /// Exactly one outcome per lookup: the resolver thread's or the timeout's.
    private final class Once: Sendable {
        private let done = Atomic<Bool>(false)
        func claim() -> Bool { !done.exchange(true, ordering: .acquiringAndReleasing) }
    }

    /// Starts resolving `name`; `completion` runs once on `loop`'s thread with the
    /// numeric address (IPv4 preferred) or a phrase saying why not ("does not resolve
    /// (…)", "did not resolve within N ms", "was not looked up: … already resolving").
    func resolve(_ name: String, timeoutMs: UInt32, loop: EventLoop,
                 completion: @escaping @Sendable (Result<String, NameError>) -> Void) {
        let (wasRunning, _) = running.add(1, ordering: .acquiringAndReleasing)
        guard wasRunning < Self.maximumConcurrentLookups else {
            running.subtract(1, ordering: .acquiringAndReleasing)
            _ = loop.async {
                completion(.failure(NameError(reason: "was not looked up: \(Self.maximumConcurrentLookups) names are already resolving")))
            }
            return
        }
        let once = Once()
        loop.after(milliseconds: timeoutMs) {
            if once.claim() { completion(.failure(NameError(reason: "did not resolve within \(timeoutMs) ms"))) }
        }
        Thread.detachNewThread { [self] in
            nameCurrentThread("peer.resolve")  // in the kernel, so /proc tells it apart (ThreadNaming)
            let result: Result<String, NameError>
            do throws(IceServerError) {
                result = .success(try IceServer("stun:\(name)").resolvedAddress())
            } catch {
                result = .failure(NameError(reason: "does not resolve (\(error.expected))"))
            }
            running.subtract(1, ordering: .acquiringAndReleasing)
            if once.claim() { _ = loop.async { completion(result) } }
        }
    }

    /// Why a name gave no address.
    struct NameError: Error, Sendable {
        /// A phrase to follow the name, e.g. "did not resolve within 2000 ms".
        let reason: String
    }
}
