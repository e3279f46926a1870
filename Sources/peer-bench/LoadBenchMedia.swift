// LoadBenchMedia: the files `peer-bench load` sends — the test pattern encoded once by the project's VP8 encoder into an IVF (640x480@30, 1 Mbit/s) and a tone by its Opus encoder into an Ogg Opus file, long enough for a call.
import Foundation
import Media

/// The media files of a load benchmark, made with `peer`'s own encoders before any call:
/// every sender then passes them through (no encoding during the calls).
enum LoadBenchMedia {
    static let width = 640, height = 480, fps = 30, kbps = 1_000

    /// Makes `dir/load.ivf` (the pattern, VP8 at ``kbps``, a key frame every 2 s) and
    /// `dir/load.ogg` (a 660 Hz tone, Opus 20 ms frames at 32 kbit/s, mono), each
    /// `seconds` long, and returns their paths. aiortc plays them once (its MediaPlayer
    /// does not loop packets in time), so they outlast its calls; `peer` loops them.
    /// - Throws: the encoders' and writers' errors.
    static func make(in dir: String, seconds: Int) throws -> (video: String, audio: String) {
        let video = dir + "/load.ivf", audio = dir + "/load.ogg"
        let started = Date()
        let frames = seconds * fps
        let source = try PatternSource(width: width, height: height, frameRate: fps, frameCount: frames, clock: { 1_700_000_000_000 })
        var config = VP8EncoderConfiguration(width: width, height: height, frameRate: fps, bitrateKbps: kbps)
        config.keyframeInterval = 2 * fps
        let encoder = try VP8Encoder(configuration: config)
        let ivf = try IVFWriter(path: video, headerRewriteInterval: 0)
        var bytes = 0
        while case let .raw(frame)? = try source.nextFrame() {
            for encoded in try encoder.encode(frame) {
                bytes += encoded.data.count
                try ivf.write(encoded)
            }
        }
        for encoded in try encoder.flush() { try ivf.write(encoded) }
        try ivf.close()

        let tone = try ToneSource(frequency: 660, levelDBFS: -12, channels: 1)
        let opus = try OpusEncoder(configuration: OpusEncoderConfiguration(channels: 1, bitrate: 32_000))
        let ogg = try OggOpusWriter(path: audio, channels: 1, preSkip: opus.lookahead)
        for _ in 0..<(seconds * 50) {  // 20 ms frames
            guard let block = try tone.nextFrame(sampleCount: opus.configuration.samplesPerFrame) else { break }
            try ogg.write(try opus.encode(block))
        }
        try ogg.close()
        print(String(format: "load: media made by peer's encoders in %.1f s: %@ (%d frames %dx%d@%d, %.0f kbit/s) and %@ (Opus, %d s)",
                     Date().timeIntervalSince(started), video, ivf.framesWritten, width, height, fps,
                     Double(bytes) * 8 / Double(seconds) / 1000, audio, seconds))
        return (video, audio)
    }
}
