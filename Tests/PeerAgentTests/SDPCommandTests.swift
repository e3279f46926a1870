import Foundation
import Testing
import TestSupport
@testable import PeerAgent
@testable import PeerCall
import SDP

/// `peer sdp` as a user runs it: the built executable, real fixture files.
@Suite struct SDPCommandTests {
    /// The `peer` executable SwiftPM built next to the test bundle.
    static var peer: String {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("peer").path
    }
    static let fixture = TestServices.root.appendingPathComponent("Tests/SDPTests/Fixtures/chromium-offer-av.sdp").path

    @Test func printsTheParsedDescriptionAsJSON() async throws {
        let run = try await TestServices.run(Self.peer, ["sdp", Self.fixture])
        #expect(run.status == 0, "\(run.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        let media = try #require(json["media"] as? [[String: Any]])
        #expect(media.map { $0["kind"] as? String } == ["audio", "video"])
        #expect(media.map { $0["mid"] as? String } == ["0", "1"])
        let payloads = try #require(media[0]["payloads"] as? [[String: Any]])
        #expect(payloads.first?["name"] as? String == "opus")
        #expect(payloads.first?["payloadType"] as? Int == 111)
    }

    @Test func answerFromStdinIsAValidAnswerWithAFreshFingerprint() async throws {
        let run = try await TestServices.run("/bin/sh", ["-c", "\"$0\" sdp - --answer < \"$1\"", Self.peer, Self.fixture])
        #expect(run.status == 0, "\(run.stderr)")
        let answer = try SessionDescription(parsing: run.stdout)
        #expect(answer.media.map(\.formats) == [["111"], ["96"]])
        #expect(answer.media.map(\.setup) == [.active, .active])
        #expect(answer.media.first?.fingerprints.first?.bytes.count == 32)
        #expect(run.stdout.hasSuffix("\r\n"))
    }

    @Test func badInputExitsTwoNamingFileAndLine() async throws {
        let dir = TestServices.temporaryDirectory("sdp")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/bad.sdp"
        try "v=0\r\no=- 1 1 IN IP4 0.0.0.0\r\ns=-\r\nt=0 0\r\nm=audio 99999 RTP/AVP 0\r\n".write(toFile: path, atomically: true, encoding: .utf8)
        let run = try await TestServices.run(Self.peer, ["sdp", path])
        #expect(run.status == 2)
        #expect(run.stderr.contains("\(path): SDP line 5 \"m=audio 99999 RTP/AVP 0\": expected a port 0-65535"), "\(run.stderr)")
        #expect(run.stdout.isEmpty)

        let missing = try await TestServices.run(Self.peer, ["sdp", "/nonexistent.sdp"])
        #expect(missing.status == 2 && missing.stderr.contains("cannot read \"/nonexistent.sdp\": no such file"))
        let noFile = try await TestServices.run(Self.peer, ["sdp"])
        #expect(noFile.status == 2 && noFile.stderr.contains("missing FILE"))
        let unknown = try await TestServices.run(Self.peer, ["sdp", Self.fixture, "--frobnicate"])
        #expect(unknown.status == 2 && unknown.stderr.contains("--frobnicate"))
    }

    @Test func versionAndUnknownCommand() async throws {
        let version = try await TestServices.run(Self.peer, ["--version"])
        #expect(version.status == 0 && version.stdout.hasPrefix("peer \(PeerVersion.current)\n"))
        let bare = try await TestServices.run(Self.peer, [])
        #expect(bare.status == 2 && bare.stderr.contains("usage:"))
        let unknown = try await TestServices.run(Self.peer, ["dance"])
        #expect(unknown.status == 2 && unknown.stderr.contains("unknown command \"dance\""))
    }
}
