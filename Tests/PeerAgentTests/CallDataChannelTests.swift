// Data channels in `peer offer|answer` calls between `peer` processes through the real router and STUN server: data-only and with media, numbered bursts each way, a 256 KiB message, an unordered unreliable channel, closing from the far side, --data-out, --data-echo, the control channel, --min-messages.
import Foundation
import Media
import Testing
import TestSupport

@Suite struct CallDataChannelTests {
    /// The `dataSummary` event of `label` in `run`.
    static func summary(_ run: PeerRun, _ label: String) -> [String: Any]? {
        run.events("dataSummary").last { $0["label"] as? String == label }
    }

    /// The final `data-channel` stats object of `label` in `run`.
    static func channelStats(_ run: PeerRun, _ label: String) -> [String: Any]? {
        let report = run.events("stats").last?["report"] as? [String: Any]
        let stats = report?["stats"] as? [String: [String: Any]] ?? [:]
        return stats.values.first { $0["type"] as? String == "data-channel" && $0["label"] as? String == label }
    }

    /// The tone frequency of each whole second of an Ogg Opus file, Hz: the peak of an FFT
    /// (8,192 samples from the middle of the second, Hann window; 5.9 Hz bins) of the
    /// decoded first channel.
    static func toneFrequencies(_ path: String) throws -> [Double] {
        let file = try OggOpusReader(path: path)
        let decoder = try OpusDecoder(channels: file.head.channels)
        var samples: [Int16] = []
        for (i, packet) in file.packets.enumerated() {
            let frame = try decoder.decode(packet, timestamp: Int64(i) * 960)
            samples += stride(from: 0, to: frame.samples.count, by: frame.channels).map { frame.samples[$0] }
        }
        let n = 8_192
        return stride(from: 0, to: samples.count - 48_000 + 1, by: 48_000).map { start in
            let window = (0..<n).map { i in
                Double(samples[start + 20_000 + i]) * (0.5 - 0.5 * cos(2 * Double.pi * Double(i) / Double(n - 1)))
            }
            let magnitudes = fft(window)
            let peak = (1..<n / 2).max { magnitudes[$0] < magnitudes[$1] } ?? 0
            return Double(peak) * 48_000 / Double(n)
        }
    }

    /// |X[k]| of a real signal whose length is a power of two (iterative radix-2 FFT).
    static func fft(_ signal: [Double]) -> [Double] {
        let n = signal.count
        var re = signal, im = [Double](repeating: 0, count: n)
        var j = 0
        for i in 1..<n {
            var bit = n >> 1
            while j & bit != 0 { j ^= bit; bit >>= 1 }
            j |= bit
            if i < j { re.swapAt(i, j); im.swapAt(i, j) }
        }
        var length = 2
        while length <= n {
            let angle = -2 * Double.pi / Double(length)
            for start in stride(from: 0, to: n, by: length) {
                for k in 0..<length / 2 {
                    let (c, s) = (cos(angle * Double(k)), sin(angle * Double(k)))
                    let a = start + k, b = start + k + length / 2
                    let tr = re[b] * c - im[b] * s, ti = re[b] * s + im[b] * c
                    re[b] = re[a] - tr; im[b] = im[a] - ti
                    re[a] += tr; im[a] += ti
                }
            }
            length <<= 1
        }
        return zip(re, im).map { ($0 * $0 + $1 * $1).squareRoot() }
    }

