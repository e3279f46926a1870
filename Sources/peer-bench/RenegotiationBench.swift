// peer-bench renegotiation: hold/unhold and ICE restart between two peer connections in this process over 127.0.0.1 — re-offer → answer applied → first media in the new direction, and ICE restart → connected again (medians).
import Foundation
import Media
import PeerAgent
import SDP
import Synchronization

/// `peer-bench renegotiation [N]`: two ``PeerConnection``s in this process (offer and
/// answer handed across at once, host candidates on 127.0.0.1, 320x240@30 VP8 + Opus
/// both ways), N hold/unhold cycles (A re-offers `sendonly`, then `sendrecv`) and N ICE
/// restarts. Prints the medians (and 90th percentiles) of: re-offer made → its answer
/// applied (the JSEP work of both sides), answer applied → the first video frame in the
/// direction an unhold turns back on (B's video decoded at A: the sender's resume at its
/// source's next frame, a key frame, its decode), and `restartIce()` → ICE connected
/// again on A. With PEER_TEST_ROUTER_URL set (`scripts/services run`), also N re-offers
/// between two `peer` processes through the router: published → answer applied.
enum RenegotiationBench {
    /// What the two sides report, with the time each event arrived (monotonic ns).
    final class Events: Sendable {
        let iceConnected = Mutex<[UInt64]>([])
        func note(_ e: PeerConnectionEvent) {
            if case let .iceConnectionState(s) = e, s == .connected || s == .completed {
                iceConnected.withLock { $0.append(DispatchTime.now().uptimeNanoseconds) }
            }
        }
    }

