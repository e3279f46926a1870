import Foundation
import PeerAgent
import PeerCall

/// `peer loopback [--duration S] [--timeout S] [--video pattern:WxH@FPS] [--bitrate KBPS] [--out-dir DIR] [--vanilla] [--json]`:
/// two peer connections in this process calling each other over 127.0.0.1.
/// Exit codes: 0 both sides received ≥ 95 % of the frames sent; 7 fewer; 5 no connection; 2 bad arguments.
func loopbackCommand(_ arguments: [String]) async {
    var options = LoopbackOptions()
    var json = false
    var i = 0
    func value(_ name: String) -> String {
        i += 1
        guard i < arguments.count else { fail("loopback: \(name) needs a value (try peer --help)") }
        return arguments[i]
    }
    while i < arguments.count {
        let argument = arguments[i]
        switch argument {
        case "--duration":
            let text = value(argument)
            guard let s = Double(text), s > 0, s <= 86_400 else { fail("loopback: --duration \"\(text)\" is not a number of seconds > 0") }
            options.durationSeconds = s
        case "--timeout":
            let text = value(argument)
            guard let s = Double(text), s > 0, s <= 3_600 else { fail("loopback: --timeout \"\(text)\" is not a number of seconds in (0, 3600]") }
            options.connectTimeoutSeconds = s
        case "--bitrate":
            let text = value(argument)
            guard let k = Int(text), (10...50_000).contains(k) else { fail("loopback: --bitrate \"\(text)\" is not kbit/s in 10…50000") }
            options.videoBitrateKbps = k
        case "--video":
            let text = value(argument)
            guard let spec = PatternSpec(text) else { fail("loopback: --video \"\(text)\": expected pattern or pattern:WxH@FPS") }
            (options.width, options.height, options.frameRate) = (spec.width, spec.height, spec.frameRate)
        case "--out-dir":
            options.outputDirectory = value(argument)
        case "--vanilla": options.trickle = false
        case "--trickle": options.trickle = true
        case "--json": json = true
        default: fail("loopback: unknown option \"\(argument)\" (try peer --help)")
        }
        i += 1
    }
    let progress: @Sendable (String) -> Void = { line in FileHandle.standardError.write(Data("peer loopback: \(line)\n".utf8)) }
    do {
        let (a, b) = try await Loopback.run(options, progress: progress)
        var ok = true
        for side in [a, b] {
            let other = side.name == "a" ? b : a
            let inbound = side.stats.inbound("video")
            let audio = side.stats.inbound("audio")
            let share = other.framesSent > 0 ? Double(side.distinctFramesReceived) / Double(other.framesSent) : 0
            if share < 0.95 { ok = false }
            if json {
                print(#"{"event":"stats","side":"\#(side.name)","framesSent":\#(other.framesSent),"framesReceived":\#(side.distinctFramesReceived),"video":"\#(side.videoPath)","audio":"\#(side.audioPath)","report":\#(side.stats.json)}"#)
            } else {
                FileHandle.standardError.write(Data("""
                    peer loopback: side \(side.name) received \(side.distinctFramesReceived)/\(other.framesSent) frames \
                    (\(String(format: "%.1f", share * 100)) %), framesDecoded \(inbound?.framesDecoded ?? 0), \
                    keyFramesDecoded \(inbound?.keyFramesDecoded ?? 0), \(inbound?.frameWidth ?? 0)x\(inbound?.frameHeight ?? 0), \
                    packetsLost \(inbound?.packetsLost ?? 0), nackCount \(inbound?.nackCount ?? 0), pliCount \(inbound?.pliCount ?? 0); \
                    audio packets \(audio?.packetsReceived ?? 0); first frame at \(side.stats.timings.firstRemoteFrameMs.map { String(format: "%.0f", $0) } ?? "-") ms; \
                    files \(side.videoPath) \(side.audioPath)

                    """.utf8))
            }
        }
        exit(ok ? 0 : 7)
    } catch {
        FileHandle.standardError.write(Data("peer loopback: \(error)\n".utf8))
        exit(5)
    }
}

/// `pattern` or `pattern:WxH@FPS` (e.g. pattern:640x480@30).
struct PatternSpec {
    var width = 640, height = 480, frameRate = 30
    init?(_ text: String) {
        guard text.hasPrefix("pattern") else { return nil }
        let rest = text.dropFirst("pattern".count)
        if rest.isEmpty { return }
        guard rest.hasPrefix(":") else { return nil }
        let parts = rest.dropFirst().split(separator: "@")
        let size = parts.first?.split(separator: "x") ?? []
        guard size.count == 2, let w = Int(size[0]), let h = Int(size[1]), (16...4096).contains(w), (16...4096).contains(h) else { return nil }
        width = w
        height = h
        if parts.count == 2 {
            guard let f = Int(parts[1]), (1...120).contains(f) else { return nil }
            frameRate = f
        } else if parts.count > 2 { return nil }
    }
}
