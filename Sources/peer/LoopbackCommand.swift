// LoopbackCommand: `peer loopback` — two peer connections in this process calling each other over 127.0.0.1.
import EventLoop
import Foundation
import PeerAgent
import PeerCall

/// `peer loopback [--duration S] [--timeout S] [--video pattern:WxH@FPS] [--bitrate KBPS] [--out-dir DIR] [--vanilla] [--json]`:
/// two peer connections in this process calling each other over 127.0.0.1.
/// Exit codes: 0 both sides received ≥ 95 % of the frames sent; 7 fewer; 5 no connection; 2 bad arguments.
func loopbackCommand(_ arguments: [String]) async {
    var options = LoopbackOptions()
    var json = false
    var p = OptionParser(command: "loopback", arguments)
    while let option = p.next() {
        switch option {
        case "--duration": options.durationSeconds = p.durationSeconds()
        case "--timeout": options.connectTimeoutSeconds = p.timeoutSeconds()
        case "--bitrate": options.videoBitrateKbps = p.bitrateKbps()
        case "--video": (options.width, options.height, options.frameRate) = p.pattern()
        case "--out-dir": options.outputDirectory = p.value()
        case "--vanilla": options.trickle = false
        case "--trickle": options.trickle = true
        case "--json": json = true
        case "--no-media": options.media = false
        case "--data-channel":
            do { options.dataChannels.append(try DataChannelSpec(parsing: p.value())) } catch { p.fail("\(error)") }
        case "--data-burst":
            do { options.dataBursts.append(try DataBurst(parsing: p.value())) } catch { p.fail("\(error)") }
        default: p.unknownOption()
        }
    }
    startLogging()
    let progress: @Sendable (String) -> Void = { line in
        if Log.enabled(.debug) { return Log.write(.info, "loopback", line) }  // timed among the log's lines
        if Log.enabled(.info) { FileHandle.standardError.write(Data("peer loopback: \(line)\n".utf8)) }
    }
    do {
        let (a, b) = try await Loopback.run(options, progress: progress)
        var ok = true
        for side in [a, b] {
            let other = side.name == "a" ? b : a
            let inbound = side.stats.inbound("video")
            let audio = side.stats.inbound("audio")
            let share = other.framesSent > 0 ? Double(side.distinctFramesReceived) / Double(other.framesSent) : 0
            if share < 0.95, options.media { ok = false }
            for (label, n) in side.data.sorted(by: { $0.key < $1.key }) {
                let line = #"{"event":"dataSummary","side":"\#(side.name)","label":"\#(label)","numbered":{"received":\#(n.received),"missing":\#(n.missing),"duplicates":\#(n.duplicates),"outOfOrder":\#(n.outOfOrder)}}"#
                if json { print(line) } else if Log.enabled(.info) { FileHandle.standardError.write(Data("peer loopback: side \(side.name) \(label): \(n.received) numbered messages, \(n.missing) missing, \(n.duplicates) repeated, \(n.outOfOrder) out of order\n".utf8)) }
            }
            if json {
                print(#"{"event":"stats","side":"\#(side.name)","framesSent":\#(other.framesSent),"framesReceived":\#(side.distinctFramesReceived),"video":"\#(side.videoPath)","audio":"\#(side.audioPath)","report":\#(side.stats.json)}"#)
            } else if Log.enabled(.info) {
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
