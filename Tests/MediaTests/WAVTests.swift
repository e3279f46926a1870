import Foundation
import Testing
import TestSupport
@testable import Media

@Suite struct WAVTests {
    /// A stereo ramp block of `n` samples per channel starting at sample `start` (48 kHz timestamps).
    static func block(start: Int, n: Int) throws -> AudioFrame {
        var s: [Int16] = []
        for i in start..<(start + n) {
            s.append(Int16(truncatingIfNeeded: i * 7))
            s.append(Int16(truncatingIfNeeded: -i * 3))
        }
        return try AudioFrame(channels: 2, samples: s, timestamp: Int64(start))
    }

    /// Issue 7 A6: a 2.5 s timestamp gap is written as silence in pieces of at most one
    /// second (before the fix: one 480 000-byte buffer and write; a 10-minute stereo gap
    /// was 115 MB at once); the file still has the gap's samples, all zero, then the block.
    @Test func gapSilenceIsWrittenInPiecesOfAtMostOneSecond() throws {
        let dir = TestServices.temporaryDirectory("wav-gap")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = "\(dir)/gap.wav"
        let writer = try WAVWriter(path: path, channels: 2)
        try writer.write(Self.block(start: 0, n: 960))
        try writer.write(Self.block(start: 960 + 120_000, n: 960))
        #expect(writer.largestAppend <= 48_000 * 4)
        #expect(writer.samplesPerChannelWritten == 960 + 120_000 + 960)
        try writer.close()
        let reader = try WAVReader(path: path)
        #expect(reader.totalSamplesPerChannel == 960 + 120_000 + 960)
        let first = try #require(try reader.read(samplesPerChannel: 960))
        #expect(first.samples == (try Self.block(start: 0, n: 960)).samples)
        let gap = try #require(try reader.read(samplesPerChannel: 120_000))
        #expect(gap.samples.count == 240_000 && gap.samples.allSatisfy { $0 == 0 })
        let last = try #require(try reader.read(samplesPerChannel: 960))
        #expect(last.samples == (try Self.block(start: 960 + 120_000, n: 960)).samples)
    }

    @Test func writerOutputIsPCM16At48kHzWithTheRightDurationForFfprobe() async throws {
        let dir = TestServices.temporaryDirectory("wav")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = "\(dir)/out.wav"
        let writer = try WAVWriter(path: path, channels: 2, sizeUpdateInterval: 0)
        // 1.5 s in 10 ms blocks, with blocks 50..<60 (0.1 s) missing: filled with silence.
        for k in 0..<150 where !(50..<60).contains(k) { try writer.write(try Self.block(start: k * 480, n: 480)) }
        // Sizes are on disk before close (interval 0: every write rewrites them).
        let before = MediaFileTool.bytes(path)
        #expect(before.fileLE32(40) == 150 * 480 * 4 && before.fileLE32(4) == 36 + 150 * 480 * 4)
        try writer.close()
        #expect(writer.samplesPerChannelWritten == 72_000)
        #expect(throws: WAVError.channelMismatch(expected: 2, got: 1)) {
            try WAVWriter(path: "\(dir)/x.wav", channels: 2).write(try AudioFrame(channels: 1, samples: [1]))
        }

        let b = MediaFileTool.bytes(path)
        try #require(b.count == 44 + 72_000 * 4)
        #expect(Array(b[0..<4]) == Array("RIFF".utf8) && Array(b[8..<16]) == Array("WAVEfmt ".utf8))
        #expect(b.fileLE32(16) == 16 && b.fileLE16(20) == 1 && b.fileLE16(22) == 2 && b.fileLE32(24) == 48_000)
        #expect(b.fileLE32(28) == 192_000 && b.fileLE16(32) == 4 && b.fileLE16(34) == 16 && Array(b[36..<40]) == Array("data".utf8))
        #expect(b.fileLE32(40) == 72_000 * 4)
        // The gap is silence, the samples around it are the ramp.
        #expect(b[(44 + 50 * 480 * 4)..<(44 + 60 * 480 * 4)].allSatisfy { $0 == 0 })
        #expect(b.fileLE16(44 + 60 * 480 * 4) == (60 * 480 * 7) & 0xffff)

