// peer-bench data: data channel throughput (one reliable ordered channel, one way) and the round trip of a 100-byte echo, two connections in this process over 127.0.0.1 — next to aiortc doing the same in the same run.
import EventLoop
import Foundation
import PeerAgent
import Synchronization

/// `peer-bench data [MESSAGES]`: two peer connections in this process (host candidates on
/// 127.0.0.1, no media). A sends MESSAGES messages of 16 KiB on a reliable ordered channel
/// (at most 1 MiB buffered, refilled on bufferedamountlow from the loop thread) and B
/// counts them: MB/s from the first to the last arrival, the median of ``rounds`` rounds,
/// with the loop thread's CPU per MB.
/// Then 1,000 pings of 100 bytes, one at a time, on a second channel that B echoes from its
/// event handler: the median and 99th percentile round trip. The same with aiortc
/// (`Tests/PeerAgentTests/Support/aiortc_data_bench.py`, its venv from bootstrap) in the
/// same run over the same messages, and the ratio: both pairs have one thread carrying
/// both ends (peer's event loop, aiortc's asyncio loop). With PEER_TEST_ROUTER_URL (run
/// through `scripts/services run`), also two `peer` processes, each end on its own loop.
enum DataBench {
    static let size = 16_384, pings = 1_000
    /// Bulk transfers measured (the median is printed: one round swings ±20 % here).
    static let rounds = 3
    /// Most bytes the sender keeps buffered (as aiortc's bench): refilled when half is gone.
    static let buffered = 1 << 20

    /// The bulk sender, on the loop thread: sends until ``buffered`` bytes wait, again on
    /// each bufferedamountlow, until its messages are all sent.
    final class Pump: Sendable {
        private let remaining = Mutex(0)
        private let message = DataChannelMessage.binary([UInt8](repeating: 0x5A, count: DataBench.size))

        func start(_ channel: DataChannel, messages: Int) {
            remaining.withLock { $0 = messages }
            channel.bufferedAmountLowThreshold = DataBench.buffered / 2
            EventLoop.shared.async { self.fill(channel) }
        }

        func fill(_ channel: DataChannel) {
            while channel.bufferedAmount < DataBench.buffered, take() {
                guard (try? channel.send(message)) != nil else { return }
            }
        }

        /// One more message to send, if any is left.
        private func take() -> Bool {
            remaining.withLock { n in
                guard n > 0 else { return false }
                n -= 1
                return true
            }
        }
    }

    /// What B saw of the bulk channel, and the pings A got back (loop thread writes).
    final class Counts: Sendable {
        let bulk = Mutex<(bytes: Int, first: Double?, last: Double?)>((0, nil, nil))
        let echoes = Mutex<[Double]>([])
        let signal = ChangeSignal()
    }

    static func now() -> Double { ProcessInfo.processInfo.systemUptime }