    static func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }
    static func ms(_ from: UInt64, _ to: UInt64) -> Double { Double(to &- from) / 1e6 }

    /// One offer/answer from `offerer` to `answerer`.
    static func exchange(_ offerer: PeerConnection, _ answerer: PeerConnection) throws {
        let offer = try offerer.createOffer()
        try offerer.setLocalDescription(offer)
        try answerer.setRemoteDescription(offer)
        let answer = try answerer.createAnswer()
        try answerer.setLocalDescription(answer)
        try offerer.setRemoteDescription(answer)
    }

    /// Waits (polling every 0.2 ms plus the check's own time, up to `seconds`) until `condition` holds; its time or nil.
    static func until(_ seconds: Double, _ condition: () -> Bool) async -> UInt64? {
        let deadline = now() + UInt64(seconds * 1e9)
        while now() < deadline {
            if condition() { return now() }
            try? await Task.sleep(nanoseconds: 200_000)
        }
        return nil
    }

    /// Runs the cycles and prints the figures.
    /// - Throws: ``PeerConnectionError`` when a negotiation fails or the pair does not connect.
    static func run(count: Int) async throws {
        final class Wire: Sendable { let pcs = Mutex<(a: PeerConnection?, b: PeerConnection?)>((nil, nil)) }
        let wire = Wire(), eventsA = Events()
        var config = PeerConnectionConfiguration()
        config.localAddresses = ["127.0.0.1"]
        config.tcpCandidates = false
        let a = try PeerConnection(configuration: config) { e in
            if case let .localCandidate(c) = e { try? wire.pcs.withLock { $0.b }?.addIceCandidate(c) }
            eventsA.note(e)
        }
        let b = try PeerConnection(configuration: config) { e in
            if case let .localCandidate(c) = e { try? wire.pcs.withLock { $0.a }?.addIceCandidate(c) }
        }
        wire.pcs.withLock { $0 = (a, b) }
        defer { a.close(); b.close() }
        for (pc, tone) in [(a, 440.0), (b, 660.0)] {
            pc.addTransceiver(.audio, audio: try ToneSource(frequency: tone), receive: ReceiveOptions(decode: false))
            pc.addTransceiver(.video, video: try PatternSource(width: 320, height: 240, frameRate: 30), receive: ReceiveOptions(decode: true))
        }
        try exchange(a, b)
        guard await until(10, { a.connectionState == .connected && b.connectionState == .connected }) != nil,
              let videoA = a.allTransceivers.first(where: { $0.kind == .video }) else {
            throw PeerConnectionError.setup("the pair did not connect within 10 s")
        }
        // B's frames decoded at A (the pattern's markers): counted on A's sink thread as
        // each is decoded, whatever the negotiated direction.
        func framesAtA() -> Int { videoA.receivedFrameMarkers().count }
        _ = await until(5) { framesAtA() > 10 }

        var reofferMs: [Double] = [], resumeMs: [Double] = [], restartMs: [Double] = []
        for _ in 0..<count {
            for direction in [Direction.sendonly, .sendrecv] {
                for t in a.allTransceivers { t.direction = direction }
                let before = framesAtA()
                let t0 = now()
                try exchange(a, b)
                let t1 = now()
                reofferMs.append(ms(t0, t1))
                if direction == .sendrecv {
                    guard let t2 = await until(5, { framesAtA() > before }) else { throw PeerConnectionError.setup("no frame after an unhold within 5 s") }
                    resumeMs.append(ms(t1, t2))
                } else {
                    try? await Task.sleep(nanoseconds: 100_000_000)
                    let held = framesAtA()
                    try? await Task.sleep(nanoseconds: 200_000_000)  // the hold in force
                    guard framesAtA() == held else { throw PeerConnectionError.setup("B's video still reached A during a hold") }
                }
            }
        }
        for _ in 0..<count {
            let seen = eventsA.iceConnected.withLock { $0.count }
            let t0 = now()
            a.restartIce()
            try exchange(a, b)
            guard await until(10, { eventsA.iceConnected.withLock { $0.count } > seen }) != nil,
                  let t1 = eventsA.iceConnected.withLock({ $0.last }) else {
                throw PeerConnectionError.setup("ICE did not connect again within 10 s of a restart")
            }
            restartMs.append(ms(t0, t1))
            try? await Task.sleep(nanoseconds: 200_000_000)
        }
        func figures(_ v: [Double]) -> String {
            let sorted = v.sorted()
            let p90 = sorted[min(sorted.count - 1, Int((Double(sorted.count) * 0.9).rounded(.up)) - 1)]
            return String(format: "median %.2f ms (p90 %.2f, max %.2f)", CallBench.median(v), p90, sorted.last ?? 0)
        }
        print("renegotiation: \(count) hold/unhold cycles and \(count) ICE restarts, two peer connections in one process, "
            + "320x240@30 VP8 + Opus both ways over 127.0.0.1")
        print("  re-offer made → answer applied (both sides' JSEP work, \(reofferMs.count) re-offers): \(figures(reofferMs))")
        print("  unhold answer applied → first video frame in the resumed direction (\(resumeMs.count)): \(figures(resumeMs))")
        print("  restartIce() → re-offer → ICE connected again (\(restartMs.count)): \(figures(restartMs))")
        if let router = ProcessInfo.processInfo.environment["PEER_TEST_ROUTER_URL"] {
            let routed = try throughRouter(router, count: count)
            print("  through the router, two peer processes: re-offer published → answer applied (\(routed.count) re-offers, "
                + "the offerer's renegotiated events): \(figures(routed))")
        }
    }

    /// `count` hold/unhold re-offers (0.5 s apart, `--at`) from `peer offer` to `peer answer`
    /// through the router at `router`; the `ms` of each of the offerer's `renegotiated` events.
    /// - Throws: ``CallBench/Failure`` when a process fails or reports fewer renegotiations.
    static func throughRouter(_ router: String, count: Int) throws -> [Double] {
        let peer = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("peer").path
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("peer-bench-reneg-\(getpid())").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let seconds = 1.0 + Double(count) * 0.5 + 1.5
        let common = ["--router", router, "--local-address", "127.0.0.1", "--duration", String(seconds), "--timeout", "20",
                      "--video", "pattern:320x240@30", "--prefix", "bench.reneg.\(getpid())", "--json", "--no-decode"]
        var at: [String] = []
        for i in 0..<count { at += ["--at", "\(1.0 + Double(i) * 0.5):\(i % 2 == 0 ? "hold" : "unhold")"] }
        let answer = try CallBench.start(peer, ["answer"] + common + ["--video-out", "\(dir)/a.ivf", "--audio-out", "\(dir)/a.ogg"])
        Thread.sleep(forTimeInterval: 0.3)
        let offer = try CallBench.start(peer, ["offer"] + common + at + ["--video-out", "\(dir)/o.ivf", "--audio-out", "\(dir)/o.ogg"])
        let out = CallBench.finish(offer)
        _ = CallBench.finish(answer)
        let ms = out.split(separator: "\n").compactMap { line -> Double? in
            guard let o = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                  o["event"] as? String == "renegotiated" else { return nil }
            return o["ms"] as? Double
        }
        guard offer.0.terminationStatus == 0, answer.0.terminationStatus == 0, ms.count == count else {
            throw CallBench.Failure(description: "renegotiation through the router: offer exit \(offer.0.terminationStatus), "
                + "answer exit \(answer.0.terminationStatus), \(ms.count) of \(count) renegotiations")
        }
        return ms
    }
}
