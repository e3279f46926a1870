// peer-bench calls: N calls per ICE mode between two `peer` processes through the real router — time to connect.
import Foundation

/// `peer-bench calls [N]`: N calls per ICE mode (legacy vanilla, legacy trickle) between
/// two `peer` processes (the release build next to this one) through the real router and
/// STUN server (`scripts/services run` gives PEER_TEST_ROUTER_URL and PEER_TEST_STUN_URL),
/// and the median of each set-up step, read from the offerer's `--json` milestones:
/// process start → router joined, offer published → answer received, answer → ICE
/// connected, → DTLS connected, → first remote frame.
enum CallBench {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    static func run(count: Int) throws {
        let env = ProcessInfo.processInfo.environment
        guard let router = env["PEER_TEST_ROUTER_URL"], let stun = env["PEER_TEST_STUN_URL"] else {
            throw Failure(description: "PEER_TEST_ROUTER_URL / PEER_TEST_STUN_URL not set (run through scripts/services run)")
        }
        let peer = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("peer").path
        guard FileManager.default.isExecutableFile(atPath: peer) else {
            throw Failure(description: "\(peer) not built (swift build -c release --product peer)")
        }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("peer-bench-calls-\(getpid())").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        print("calls: \(count) calls per mode, two peer processes, router \(router), STUN \(stun), 320x240@30, medians in ms")
        print("  mode     start→joined  offer→answer  answer→ICE  ICE→DTLS  DTLS→first frame  start→first frame")
        for mode in ["vanilla", "trickle"] {
            var steps: [[Double]] = Array(repeating: [], count: 6)
            for i in 0..<count {
                let prefix = "bench.\(getpid()).\(mode).\(i)"
                let common = ["--router", router, "--stun", stun, "--local-address", "127.0.0.1", "--duration", "1",
                              "--timeout", "20", "--video", "pattern:320x240@30", "--prefix", prefix, "--json", "--no-decode", "--\(mode)"]
                let answer = try start(peer, ["answer"] + common + ["--video-out", "\(dir)/a.ivf", "--audio-out", "\(dir)/a.ogg"])
                Thread.sleep(forTimeInterval: 0.3)  // the answerer is subscribed: offer → answer is not a republish wait
                let offer = try start(peer, ["offer"] + common + ["--video-out", "\(dir)/o.ivf", "--audio-out", "\(dir)/o.ogg"])
                let offerOut = finish(offer)
                _ = finish(answer)
                guard offer.0.terminationStatus == 0, answer.0.terminationStatus == 0 else {
                    throw Failure(description: "\(mode) call \(i): offer exit \(offer.0.terminationStatus), answer exit \(answer.0.terminationStatus)")
                }
                let t = milestones(offerOut)
                guard let joined = t["joined"], let published = t["offerPublished"], let answered = t["answerReceived"],
                      let ice = t["iceConnected"], let dtls = t["dtlsConnected"], let frame = t["firstRemoteFrame"] else {
                    throw Failure(description: "\(mode) call \(i): milestones missing in \(t.keys.sorted())")
                }
                for (k, v) in [joined, answered - published, ice - answered, dtls - ice, frame - dtls, frame].enumerated() {
                    steps[k].append(v)
                }
            }
            let m = steps.map(median)
            print("  " + mode.padding(toLength: 8, withPad: " ", startingAt: 0) + String(format: " %12.0f  %12.0f  %10.0f  %8.0f  %16.0f  %17.0f", m[0], m[1], m[2], m[3], m[4], m[5]))
        }
    }

    static func start(_ path: String, _ arguments: [String]) throws -> (Process, Pipe) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: path)
        p.arguments = arguments
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        try p.run()
        return (p, out)
    }

    static func finish(_ started: (Process, Pipe)) -> String {
        let data = started.1.fileHandleForReading.readDataToEndOfFile()
        started.0.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }

    /// name → t (ms since process start) of the first milestone of each name.
    static func milestones(_ json: String) -> [String: Double] {
        var result: [String: Double] = [:]
        for line in json.split(separator: "\n") {
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                  object["event"] as? String == "milestone", let name = object["name"] as? String,
                  let t = object["t"] as? Double, result[name] == nil else { continue }
            result[name] = t
        }
        return result
    }

    static func median(_ values: [Double]) -> Double {
        let s = values.sorted()
        guard !s.isEmpty else { return .nan }
        return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
    }
}