    /// A data-only call (`--video none --audio none`): 10,000 numbered 1 KiB messages each
    /// way on a reliable ordered channel, all received in order with none missing or
    /// repeated; a 256 KiB message whole; an unordered `maxRetransmits=0` channel; the
    /// offerer closes `bulk` at 5 s and the answerer sees it `closed`; the stats counts
    /// of each side match the other's; `--data-out` has a line per message.
    @Test func dataOnlyCallCarriesBurstsEachWayInOrderABigMessageAndAClose() async throws {
        try await CallSlots.with(peers: 2) {
            let services = try await TestServices.shared()
            let h = CallHarness("data-only")
            defer { h.remove() }
            let common = try CallHarness.common(services, duration: 8) + ["--video", "none", "--audio", "none", "--min-frames", "0"]
            let burst = ["--data-burst", "chat:10000:1024", "--data-burst", "big:1:262144", "--data-burst", "fast:300:100", "--min-messages", "10001"]
            async let answerer = h.run("answerer", "answer", common + burst + ["--data-channel", "chat"])
            #expect(await h.waitForState("answerer", "ringing"))
            async let offerer = h.run("offerer", "offer", common + burst + [
                "--data-channel", "chat", "--data-channel", "big", "--data-channel", "fast,unordered,retransmits=0",
                "--data-channel", "bulk", "--at", "1:send:fast:one", "--at", "1.2:send:fast:two", "--at", "5:close:bulk",
                "--data-out", h.path("offerer-data.jsonl")])
            let (a, o) = try await (answerer, offerer)
            CallChecks.exitedZero([a, o])
            for run in [a, o] { print("data-only \(run.name): errors \(run.events("dataError")) channels \(run.events("datachannel").map { "\($0["label"] ?? "-") \($0["state"] ?? "-")" })") }
            // The summary line names no recording: no audio or video came, none was written.
            for run in [a, o] {
                #expect(run.stderr.contains("no audio or video received, nothing recorded") && !run.stderr.contains(".ivf"), "\(run.log)")
            }
            for (run, other) in [(a, o), (o, a)] {
                let chat = try #require(Self.summary(run, "chat"), "\(run.log)")
                let numbered = chat["numbered"] as? [String: Any]
                print("data-only \(run.name): chat \(chat)")
                #expect(numbered?["received"] as? Int == 10_000 && numbered?["missing"] as? Int == 0
                        && numbered?["duplicates"] as? Int == 0 && numbered?["outOfOrder"] as? Int == 0, "\(chat)")
                let big = Self.summary(run, "big")?["numbered"] as? [String: Any]
                #expect(big?["received"] as? Int == 1 && Self.summary(run, "big")?["bytesReceived"] as? Int == 262_144)
                let mine = try #require(Self.channelStats(run, "chat")), theirs = try #require(Self.channelStats(other, "chat"))
                #expect(mine["messagesSent"] as? Int == theirs["messagesReceived"] as? Int && mine["bytesSent"] as? Int == theirs["bytesReceived"] as? Int,
                        "\(run.name) sent what \(other.name) received: \(mine) vs \(theirs)")
            }
            // Sent once each (maxRetransmits=0): what a loaded loopback drops stays lost.
            let fast = a.events("message").filter { $0["label"] as? String == "fast" }.compactMap { $0["text"] as? String }
            #expect(!fast.isEmpty && Set(fast).isSubset(of: ["one", "two"]), "the unordered maxRetransmits=0 channel: \(fast)")
            for run in [a, o] {
                let n = Self.summary(run, "fast")?["numbered"] as? [String: Any]
                #expect((n?["received"] as? Int ?? 0) >= 240 && n?["duplicates"] as? Int == 0, "\(run.name): ≥ 80 % of 300 on fast: \(String(describing: n))")
            }
            let opened = a.events("datachannel").first { $0["label"] as? String == "fast" && $0["state"] as? String == "opened" }
            #expect((opened?["detail"] as? String)?.contains("unordered, maxRetransmits 0") == true, "\(String(describing: opened))")
            let bulkStates = a.events("datachannel").filter { $0["label"] as? String == "bulk" }.compactMap { $0["state"] as? String }
            #expect(bulkStates.suffix(2) == ["closing", "closed"], "the far side's close reaches closed here: \(bulkStates)")
            let lines = try String(contentsOfFile: h.path("offerer-data.jsonl"), encoding: .utf8).split(separator: "\n")
            // One line per message each way: what the offerer's stats count.
            let report = o.events("stats").last?["report"] as? [String: Any]
            let counted = (report?["stats"] as? [String: [String: Any]] ?? [:]).values.filter { $0["type"] as? String == "data-channel" }
                .reduce(0) { $0 + ($1["messagesSent"] as? Int ?? 0) + ($1["messagesReceived"] as? Int ?? 0) }
            #expect(lines.count == counted && counted >= 20_004, "one --data-out line per message each way: \(lines.count) lines, \(counted) messages")
            let first = try JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: Any]
            #expect(first?["direction"] != nil && first?["time"] is Double && first?["label"] != nil, "\(String(describing: first))")
        }
    }

    /// Media and data together: the answerer echoes (`--data-echo`); the offerer's `--at`
    /// messages come back; the offerer sends control commands on `control`
    /// (`ping`, `hold`, `unhold`, `keyframe`, `bitrate`, `tone`, a malformed one, an
    /// unknown one) and gets each answered there, the hold done by a re-offer from the
    /// answerer, the answerer's tone in the offerer's recording moving from 440 to 880 Hz;
    /// the call goes on.
    @Test func echoAndTheControlChannelAlongsideMedia() async throws {
        try await CallSlots.with(peers: 2) {
            let services = try await TestServices.shared()
            let h = CallHarness("data-control")
            defer { h.remove() }
            let common = try CallHarness.common(services, duration: 9)
            async let answerer = h.run("answerer", "answer", common + ["--data-echo", "--audio", "tone:440"])
            #expect(await h.waitForState("answerer", "ringing"))
            async let offerer = h.run("offerer", "offer", common + [
                "--data-channel", "chat", "--data-channel", "control",
                "--at", "1:send:chat:hello", "--at", "1.5:send:control:{\"action\":\"ping\",\"id\":7}",
                "--at", "2:send:control:{\"action\":\"hold\",\"id\":\"h\"}", "--at", "4:send:control:{\"action\":\"unhold\"}",
                "--at", "5:send:control:{\"action\":\"keyframe\",\"id\":3}", "--at", "5.5:send:control:not json",
                "--at", "5.2:send:control:{\"action\":\"tone\",\"hz\":880}",
                "--at", "6:send:control:{\"action\":\"bitrate\",\"kbps\":300}", "--at", "6.2:send:control:{\"action\":\"dance\"}"])
            let (a, o) = try await (answerer, offerer)
            CallChecks.exitedZero([a, o])
            let back = o.events("message").filter { $0["label"] as? String == "chat" }.compactMap { $0["text"] as? String }
            #expect(back == ["hello"], "the echo: \(back)")
            let replies = o.events("message").filter { $0["label"] as? String == "control" }.compactMap { $0["text"] as? String }
                .compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
            print("control replies: \(replies)")
            #expect(replies.contains { $0["action"] as? String == "pong" && $0["id"] as? Int == 7 })
            #expect(replies.contains { $0["result"] as? String == "ok" && $0["action"] as? String == "hold" && $0["id"] as? String == "h" })
            #expect(replies.contains { $0["result"] as? String == "ok" && $0["action"] as? String == "unhold" })
            #expect(replies.contains { $0["result"] as? String == "ok" && $0["action"] as? String == "keyframe" && $0["id"] as? Int == 3 })
            #expect(replies.contains { $0["result"] as? String == "error" && ($0["reason"] as? String)?.hasPrefix("not a JSON object") == true })
            #expect(replies.contains { $0["result"] as? String == "ok" && $0["action"] as? String == "bitrate" })
            #expect(replies.contains { $0["result"] as? String == "ok" && $0["action"] as? String == "tone" })
            #expect(replies.contains { $0["result"] as? String == "error" && ($0["reason"] as? String)?.hasPrefix("unknown action") == true })
            let keyframes = a.events("stats").last.flatMap { ($0["report"] as? [String: Any])?["stats"] as? [String: [String: Any]] }?
                .values.first { $0["type"] as? String == "outbound-rtp" && $0["kind"] as? String == "video" }?["keyFramesEncoded"] as? Int ?? 0
            #expect(keyframes >= 2, "the first key frame and the one the command asked for: \(keyframes)")
            let tones = try Self.toneFrequencies(h.path("offerer.ogg"))
            print("control: the answerer's tone at the offerer by second \(tones)")
            #expect(tones.count >= 7 && abs((tones.first ?? 0) - 440) < 12 && abs((tones.last ?? 0) - 880) < 12, "\(tones)")
            #expect(CallRenegotiationTests.states(a).contains("hold"), "the answerer held the call on the command: \(CallRenegotiationTests.states(a))")
            #expect(a.events("renegotiated").contains { $0["reason"] as? String == "hold" && $0["offerer"] as? String == "local" })
            #expect(try await CallChecks.decodedFrames(h.path("offerer.ivf")) > 30)
        }
    }

    /// `--min-messages` fails a call (exit 7) whose peer sent fewer messages.
    @Test func tooFewMessagesExitSeven() async throws {
        try await CallSlots.with(peers: 2) {
            let services = try await TestServices.shared()
            let h = CallHarness("data-min")
            defer { h.remove() }
            let common = try CallHarness.common(services, duration: 2) + ["--video", "none", "--audio", "none", "--min-frames", "0"]
            async let answerer = h.run("answerer", "answer", common + ["--data-channel", "chat", "--min-messages", "1"])
            #expect(await h.waitForState("answerer", "ringing"))
            async let offerer = h.run("offerer", "offer", common + ["--data-channel", "chat", "--at", "0.5:send:chat:x", "--min-messages", "1"])
            let (a, o) = try await (answerer, offerer)
            #expect(a.status == 0, "\(a.log)")
            #expect(o.status == 7, "\(o.log)")
            #expect((o.events("exit").last?["reason"] as? String)?.contains("fewer than --min-messages 1") == true, "\(o.log)")
        }
    }
}
