import Foundation
import Testing
import TestSupport
@testable import Media

@Suite struct Y4MTests {
    @Test func ffmpegY4MFramesEqualItsRawVideoAndLoop() async throws {
        let dir = TestServices.temporaryDirectory("y4m")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // Odd size: chroma planes round up (33x25).
        let y4m = try await MediaFileTool.makeY4M(dir, size: "65x49", rate: 25, frames: 5)
        let raw = "\(dir)/frames.yuv"
        try await MediaFileTool.check("ffmpeg", ["-v", "error", "-y", "-i", y4m, "-f", "rawvideo", "-pix_fmt", "yuv420p", raw])
        let rawBytes = MediaFileTool.bytes(raw)
        let frameSize = 65 * 49 + 2 * 33 * 25
        try #require(rawBytes.count == 5 * frameSize)

        let reader = try Y4MReader(path: y4m)
        #expect(reader.header.width == 65 && reader.header.height == 49)
        #expect(reader.header.frameRateNumerator == 25 && reader.header.frameRateDenominator == 1)
        #expect(reader.header.interlacing == "p" && reader.header.colorspace == "420jpeg")
        var frames: [I420Frame] = []
        while let f = try reader.next() { frames.append(f) }
        try #require(frames.count == 5)
        for (i, f) in frames.enumerated() {
            #expect(f.width == 65 && f.height == 49 && f.byteCount == frameSize)
            #expect(f.data == Array(rawBytes[(i * frameSize)..<((i + 1) * frameSize)]), "frame \(i)")
            #expect(f.timestamp == Int64(i) * 3600)
        }
        #expect(frames[0].data != frames[1].data)  // the pattern moves
        #expect(try reader.next() == nil)

        // Looping: frames 5…11 repeat the file with timestamps going on.
        let looping = try Y4MReader(path: y4m, loop: true)
        var looped: [I420Frame] = []
        for _ in 0..<12 { looped.append(try #require(try looping.next())) }
        #expect(looped.map(\.timestamp) == (0..<12).map { Int64($0) * 3600 })
        #expect(looped[5].data == frames[0].data && looped[11].data == frames[1].data)
        looping.rewind()
        #expect(try looping.next()?.timestamp == 0)
    }

    @Test func headerTokensAndFrameParameters() throws {
        let dir = TestServices.temporaryDirectory("y4m-tokens")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // 2x2 frames, F30000:1001, C420mpeg2, a comment, and FRAME lines with parameters.
        let path = "\(dir)/t.y4m"
        var b = Array("YUV4MPEG2 W2 H2 F30000:1001 Ip A0:0 C420mpeg2 XCOMMENT=1\n".utf8)
        b += Array("FRAME\n".utf8) + [1, 2, 3, 4, 5, 6]
        b += Array("FRAME Ixyz XFOO\n".utf8) + [7, 8, 9, 10, 11, 12]
        try Data(b).write(to: URL(fileURLWithPath: path))
        let reader = try Y4MReader(path: path)
        #expect(reader.header.colorspace == "420mpeg2" && reader.header.aspect == "0:0")
        let f0 = try #require(try reader.next()), f1 = try #require(try reader.next())
        #expect(f0.data == [1, 2, 3, 4, 5, 6] && f1.data == [7, 8, 9, 10, 11, 12])
        #expect(f1.timestamp == 3003)  // 90000 × 1001 / 30000
        #expect(try reader.next() == nil)
    }
}
