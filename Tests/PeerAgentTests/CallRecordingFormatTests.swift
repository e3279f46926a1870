// Recording formats chosen by the file's extension in real calls through the router: WebM and Matroska video (libavformat's muxer), Ogg and WAV audio, each read back by ffprobe (duration, codec, frames), and a WebM left by a SIGKILLed process that ffmpeg still reads.
import Foundation
import Media
import Testing
import TestSupport

@Suite struct CallRecordingFormatTests {
    /// ffprobe's view of a file: the container's duration (s), and its first stream's
    /// codec and frame count (counted by reading them).
    struct Probe {
        var duration: Double?
        var codec: String?
        var frames: Int?
    }

    static func probe(_ path: String) async throws -> Probe {
        let run = try await CallChecks.tool("ffprobe", ["-v", "error", "-count_frames", "-show_entries",
                                                       "format=duration:stream=codec_name,nb_read_frames", "-of", "json", path])
        #expect(run.status == 0, "ffprobe \(path): \(run.stderr)")
        let json = (try? JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any]) ?? [:]
        let stream = (json["streams"] as? [[String: Any]])?.first
        return Probe(duration: ((json["format"] as? [String: Any])?["duration"] as? String).flatMap(Double.init),
                     codec: stream?["codec_name"] as? String, frames: (stream?["nb_read_frames"] as? String).flatMap { Int($0) })
    }

    /// A 10 s call: the answerer records video to `.webm` and audio to `.wav`, the
    /// offerer video to `.mkv` and audio to `.ogg`. Each file lasts the receiver's media
    /// time (its `established` to its exit) within 2 % by ffprobe, has the right codec
    /// (vp8, opus, pcm_s16le), and the video files hold the frames the receiver says it
    /// wrote, ≥ 90 % of what the sender sent.
    @Test func webmMatroskaOggAndWavLastTheCall() async throws {
        try await CallSlots.with(peers: 2) {
            let services = try await TestServices.shared()
            let h = CallHarness("formats")
            defer { h.remove() }
            let common = try CallHarness.common(services, duration: 10)
            async let answerer = h.run("answerer", "answer", common, files: ("webm", "wav"))
            #expect(await h.waitForState("answerer", "ringing"))
            async let offerer = h.run("offerer", "offer", common, files: ("mkv", "ogg"))
            let (a, o) = try await (answerer, offerer)
            CallChecks.exitedZero([a, o])
            for (receiver, sender, video, audio, audioCodec) in [(a, o, "webm", "wav", "pcm_s16le"), (o, a, "mkv", "ogg", "opus")] {
                let established = try #require(receiver.time(of: "state", "state", "established"), "\(receiver.log)")
                let exit = try #require(receiver.events("exit").first?["t"] as? Double, "\(receiver.log)")
                let mediaTime = (exit - established) / 1000
                let v = try await Self.probe(h.path("\(receiver.name).\(video)")), s = try await Self.probe(h.path("\(receiver.name).\(audio)"))
                let written = receiver.stats(about: sender.name).flatMap { CallChecks.statsObject($0, type: "inbound-rtp", kind: "video") }?["framesWritten"] as? Int
                let sent = sender.stats(about: receiver.name).flatMap { CallChecks.statsObject($0, type: "outbound-rtp", kind: "video") }?["framesSent"] as? Int ?? 0
                print("formats: \(receiver.name) media time \(String(format: "%.3f", mediaTime)) s; .\(video) \(v); .\(audio) \(s); framesWritten \(String(describing: written)), sent \(sent)")
                #expect(v.codec == "vp8" && s.codec == audioCodec)
                for (file, d) in [(video, v.duration), (audio, s.duration)] {
                    #expect(d.map { abs($0 - mediaTime) <= 0.02 * mediaTime } == true, ".\(file): \(String(describing: d)) s vs media time \(mediaTime) s")
                }
                #expect(v.frames != nil && v.frames == written && Double(v.frames ?? 0) >= 0.9 * Double(sent), "frames \(String(describing: v.frames))")
                // The audio packets a recording holds are counted, a WAV's too.
                let audioWritten = receiver.stats(about: sender.name).flatMap { CallChecks.statsObject($0, type: "inbound-rtp", kind: "audio") }?["framesWritten"] as? Int ?? 0
                let audioSent = sender.stats(about: receiver.name).flatMap { CallChecks.statsObject($0, type: "outbound-rtp", kind: "audio") }?["packetsSent"] as? Int ?? 0
                #expect(Double(audioWritten) >= 0.9 * Double(audioSent) && audioSent > 0, ".\(audio): \(audioWritten) packets written of \(audioSent) sent")
            }
        }
    }

    /// A WebM recording whose process is killed with SIGKILL mid-call: ffmpeg reads it
    /// without an error, to within a second and a half of the kill (its last whole cluster;
    /// clusters are 1 s).
    @Test func aKilledProcessLeavesAWebMThatPlays() async throws {
        try await CallSlots.with(peers: 2) {
            let services = try await TestServices.shared()
            let h = CallHarness("killed-webm")
            defer { h.remove() }
            let common = try CallHarness.common(services, duration: 20)
            async let answerer = h.run("answerer", "answer", common, files: ("webm", "ogg"))
            #expect(await h.waitForState("answerer", "ringing"))
            async let offerer = h.run("offerer", "offer", common)
            let recording = await h.waitFor("answerer") { $0["event"] as? String == "frames" && ($0["video"] as? Int ?? 0) >= 60 }
            #expect(recording)
            let pid = try h.pid("answerer")
            #expect(kill(pid, SIGKILL) == 0)
            let runs = try await [answerer, offerer]
            #expect(runs[0].status != 0)
            let frames = runs[0].events("frames").last?["video"] as? Int ?? 0
            let file = h.path("answerer.webm")
            let decoded = try await CallChecks.tool("ffmpeg", ["-v", "error", "-i", file, "-f", "null", "-"])
            let p = try await Self.probe(file)
            print("killed webm: \(p); the last frames event said \(frames) frames; ffmpeg: \(decoded.stderr.prefix(300))")
            #expect(decoded.status == 0 && p.codec == "vp8", "ffmpeg -i \(file): \(decoded.stderr)")
            #expect((p.frames ?? 0) >= frames - 25, "frames read back \(String(describing: p.frames)) vs \(frames) written by the last report (15 fps)")
        }
    }

    /// `--record`: the offerer sends the pattern at 15 fps and a WAV of 4 s, silent but for
    /// a 1 kHz burst from 2.0 s (looped: bursts at 2, 6 s …, when frames 30, 90 … are
    /// drawn). The answerer records both in one `.mkv`. Read back with ffmpeg (video copied
    /// out to IVF and decoded here for its frame markers; audio decoded to PCM from its
    /// start time): the burst starts within 40 ms of frame 90's time; both tracks there,
    /// the file as long as the call within 2 %.
    @Test func recordKeepsAudioAndVideoInSync() async throws {
        try await CallSlots.with(peers: 2) {
            let services = try await TestServices.shared()
            let h = CallHarness("record-sync")
            defer { h.remove() }
            let wav = h.path("burst.wav")
            let writer = try WAVWriter(path: wav, channels: 1)
            let samples = (0..<(4 * 48_000)).map { i -> Int16 in
                (96_000..<100_800).contains(i) ? Int16(12_000 * sin(2 * Double.pi * 1_000 * Double(i) / 48_000)) : 0
            }
            try writer.write(AudioFrame(channels: 1, samples: samples))
            try writer.close()
            let common = try CallHarness.common(services, duration: 9)
            let record = h.path("rec.mkv")
            async let answerer = h.run("answerer", "answer", common + ["--record", record])
            #expect(await h.waitForState("answerer", "ringing"))
            async let offerer = h.run("offerer", "offer", common + ["--audio", "wav:" + wav])
            let (a, o) = try await (answerer, offerer)
            CallChecks.exitedZero([a, o])
            let recorded = a.events("recorded").first
            #expect(recorded?["sync"] as? String == "sender reports" && (recorded?["problems"] as? [Any])?.isEmpty == true, "\(a.log)")
            let probe = try await CallChecks.tool("ffprobe", ["-v", "error", "-show_entries", "stream=codec_name,start_time:format=duration",
                                                             "-of", "json", record])
            let json = (try? JSONSerialization.jsonObject(with: Data(probe.stdout.utf8)) as? [String: Any]) ?? [:]
            let streams = json["streams"] as? [[String: Any]] ?? []
            #expect(streams.compactMap { $0["codec_name"] as? String } == ["vp8", "opus"], "\(probe.stdout)")
            let audioStart = Double(streams.last?["start_time"] as? String ?? "") ?? 0
            // Video: copied out with its times, decoded for the markers.
            let ivf = h.path("rec-video.ivf"), pcm = h.path("rec-audio.raw")
            _ = try await CallChecks.tool("ffmpeg", ["-v", "error", "-copyts", "-i", record, "-map", "0:v", "-c", "copy", "-f", "ivf", ivf])
            _ = try await CallChecks.tool("ffmpeg", ["-v", "error", "-i", record, "-map", "0:a", "-ac", "1", "-ar", "48000", "-f", "s16le", pcm])
            let decoder = try VP8Decoder()
            var frameTimes: [Int: Double] = [:]
            for f in try IVFReader.readAll(path: ivf) {
                for d in try decoder.decode(f.data, timestamp: f.timestamp) {
                    if let m = FrameMarker.read(from: d.frame) { frameTimes[m.frameNumber] = Double(f.timestamp) / 90_000 }
                }
            }
            let raw = try Data(contentsOf: URL(fileURLWithPath: pcm))
            let pcmSamples = raw.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
            // Burst onsets: the first loud sample after at least 0.5 s of quiet.
            var onsets: [Double] = [], quiet = 0
            for (i, v) in pcmSamples.enumerated() {
                if abs(Int(v)) > 3_000 { if quiet >= 24_000 { onsets.append(audioStart + Double(i) / 48_000) }; quiet = 0 } else { quiet += 1 }
            }
            let frame90 = try #require(frameTimes[90], "frame 90 in the recording: \(frameTimes.keys.sorted().prefix(5))…")
            let nearest = try #require(onsets.min { abs($0 - frame90) < abs($1 - frame90) }, "no burst in the recording")
            let offset = nearest - frame90
            print("record sync: frame 90 at \(String(format: "%.3f", frame90)) s, burst onsets \(onsets.map { String(format: "%.3f", $0) }); A/V offset \(String(format: "%.1f", offset * 1000)) ms; audio start \(audioStart)")
            #expect(abs(offset) < 0.040, "A/V offset \(offset * 1000) ms")
            let duration = Double((json["format"] as? [String: Any])?["duration"] as? String ?? "") ?? 0
            let established = try #require(a.time(of: "state", "state", "established")), exit = try #require(a.events("exit").first?["t"] as? Double)
            let mediaTime = (exit - established) / 1000
            #expect(abs(duration - mediaTime) <= 0.02 * mediaTime, "duration \(duration) s vs media time \(mediaTime) s")
        }
    }

    /// `--audio ogg:PATH`: the offerer sends an Ogg Opus file (660 Hz, 2 s, made by opusenc)
    /// as it is, looped. The answerer's recording holds the file's packets byte for byte
    /// from its first, its tone is 660 Hz, and it lasts the call (packets paced in real
    /// time: the sender's packetsSent is its media time × 50 within 10 %).
    @Test func anOggOpusFileIsSentAsItIs() async throws {
        try await CallSlots.with(peers: 2) {
            let services = try await TestServices.shared()
            let h = CallHarness("ogg-source")
            defer { h.remove() }
            let wav = h.path("tone.wav"), ogg = h.path("tone.ogg")
            let writer = try WAVWriter(path: wav, channels: 1)
            try writer.write(AudioFrame(channels: 1, samples: (0..<96_000).map { Int16(8_000 * sin(2 * Double.pi * 660 * Double($0) / 48_000)) }))
            try writer.close()
            let enc = try await CallChecks.tool("opusenc", ["--quiet", wav, ogg])
            #expect(enc.status == 0, "opusenc: \(enc.stderr)")
            let common = try CallHarness.common(services, duration: 5)
            async let answerer = h.run("answerer", "answer", common)
            #expect(await h.waitForState("answerer", "ringing"))
            async let offerer = h.run("offerer", "offer", common + ["--audio", "ogg:" + ogg])
            let (a, o) = try await (answerer, offerer)
            CallChecks.exitedZero([a, o])
            let sent = try OggOpusReader(path: ogg).packets, got = try OggOpusReader(path: h.path("answerer.ogg")).packets
            #expect(got.count > 100 && Array(got.prefix(sent.count)) == Array(sent.prefix(got.count)), "the file's packets as they are: \(got.count) received")
            let tones = try CallDataChannelTests.toneFrequencies(h.path("answerer.ogg"))
            #expect(!tones.isEmpty && tones.allSatisfy { abs($0 - 660) < 12 }, "\(tones)")
            let established = try #require(o.time(of: "state", "state", "established")), exit = try #require(o.events("exit").first?["t"] as? Double)
            let mediaTime = (exit - established) / 1000
            let packets = o.stats(about: "answerer").flatMap { CallChecks.statsObject($0, type: "outbound-rtp", kind: "audio") }?["packetsSent"] as? Int ?? 0
            print("ogg source: \(sent.count) packets in the file, \(got.count) recorded, \(packets) sent in \(mediaTime) s; tones \(tones)")
            #expect(abs(Double(packets) - mediaTime * 50) <= 0.1 * mediaTime * 50, "paced in real time")
        }
    }
}
