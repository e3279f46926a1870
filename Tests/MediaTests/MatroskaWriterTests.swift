// MatroskaWriter: VP8 frames (vpxenc's) and Opus packets into WebM and Matroska, read back by ffprobe and ffmpeg — codecs, sizes, frame counts, durations — and the errors it names.
import Foundation
import Testing
import TestSupport
@testable import Media

@Suite struct MatroskaWriterTests {
    /// 60 VP8 frames (2 s at 30 fps, 320x240) and 2 s of Opus in one `.webm`, two inter
    /// frames before the first key frame skipped: ffprobe sees vp8 320x240 with 60 frames
    /// and opus at 48 kHz, the file 2 s long (±2 %); ffmpeg decodes it without an error;
    /// an Opus-only `.mka` and a VP8-only `.mkv` likewise.
    @Test func videoAndAudioGoIntoOneFileFfprobeReads() async throws {
        let dir = TestServices.temporaryDirectory("matroska")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let frames = try IVFReader.readAll(path: try await MediaFileTool.makeVP8(dir))
        let packets = try OggOpusFixture.tone(seconds: 2, channels: 2)
        let both = dir + "/both.webm"
        let writer = try MatroskaWriter(path: both, tracks: [.vp8, .opus])
        try writer.write(video: frames[1], track: 0, ms: 0)
        try writer.write(video: frames[2], track: 0, ms: 0)
        for i in 0..<60 {
            try writer.write(video: frames[i], track: 0, ms: frames[i].timestamp / 90)
            for p in packets[(i * 50 / 30)..<((i + 1) * 50 / 30)] { try writer.write(audio: p, track: 1, ms: p.timestamp / 48) }
        }
        #expect(writer.packetsWritten == [60, 100])
        try writer.close()
        #expect(throws: MatroskaError.closed(path: both)) { try writer.write(video: frames[0], track: 0, ms: 3_000) }
        let probe = try await MediaFileTool.check("ffprobe", ["-v", "error", "-count_frames", "-show_entries",
            "stream=codec_name,width,height,sample_rate,channels,nb_read_frames:format=duration,format_name", "-of", "json", both])
        let json = try #require(try JSONSerialization.jsonObject(with: Data(probe.stdout.utf8)) as? [String: Any])
        let streams = json["streams"] as? [[String: Any]] ?? []
        let format = json["format"] as? [String: Any] ?? [:]
        print("matroska: \(streams); \(format)")
        #expect(streams.first?["codec_name"] as? String == "vp8" && streams.first?["width"] as? Int == 320 && streams.first?["height"] as? Int == 240)
        #expect(streams.first?["nb_read_frames"] as? String == "60")
        #expect(streams.last?["codec_name"] as? String == "opus" && streams.last?["sample_rate"] as? String == "48000" && streams.last?["channels"] as? Int == 2)
        let duration = try #require(Double(format["duration"] as? String ?? ""))
        #expect(abs(duration - 2) <= 0.04, "duration \(duration) s")
        #expect((format["format_name"] as? String)?.contains("webm") == true)
        _ = try await MediaFileTool.check("ffmpeg", ["-v", "error", "-i", both, "-f", "null", "-"])
        // One track each.
        let audio = dir + "/audio.mka", video = dir + "/video.mkv"
        let a = try MatroskaWriter(path: audio, tracks: [.opus]), v = try MatroskaWriter(path: video, tracks: [.vp8])
        for p in packets { try a.write(audio: p, track: 0, ms: p.timestamp / 48) }
        for f in frames { try v.write(video: f, track: 0, ms: f.timestamp / 90) }
        try a.close()
        try v.close()
        #expect(abs(try await OggOpusFixture.ffprobeDuration(audio) - 2) <= 0.04)
        #expect(abs(try await OggOpusFixture.ffprobeDuration(video) - 2) <= 0.04)
        #expect(throws: MatroskaError.noTrack(0, path: audio)) { try a.write(video: frames[0], track: 0, ms: 0) }
    }

    /// A key frame that says 0x0 (a peer's bad header) does not start the file; the next
    /// good one does, and ffprobe reads its size.
    @Test func aKeyFrameOfNoSizeDoesNotStartTheFile() async throws {
        let dir = TestServices.temporaryDirectory("matroska-zero")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let frames = try IVFReader.readAll(path: try await MediaFileTool.makeVP8(dir))
        let path = dir + "/zero.webm"
        let writer = try MatroskaWriter(path: path, tracks: [.vp8])
        // Frame tag: key frame, version 0, shown, first partition 0; start code; 0 x 0 (RFC 6386 §9.1).
        let zero = EncodedVideoFrame(data: [0x10, 0x00, 0x00, 0x9D, 0x01, 0x2A, 0, 0, 0, 0], isKeyframe: true, timestamp: 0)
        try writer.write(video: zero, track: 0, ms: 0)
        #expect(writer.packetsWritten == [0])
        for f in frames { try writer.write(video: f, track: 0, ms: f.timestamp / 90) }
        try writer.close()
        #expect(writer.packetsWritten == [60])
        let probe = try await MediaFileTool.check("ffprobe", ["-v", "error", "-show_entries", "stream=width,height", "-of", "csv=p=0", path])
        #expect(probe.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "320,240")
    }

    /// A file that cannot be made names libavformat's call, the reason and the path.
    @Test func aFileThatCannotBeMadeIsNamed() {
        do {
            _ = try MatroskaWriter(path: "/nonexistent/dir/x.webm", tracks: [.vp8])
            Issue.record("made a file in a missing directory")
        } catch {
            #expect("\(error)".contains("avio_open") && "\(error)".contains("/nonexistent/dir/x.webm") && "\(error)".contains("No such file"), "\(error)")
        }
    }
}