    /// Runs both measurements and prints them with aiortc's.
    /// - Throws: ``PeerConnectionError`` when the pair does not connect or open its channels.
    static func run(messages: Int) async throws {
        let counts = Counts()
        final class Pair: Sendable { let pcs = Mutex<(a: PeerConnection?, b: PeerConnection?)>((nil, nil)) }
        let pair = Pair()
        var c = PeerConnectionConfiguration()
        c.localAddresses = ["127.0.0.1"]
        c.tcpCandidates = false
        let pump = Pump()
        let a = try PeerConnection(configuration: c) { event in
            if case let .localCandidate(cand) = event { try? pair.pcs.withLock { $0.b }?.addIceCandidate(cand) }
            if case let .dataChannel(.bufferedAmountLow(ch)) = event, ch.label == "bulk" { pump.fill(ch) }
            if case let .dataChannel(.message(ch, _)) = event, ch.label == "echo" { counts.echoes.withLock { $0.append(now()) } }
            counts.signal.signal()
        }
        let b = try PeerConnection(configuration: c) { event in
            if case let .localCandidate(cand) = event { try? pair.pcs.withLock { $0.a }?.addIceCandidate(cand) }
            if case let .dataChannel(.message(ch, message)) = event {
                if ch.label == "echo" { try? ch.send(message) } else {
                    let t = now()
                    counts.bulk.withLock { $0 = ($0.bytes + message.byteCount, $0.first ?? t, t) }
                }
            }
            counts.signal.signal()
        }
        pair.pcs.withLock { $0 = (a, b) }
        defer { a.close(); b.close() }
        let bulk = try a.createDataChannel("bulk"), echo = try a.createDataChannel("echo")
        let offer = try a.createOffer()
        try a.setLocalDescription(offer)
        try b.setRemoteDescription(offer)
        let answer = try b.createAnswer()
        try b.setLocalDescription(answer)
        try a.setRemoteDescription(answer)
        let opened = await counts.signal.wait(within: 10) { bulk.readyState == .open && echo.readyState == .open && b.sctp.channels.count == 2 }
        guard opened else {
            throw PeerConnectionError.setup("data bench: the channels did not open (a \(a.connectionState.rawValue), b \(b.connectionState.rawValue))")
        }
        // Throughput, one way: the sender runs on the loop thread that carries both ends
        // (as aiortc's sender runs on its one asyncio loop), refilled on bufferedamountlow.
        var rounds: [(mbps: Double, bytes: Int, seconds: Double, cpuMsPerMB: Double, cpu: Double, datagrams: DatagramCounts)] = []
        for _ in 0..<Self.rounds {
            counts.bulk.withLock { $0 = (0, nil, nil) }
            let cpuBefore = EventLoop.shared.sync { threadCPUSeconds() }
            let pairBefore = datagrams(a)
            pump.start(bulk, messages: messages)
            let total = messages * size
            _ = await counts.signal.wait(within: 120) { counts.bulk.withLock { $0.bytes } >= total }
            let (bytes, first, last) = counts.bulk.withLock { $0 }
            let cpu = EventLoop.shared.sync { threadCPUSeconds() } - cpuBefore
            let seconds = max((last ?? 0) - (first ?? 0), 1e-6)
            rounds.append((Double(bytes) / seconds / 1e6, bytes, seconds, cpu * 1000 / (Double(bytes) / 1e6), cpu, datagrams(a) - pairBefore))
        }
        let mbps = rounds.map(\.mbps).sorted()[rounds.count / 2]
        let round = rounds.first { $0.mbps == mbps } ?? rounds[0]
        // Round trips, one ping at a time.
        var rtts: [Double] = []
        let ping = DataChannelMessage.binary([UInt8](repeating: 1, count: 100))
        for i in 0..<pings {
            let start = now()
            try echo.send(ping)
            let back = await counts.signal.wait(within: 5) { counts.echoes.withLock { $0.count } > i }
            guard back else { break }
            rtts.append((counts.echoes.withLock { $0[i] } - start) * 1000)
        }
        rtts.sort()
        let median = rtts.isEmpty ? .nan : rtts[rtts.count / 2], p99 = rtts.isEmpty ? .nan : rtts[min(rtts.count - 1, rtts.count * 99 / 100)]
        print(String(format: "data: peer: %d × 16 KiB on one reliable ordered channel: %.1f MB/s, the median of %d rounds (%@; "
                     + "this one %d bytes in %.3f s, %.1f ms of loop-thread CPU per MB); 100-byte echo round trip median %.3f ms, p99 %.3f ms (%d pings)",
                     messages, mbps, rounds.count, rounds.map { String(format: "%.1f", $0.mbps) }.joined(separator: ", "), round.bytes, round.seconds,
                     round.cpuMsPerMB, median, p99, rtts.count))
        // The kernel's share: the median round's datagrams through 127.0.0.1 and nothing else.
        let floorCPU = try? UDPFloor.measure(round.datagrams)
        let gsoCPU = try? UDPFloor.measure(round.datagrams, segments: 8)
        // libusrsctp's share: the same messages between two associations in memory.
        let sctpCPU = try? await SCTPFloor(messages: messages, size: size).measure()
        // OpenSSL's: the same records through two DTLS transports in memory.
        let dtlsCPU = try? await DTLSFloor.measure(round.datagrams)
        // The same messages for aiortc: a shorter run (it had a tenth) ends in slow start
        // and flattered the ratio (200 messages: 2–7 MB/s; 2,000: 9.6 MB/s).
        let aiortc = try await aiortcFigures(messages: messages)
        if let aMBps = aiortc["throughputMBps"] as? Double, let aRTT = aiortc["rttMedianMs"] as? Double {
            print(String(format: "data: aiortc %@: %.2f MB/s, echo median %.3f ms — peer/aiortc throughput %.1f× (target ≥ 10×), "
                         + "peer echo median %.3f ms (target < 1 ms)", aiortc["aiortc"] as? String ?? "?", aMBps, aRTT, mbps / aMBps, median))
        } else {
            print("data: aiortc did not report: \(aiortc)")
        }
        if let floorCPU, floorCPU > 0 {
            let d = round.datagrams, floorMBps = Double(round.bytes) / floorCPU / 1e6
            let versus = (aiortc["throughputMBps"] as? Double).map { String(format: ", %.1f× aiortc", floorMBps / $0) } ?? ""
            print(String(format: "data: the UDP floor: the same datagrams (%d × %d B one way, %d × %d B back) sent and received over 127.0.0.1 "
                         + "by one thread doing nothing else take %.3f s of CPU, %.0f %% of the %.3f s peer's loop thread used; at that "
                         + "floor alone the transfer would run at %.0f MB/s%@",
                         d.sent, d.sent > 0 ? d.sentBytes / d.sent : 0, d.received, d.received > 0 ? d.receivedBytes / d.received : 0,
                         floorCPU, floorCPU / max(round.cpu, 1e-9) * 100, round.cpu, floorMBps, versus))
            if let sctpCPU, let dtlsCPU, sctpCPU > 0, dtlsCPU > 0 {
                let all = floorCPU + sctpCPU + dtlsCPU, allMBps = Double(round.bytes) / all / 1e6
                let versus = (aiortc["throughputMBps"] as? Double).map { String(format: ", %.1f× aiortc", allMBps / $0) } ?? ""
                print(String(format: "data: the SCTP floor (libusrsctp alone: the same messages between two associations in memory) %.3f s "
                             + "of CPU, %.0f %% of peer's loop thread; the DTLS floor (OpenSSL alone: the same records between two "
                             + "transports in memory) %.3f s, %.0f %%; with the UDP floor %.3f s, %.0f %%: at most %.0f MB/s%@ "
                             + "if ICE, the event loop and peer's own code took no time",
                             sctpCPU, sctpCPU / max(round.cpu, 1e-9) * 100, dtlsCPU, dtlsCPU / max(round.cpu, 1e-9) * 100,
                             all, all / max(round.cpu, 1e-9) * 100, allMBps, versus))
                if let gsoCPU, gsoCPU > 0 {
                    let gsoAll = gsoCPU + sctpCPU + dtlsCPU, gsoMBps = Double(round.bytes) / gsoAll / 1e6
                    let versus = (aiortc["throughputMBps"] as? Double).map { String(format: ", %.1f× aiortc", gsoMBps / $0) } ?? ""
                    print(String(format: "data: with the data datagrams sent 8 at a time by UDP GSO (libnice sends one per call) the UDP "
                                 + "floor is %.3f s, and the three floors %.3f s: at most %.0f MB/s%@", gsoCPU, gsoAll, gsoMBps, versus))
                }
            }
        }
        if let router = ProcessInfo.processInfo.environment["PEER_TEST_ROUTER_URL"] {
            let two = try twoProcesses(messages: messages, router: router)
            let peerMBps = Double(two.received * size) / max(two.seconds, 1e-6) / 1e6
            print(String(format: "data: two peer processes through the router (each end its own event loop): %d × 16 KiB in %.3f s, %.1f MB/s", two.received, two.seconds, peerMBps))
            if let aio = try? aiortcTwoProcesses(messages: messages, router: router) {
                let aioMBps = Double(aio.received * size) / max(aio.seconds, 1e-6) / 1e6
                print(String(format: "data: two aiortc processes through the router (aiortc_wamp_peer.py): %d × 16 KiB in %.3f s, %.1f MB/s — peer/aiortc %.1f×",
                             aio.received, aio.seconds, aioMBps, peerMBps / max(aioMBps, 1e-6)))
            } else {
                print("data: two aiortc processes: no figure (aiortc_wamp_peer.py failed)")
            }
        }
    }

