// Version: peer's own version and the versions of the C libraries it runs on.
import DTLS
import ICE
import Media
import WampClient

/// The agent's own version and the versions of the C libraries it runs on.
public enum PeerVersion {
    /// The `peer` release, semantic versioning.
    public static let current = "0.1.0"

    /// Every linked C library, name → run-time version ("3.0.19"), sorted by name.
    public static var libraries: [(name: String, version: String)] {
        var all: [String: String] = [:]
        for part in [LibNice.libraryVersions, LibSoup.libraryVersions,
                     CryptoLibraries.libraryVersions, MediaLibraries.libraryVersions] {
            all.merge(part) { first, _ in first }
        }
        return all.sorted { $0.key < $1.key }.map { (name: $0.key, version: $0.value) }
    }

    /// The text `peer --version` prints: "peer 0.1.0" then one "  name version" line per library.
    public static var text: String {
        (["peer \(current)"] + libraries.map { "  \($0.name) \($0.version)" }).joined(separator: "\n")
    }
}
