// Bench: `peer-bench` — its subcommands and the helpers they share for printing figures.
import Foundation
import WampClient

/// `peer-bench`: benchmarks that print figures (run by `make bench`, which starts the
/// real router first and passes its URL in PEER_TEST_ROUTER_URL).
///
///   peer-bench wamp [ROUND_TRIPS]   publish→event round trips per second through the
///                                   router, 1 KB payloads, one publication in flight
///   peer-bench srtp [PACKETS]       RTP → SRTP protect → unprotect → parse packets per
///                                   second, next to libsrtp's own protect rate
///   peer-bench media [FRAMES]       CPU s per media s for pattern → VP8 → RTP → reassemble →
///                                   decode at 640x480@30, next to vpxenc --rt --cpu-used=8 + vpxdec
///   peer-bench calls [N]            median set-up times over N calls between two peer
///                                   processes (legacy vanilla and trickle) via the router
///   peer-bench loopback [SECONDS]   peer loopback at 640x480@30 1 Mbit/s: time to ICE/DTLS
///                                   connected and first remote frame; CPU s per media s
///   peer-bench loop [SECONDS]       how late the event-loop thread runs a 1 ms timer, idle
///                                   and during a 1280x720@30 2 Mbit/s loopback call
///   peer-bench renegotiation [N]    medians over N hold/unhold cycles and N ICE restarts
///                                   between two connections in this process
///   peer-bench data [MESSAGES]      data channel MB/s (MESSAGES × 16 KiB, one way) and the
///                                   100-byte echo round trip, next to aiortc's
///   peer-bench hub [N] [SECONDS]    one shared pattern source (640x480@30, 1 Mbit/s) to N
///                                   subscribers on two loops: CPU per subscriber beside the one
///                                   encode and N passthrough calls, with the ratio
///   peer-bench compare [CALLS] [S]  peer pairs and aiortc pairs alternating: set-up, CPU per
///                                   media second and peak RSS per process, the codec floor
///   peer-bench load [--seconds S] [--sizes N,…] [--max N] [--ramp-calls N] [--skip compare,relay,ramp]
///                                   the largest N two peer load processes carry (CPU per call,
///                                   memory per connection, threads), beside single-call peer
///                                   pairs and aiortc pairs; relayed through coturn; the ramp
@main
struct Bench {
    static func main() async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        let given = arguments.dropFirst().first
        switch arguments.first {
        case "wamp":
            await wampRoundTrips(count: whole(given, "ROUND_TRIPS", default: 2_000, in: 1...Int.max))
        case "srtp":
            let count = whole(given, "PACKETS", default: 100_000, in: 1...Int.max)
            await orFail { try SRTPBench.run(count: count) }
        case "media":
            let count = whole(given, "FRAMES", default: 300, in: 30...Int.max)
            await orFail { try MediaBench.run(frames: count) }
        case "calls":
            let count = whole(given, "N", default: 10, in: 1...100)
            await orFail { try CallBench.run(count: count) }
        case "loopback":
            let s = seconds(given)
            await orFail { try await LoopbackBench.run(seconds: s) }
        case "loop":
            let s = seconds(given)
            await orFail { try await LoopBench.run(seconds: s) }
        case "data":
            let count = whole(given, "MESSAGES", default: 2_000, in: 10...1_000_000)
            await orFail { try await DataBench.run(messages: count) }
        case "compare":
            let count = whole(given, "CALLS", default: 5, in: 1...100)
            let s = whole(arguments.dropFirst(2).first, "SECONDS", default: 20, in: 2...600)
            await orFail { try CompareBench.run(calls: count, seconds: s) }
        case "hub":
            let count = whole(given, "N", default: 50, in: 1...2_000)
            let s = seconds(arguments.dropFirst(2).first)
            await orFail { try await HubBench.run(subscribers: count, seconds: s) }
        case "load":
            let options = LoadBench.options(Array(arguments.dropFirst()))
            await orFail { try LoadBench.run(options) }
        case "renegotiation":
            let count = whole(given, "N", default: 20, in: 1...1_000)
            await orFail { try await RenegotiationBench.run(count: count) }
        default:
            FileHandle.standardError.write(Data("usage: peer-bench wamp [ROUND_TRIPS] | srtp [PACKETS] | media [FRAMES] | loopback [SECONDS] | loop [SECONDS] | calls [N] | renegotiation [N] | data [MESSAGES] | hub [N] [SECONDS] | compare [CALLS] [SECONDS] | load [--seconds S] [--sizes N,…]\n".utf8))
            exit(2)
        }
    }

    /// The whole-number argument `text` named `name` (its default when absent), or exit 2
    /// naming the range when it is not a whole number in `range`.
    static func whole(_ text: String?, _ name: String, default value: Int, in range: ClosedRange<Int>) -> Int {
        let n = text.flatMap { Int($0) } ?? (text == nil ? value : range.lowerBound - 1)
        guard range.contains(n) else {
            let bounds = range.upperBound == Int.max ? "≥ \(range.lowerBound)" : "in \(range.lowerBound)…\(range.upperBound)"
            FileHandle.standardError.write(Data("peer-bench: \(name) must be a whole number \(bounds)\n".utf8))
            exit(2)
        }
        return n
    }

    /// The SECONDS argument (default 10), or exit 2 unless it is a number in 1…3600.
    static func seconds(_ text: String?) -> Double {
        let seconds = text.map { Double($0) ?? 0 } ?? 10
        guard seconds >= 1, seconds <= 3600 else {
            FileHandle.standardError.write(Data("peer-bench: SECONDS must be a number in 1…3600\n".utf8))
            exit(2)
        }
        return seconds
    }

    /// Runs a benchmark; on an error prints it and exits 1.
    static func orFail(_ body: @Sendable () async throws -> Void) async {
        do { try await body() } catch {
            FileHandle.standardError.write(Data("peer-bench: \(error)\n".utf8))
            exit(1)
        }
    }

    static func wampRoundTrips(count: Int) async {
        guard let url = ProcessInfo.processInfo.environment["PEER_TEST_ROUTER_URL"] else {
            FileHandle.standardError.write(Data("peer-bench: PEER_TEST_ROUTER_URL not set (run through scripts/services run)\n".utf8))
            exit(2)
        }
        do {
            let subscriber = try await WampSession.join(WampConfiguration(url: url))
            let publisher = try await WampSession.join(WampConfiguration(url: url))
            let topic = "com.peer.bench.roundtrip"
            let subscription = try await subscriber.subscribe(topic)
            let payload = JSONValue.string(String(repeating: "x", count: 1024))
            var iterator = subscription.makeAsyncIterator()
            var latencies: [Double] = []
            latencies.reserveCapacity(count)
            // Warm-up, then measure one publication in flight at a time.
            for _ in 0..<50 {
                _ = try await publisher.publish(topic, args: [payload])
                _ = await iterator.next()
            }
            let start = DispatchTime.now().uptimeNanoseconds
            for i in 0..<count {
                let t0 = DispatchTime.now().uptimeNanoseconds
                _ = try await publisher.publish(topic, args: [payload, .int(Int64(i))])
                guard let event = await iterator.next(), event.args.last?.intValue == Int64(i) else {
                    FileHandle.standardError.write(Data("peer-bench: event \(i) lost or out of order\n".utf8))
                    exit(1)
                }
                latencies.append(Double(DispatchTime.now().uptimeNanoseconds - t0) / 1e6)
            }
            let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
            latencies.sort()
            let p50 = latencies[latencies.count / 2], p99 = latencies[min(latencies.count - 1, latencies.count * 99 / 100)]
            print(String(format: "wamp publish→event round trips, 1 KB payload: %d in %.2f s = %.0f per second (p50 %.2f ms, p99 %.2f ms)",
                         count, seconds, Double(count) / seconds, p50, p99))
            await publisher.leave()
            await subscriber.leave()
        } catch {
            FileHandle.standardError.write(Data("peer-bench: \(error)\n".utf8))
            exit(1)
        }
    }
}
