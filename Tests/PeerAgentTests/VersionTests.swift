import Testing
import TestSupport
@testable import PeerAgent
@testable import PeerCall

@Suite struct VersionTests {
    @Test func versionTextListsEveryLibrary() {
        let names = PeerVersion.libraries.map(\.name)
        #expect(names == ["glib", "libavformat", "libnice", "libopus", "libsoup", "libsrtp2", "libvpx", "openssl"])
        #expect(PeerVersion.text.hasPrefix("peer \(PeerVersion.current)\n"))
        for (name, version) in PeerVersion.libraries {
            #expect(PeerVersion.text.contains("  \(name) \(version)"))
            #expect(version.split(separator: ".").count >= 2, "\(name) \(version)")
        }
    }

    /// libavformat is loaded for the first WebM/Matroska recording, not linked: with it and
    /// libavcodec the binary needed 164 shared libraries at every start (72 without).
    @Test func thePeerBinaryDoesNotLinkLibavformat() async throws {
        let r = try await TestServices.run("/usr/bin/readelf", ["-d", SDPCommandTests.peer])
        let needed = r.stdout.split(separator: "\n").filter { $0.contains("(NEEDED)") }
        #expect(needed.contains { $0.contains("libnice") }, "readelf read the binary: \(needed)")
        #expect(!needed.contains { $0.contains("libavformat") || $0.contains("libavcodec") || $0.contains("libavutil") }, "\(needed)")
        #expect(PeerVersion.text.contains("libavformat 59") || PeerVersion.text.contains("libavformat 6"))
    }
}
