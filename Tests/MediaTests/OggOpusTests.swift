import Foundation
import Testing
import TestSupport
@testable import Media

/// Opus packets from the module's own tone generator and Opus encoder.
enum OggOpusFixture {
    /// `seconds` of a 440 Hz tone (−12 dBFS) at 48 kHz, encoded in 20 ms packets with
    /// timestamps 0, 960, 1920, … (48 kHz).
    static func tone(seconds: Double, channels: Int = 1) throws -> [EncodedAudioFrame] {
        var tone = try ToneGenerator(frequency: 440, levelDBFS: -12, channels: channels)
        let encoder = try OpusEncoder(configuration: OpusEncoderConfiguration(channels: channels, application: .audio))
        return try (0..<Int((seconds * 50).rounded())).map { _ in try encoder.encode(tone.next(sampleCount: 960)) }
    }

    /// ffprobe's format duration of `path` in seconds.
    static func ffprobeDuration(_ path: String) async throws -> Double {
        let r = try await MediaFileTool.check("ffprobe", ["-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", path])
        return try #require(Double(r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)), "ffprobe said \(r.stdout)")
    }

    /// Runs opusinfo on `path`: requires exit 0 and no warning or error in its output.
    static func opusinfo(_ path: String) async throws -> String {
        let r = try await MediaFileTool.run("opusinfo", [path])
        let text = r.stdout + r.stderr
        #expect(r.status == 0, "opusinfo exited \(r.status): \(text)")
        #expect(!text.lowercased().contains("warning") && !text.lowercased().contains("error"), "opusinfo: \(text)")
        return text
    }
}

@Suite struct OggOpusTests {
    @Test func threeSecondToneIsAcceptedByOpusinfoAndLastsThreeSeconds() async throws {
        let dir = TestServices.temporaryDirectory("ogg")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let packets = try OggOpusFixture.tone(seconds: 3.0)
        try #require(packets.count == 150)
        let path = "\(dir)/tone.opus"
        let writer = try OggOpusWriter(path: path, channels: 1, preSkip: 312, comments: ["TITLE=tone"], serial: 0x1234)
        for p in packets { try writer.write(p) }
        try writer.close()
        #expect(writer.packetsWritten == 150 && writer.gapPacketsWritten == 0)

        let info = try await OggOpusFixture.opusinfo(path)
        let duration = try await OggOpusFixture.ffprobeDuration(path)
        #expect(abs(duration - 3.0) <= 0.020, "ffprobe duration \(duration)")

        // Our reader: the headers field by field, the packets as given, granule positions.
        let file = try OggOpusReader(path: path)
        #expect(file.head == OpusHead(version: 1, channels: 1, preSkip: 312, inputSampleRate: 48_000, outputGain: 0, mappingFamily: 0))
        #expect(file.tags == OpusTags(vendor: "peer", comments: ["TITLE=tone"]))
        #expect(file.serial == 0x1234)
        #expect(file.packets == packets.map(\.data))
        #expect(file.finalGranulePosition == 150 * 960)  // every decodable sample, pre-skip included (RFC 7845 §4)
        #expect(file.playbackSamples == 150 * 960 - 312)
        #expect(file.endOfStream)
        // OpusHead and OpusTags alone on pages with granule 0; then a page at least every second.
        #expect(Array(file.pageGranules.prefix(2)) == [0, 0])
        let audio = Array(file.pageGranules.dropFirst(2))
        #expect(zip([0] + audio, audio).allSatisfy { $1 - $0 <= 48_000 + 960 && $1 > $0 }, "\(audio)")
        // The first page is OpusHead alone: 19-byte packet, b_o_s flag.
        let bytes = MediaFileTool.bytes(path)
        #expect(Array(bytes[0..<4]) == Array("OggS".utf8) && bytes[5] == 0x02 && bytes[26] == 1 && bytes[27] == 19)
        print("Ogg tone: ffprobe \(duration) s, pages \(file.pageGranules), opusinfo: \(info.split(separator: "\n").filter { $0.contains("length") || $0.contains("Pre-skip") })")
    }

