import Testing
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
}