    /// The same burst between two aiortc processes (`aiortc_wamp_peer.py --data-burst`):
    /// what the answerer received of it and from its first to its last arrival, s.
    /// - Throws: ``CallBench/Failure`` when the answerer's result is missing.
    static func aiortcTwoProcesses(messages: Int, router: String) throws -> (received: Int, seconds: Double) {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let script = root.appendingPathComponent("Tests/PeerAgentTests/Support/aiortc_wamp_peer.py").path
        let tools = ProcessInfo.processInfo.environment["PEER_TOOLS"] ?? (NSHomeDirectory() + "/.cache/peer/venv")
        let python = tools + "-peers/bin/python"
        let common = [script, "--router", router, "--prefix", "bench.aiodata.\(getpid())", "--no-media", "--timeout", "20"]
        let answer = try CallBench.start(python, common + ["--role", "answer", "--duration", "120"])
        Thread.sleep(forTimeInterval: 1.5)  // Python and autobahn start
        let offer = try CallBench.start(python, common + ["--role", "offer", "--duration", "\(5 + messages / 400)", "--data-channel", "bulk",
                                                          "--data-burst", "bulk:\(messages):\(size)"])
        _ = CallBench.finish(offer)
        let out = CallBench.finish(answer)
        for line in out.split(separator: "\n") {
            guard let e = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], e["event"] as? String == "result",
                  let peers = e["peers"] as? [String: Any], let offerer = peers["offerer"] as? [String: Any],
                  let data = offerer["data"] as? [String: Any], let bulk = data["bulk"] as? [String: Any],
                  let n = bulk["numbered"] as? [String: Any], let received = n["received"] as? Int, let seconds = n["seconds"] as? Double else { continue }
            return (received, seconds)
        }
        throw CallBench.Failure(description: "data: two aiortc processes: no result from the answerer")
    }

    /// `peer offer --data-burst bulk:MESSAGES:16384` to `peer answer` (data only, the
    /// release build next to this one): what the answerer received of it and from its
    /// first to its last arrival, s (its `dataSummary`).
    /// - Throws: ``CallBench/Failure`` when either exits non-zero or the summary is missing.
    static func twoProcesses(messages: Int, router: String) throws -> (received: Int, seconds: Double) {
        let peer = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("peer").path
        let common = ["--router", router, "--prefix", "bench.data.\(getpid())", "--video", "none", "--audio", "none", "--local-address", "127.0.0.1",
                      "--json", "--min-frames", "0", "--timeout", "10"]
        let answer = try CallBench.start(peer, ["answer"] + common + ["--duration", "120"])
        Thread.sleep(forTimeInterval: 0.3)
        let offer = try CallBench.start(peer, ["offer"] + common + ["--duration", "\(5 + messages / 1_000)", "--data-channel", "bulk",
                                                                     "--data-burst", "bulk:\(messages):\(size)"])
        _ = CallBench.finish(offer)
        let out = CallBench.finish(answer)
        guard offer.0.terminationStatus == 0, answer.0.terminationStatus == 0 else {
            throw CallBench.Failure(description: "data: two processes: offer exit \(offer.0.terminationStatus), answer exit \(answer.0.terminationStatus)")
        }
        for line in out.split(separator: "\n") {
            guard let e = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], e["event"] as? String == "dataSummary",
                  e["label"] as? String == "bulk", let n = e["numbered"] as? [String: Any],
                  let received = n["received"] as? Int, let seconds = n["seconds"] as? Double else { continue }
            return (received, seconds)
        }
        throw CallBench.Failure(description: "data: two processes: no dataSummary for bulk from the answerer")
    }

    /// The datagrams `pc`'s selected candidate pair has carried so far.
    static func datagrams(_ pc: PeerConnection) -> DatagramCounts {
        guard let pair = pc.getStats().candidatePairs.first else { return DatagramCounts() }
        return DatagramCounts(sent: pair.packetsSent, sentBytes: pair.bytesSent, received: pair.packetsReceived, receivedBytes: pair.bytesReceived)
    }

    /// aiortc_data_bench.py's JSON line.
    static func aiortcFigures(messages: Int) async throws -> [String: Any] {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let script = root.appendingPathComponent("Tests/PeerAgentTests/Support/aiortc_data_bench.py").path
        let tools = ProcessInfo.processInfo.environment["PEER_TOOLS"] ?? (NSHomeDirectory() + "/.cache/peer/venv")
        let python = tools + "-peers/bin/python"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = [script, "--messages", String(messages), "--size", String(size), "--pings", String(pings)]
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let line = String(decoding: data, as: UTF8.self).split(separator: "\n").last.map(String.init) ?? ""
        return (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]) ?? ["output": line, "status": process.terminationStatus]
    }
}

/// CPU seconds (user + system) the calling thread has used (`getrusage(RUSAGE_THREAD)`).
func threadCPUSeconds() -> Double {
    var usage = rusage()
    getrusage(__rusage_who_t(1), &usage)  // RUSAGE_THREAD (not imported by name)
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
}