    @Test func lostPacketsAreFilledSoTheDurationStaysTrue() async throws {
        let dir = TestServices.temporaryDirectory("ogg-gap")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let packets = try OggOpusFixture.tone(seconds: 3.0)
        let path = "\(dir)/gap.opus"
        let writer = try OggOpusWriter(path: path, channels: 1)
        for (i, p) in packets.enumerated() where !(50..<75).contains(i) { try writer.write(p) }  // 0.5 s lost
        try writer.close()
        #expect(writer.packetsWritten == 125 && writer.gapPacketsWritten == 25)

        _ = try await OggOpusFixture.opusinfo(path)
        let duration = try await OggOpusFixture.ffprobeDuration(path)
        #expect(abs(duration - 3.0) <= 0.020, "ffprobe duration \(duration)")
        let file = try OggOpusReader(path: path)
        #expect(file.finalGranulePosition == 150 * 960)
        try #require(file.packets.count == 150)
        let loss = [packets[49].data[0] & 0xFC]  // previous packet's TOC, code 0, no frame data
        #expect(file.packets[50..<75].allSatisfy { $0 == loss })
        #expect(Array(file.packets[75...]) == packets[75...].map(\.data))
        // ffmpeg decodes the whole file (concealing the loss) to 3 s minus pre-skip.
        try await MediaFileTool.check("ffmpeg", ["-v", "error", "-i", path, "-f", "s16le", "-ac", "1", "-ar", "48000", "\(dir)/out.raw"])
        let samples = MediaFileTool.bytes("\(dir)/out.raw").count / 2
        #expect(abs(samples - (144_000 - 312)) <= 960, "ffmpeg decoded \(samples) samples")
        print("Ogg with 25 lost packets: ffprobe \(duration) s, ffmpeg decoded \(samples) samples")
    }

    @Test func oddGapsUseCELTFramesAndLatePacketsAreDropped() throws {
        let dir = TestServices.temporaryDirectory("ogg-odd")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let packets = try OggOpusFixture.tone(seconds: 0.1, channels: 2)
        let path = "\(dir)/odd.opus"
        let writer = try OggOpusWriter(path: path, channels: 2, preSkip: 312)
        try writer.write(packets[0])
        // 960 + 240 + 120 (+ 50 not representable) samples missing before the next packet.
        var next = packets[1]
        next.timestamp = 960 + 1370
        try writer.write(next)
        var late = packets[2]
        late.timestamp = 960  // before the end of the previous packet
        try writer.write(late)
        #expect(throws: OggOpusError.badPacket(index: 3, timestamp: 5, reason: "empty")) {
            try writer.write(EncodedAudioFrame(data: [], sampleCount: 960, timestamp: 5))
        }
        try writer.close()
        #expect(writer.latePacketsDropped == 1 && writer.gapPacketsWritten == 3)
        let file = try OggOpusReader(path: path)
        #expect(file.head.channels == 2)
        #expect(file.packets == [packets[0].data, [packets[0].data[0] & 0xFC], [29 << 3 | 4], [28 << 3 | 4], packets[1].data])
        #expect(file.finalGranulePosition == 960 + 960 + 240 + 120 + 960)
    }

    @Test func emptyStreamStillEndsWithAnEndOfStreamPage() async throws {
        let dir = TestServices.temporaryDirectory("ogg-empty")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = "\(dir)/empty.opus"
        do { _ = try OggOpusWriter(path: path, channels: 1) }  // deinit closes
        let file = try OggOpusReader(path: path)
        #expect(file.endOfStream && file.finalGranulePosition == 312 && file.playbackSamples == 0)
        #expect(file.packets == [[31 << 3]])
        #expect(throws: OggOpusError.badChannelCount(3)) { _ = try OggOpusWriter(path: path, channels: 3) }
    }
}

/// Issue 7 B: OpusHead fields checked as RFC 7845 §5.1 requires.
@Suite struct OpusHeadParsingTests {
    @Test func zeroChannelsAndFamilyZeroBeyondStereoAreRefused() throws {
        let stereo = OpusHead(channels: 2, preSkip: 312, outputGain: -256)
        let parsed = try OpusHead(parsing: stereo.bytes)
        #expect(parsed == stereo)
        #expect(parsed.preSkip == 312 && parsed.outputGain == -256 && parsed.inputSampleRate == 48_000)

        var zero = stereo.bytes
        zero[9] = 0
        #expect(throws: OggOpusError.badOpusHead("channel count 0 at byte 9")) { try OpusHead(parsing: zero) }
        var six = stereo.bytes
        six[9] = 6
        #expect(throws: OggOpusError.badOpusHead("channel count 6 at byte 9 with mapping family 0 (at most 2)")) {
            try OpusHead(parsing: six)
        }
        // Family 1 may have up to 8 channels (its mapping table follows; not read here).
        six[18] = 1
        #expect(try OpusHead(parsing: six + [2, 1, 0, 4, 1, 2, 3, 5]).channels == 6)
        #expect(throws: OggOpusError.badOpusHead("18 bytes, need 19")) { try OpusHead(parsing: Array(stereo.bytes.prefix(18))) }
    }
}