        let r = try await MediaFileTool.check("ffprobe", ["-v", "error", "-show_entries",
            "stream=codec_name,sample_rate,channels,duration", "-of", "csv=p=0", path])
        #expect(r.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "pcm_s16le,48000,2,1.500000")
        print("WAV writer: ffprobe \(r.stdout.trimmingCharacters(in: .whitespacesAndNewlines))")

        // Our reader reads our file back sample-exact.
        let reader = try WAVReader(path: path)
        #expect(reader.channels == 2 && reader.sampleRate == 48_000 && reader.totalSamplesPerChannel == 72_000)
        var all: [Int16] = []
        while let f = try reader.read(samplesPerChannel: 1000) { all += f.samples }
        #expect(all.count == 144_000 && all[2 * 480] == Int16(480 * 7) && all[2 * 480 + 1] == Int16(-480 * 3))
    }

    @Test func readerReadsAnFfmpegWAVSampleExact() async throws {
        let dir = TestServices.temporaryDirectory("wav-read")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let wav = "\(dir)/ffmpeg.wav", raw = "\(dir)/ffmpeg.raw"
        // Two different tones left and right, 0.5 s; ffmpeg adds a LIST chunk before the data.
        let source = ["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=0.5",
                      "-f", "lavfi", "-i", "sine=frequency=1000:sample_rate=48000:duration=0.5",
                      "-filter_complex", "[0:a][1:a]join=inputs=2:channel_layout=stereo"]
        try await MediaFileTool.check("ffmpeg", ["-v", "error", "-y"] + source + ["-c:a", "pcm_s16le", wav])
        try await MediaFileTool.check("ffmpeg", ["-v", "error", "-y", "-i", wav, "-f", "s16le", "-c:a", "pcm_s16le", raw])
        let rawBytes = MediaFileTool.bytes(raw)
        let expected = (0..<(rawBytes.count / 2)).map { Int16(bitPattern: UInt16(rawBytes.fileLE16(2 * $0))) }
        try #require(expected.count == 48_000)

        let reader = try WAVReader(path: wav)
        #expect(reader.channels == 2 && reader.totalSamplesPerChannel == 24_000)
        var samples: [Int16] = [], stamps: [Int64] = [], sizes: [Int] = []
        while let f = try reader.read(samplesPerChannel: 441) {
            samples += f.samples
            stamps.append(f.timestamp)
            sizes.append(f.samplesPerChannel)
        }
        #expect(samples == expected)
        #expect(stamps == (0..<55).map { Int64($0 * 441) })
        #expect(sizes.last == 24_000 - 54 * 441)
        #expect(samples.contains { $0 != 0 })

        // Looping keeps going with increasing timestamps.
        reader.rewind()
        reader.loop = true
        var looped: [AudioFrame] = []
        for _ in 0..<30 { if let f = try reader.read(samplesPerChannel: 960) { looped.append(f) } }
        #expect(looped.count == 30 && looped[25].timestamp == 25 * 960 && looped[25].samples == Array(expected[2 * 960 * 25 - 48_000..<(2 * 960 * 26 - 48_000)]))

        // A truncated data chunk gives the whole samples present.
        let cut = "\(dir)/cut.wav"
        let whole = MediaFileTool.bytes(wav)
        try Data(whole.dropLast(1003)).write(to: URL(fileURLWithPath: cut))
        let truncated = try WAVReader(path: cut)
        #expect(truncated.totalSamplesPerChannel == 24_000 - 251)  // 1003 bytes = 250.75 stereo samples
        var got: [Int16] = []
        while let f = try truncated.read(samplesPerChannel: 4800) { got += f.samples }
        #expect(got == Array(expected.prefix(2 * (24_000 - 251))))
    }
}
