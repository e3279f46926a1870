// OggOpusSource (--audio ogg:PATH): an Ogg Opus file's packets as they are, timestamped by the samples before them, looped.
import Foundation
import Testing
import TestSupport
@testable import Media

/// OggOpusSource: an Ogg Opus file's packets as they are, timestamped by the samples before
/// them, looped with the time going on; a file that is not Ogg Opus is refused by name.
@Suite struct OggOpusSourceTests {
    @Test func packetsComeAsTheyAreAtTheirSamplesAndLoop() throws {
        let dir = TestServices.temporaryDirectory("ogg-source")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let packets = try OggOpusFixture.tone(seconds: 1, channels: 2)
        let path = dir + "/tone.ogg"
        let writer = try OggOpusWriter(path: path, channels: 2)
        for p in packets { try writer.write(p) }
        try writer.close()
        let source = try OggOpusSource(path: path)
        #expect(source.channels == 2 && source.sendsEncoded)
        let first = try (0..<75).compactMap { _ in try source.nextPacket() }
        #expect(first.count == 75)
        #expect(first.map(\.timestamp) == (0..<75).map { Int64($0) * 960 }, "20 ms packets, the file looping after 50")
        #expect(Array(first.prefix(50)).map(\.data) == packets.map(\.data) && first[50].data == packets[0].data)
        try Data("not ogg".utf8).write(to: URL(fileURLWithPath: dir + "/bad.ogg"))
        #expect(throws: OggOpusError.self) { try OggOpusSource(path: dir + "/bad.ogg") }
    }
}
