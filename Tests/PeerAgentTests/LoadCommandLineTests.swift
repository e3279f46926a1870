// `peer load`'s refusals through the real binary (bad input, a call count the descriptor
// limit cannot hold: exit 2 naming the value and the limit), and the pieces of the plan,
// its limits and its percentiles on their own.
import Foundation
import Testing
import TestSupport
@testable import PeerCall

@Suite struct LoadCommandLineTests {
    /// A router URL that parses (nothing connects: every refusal comes before the router).
    static let router = "ws://127.0.0.1:9/ws"

    /// `peer load ARGS` (through a shell running `prefix` first, e.g. a ulimit), to its exit.
    static func load(_ args: [String], prefix: String = "") async throws -> CallChecks.Output {
        let base = TestServices.temporaryDirectory("load-cli") + "/run"
        defer { try? FileManager.default.removeItem(atPath: URL(fileURLWithPath: base).deletingLastPathComponent().path) }
        let script = prefix + #"exec "$@" > "$0.out" 2> "$0.err""#
        let r = try await TestServices.run("/bin/sh", ["-c", script, base, CallHarness.peer, "load"] + args, timeout: 30)
        let out = (try? String(contentsOfFile: base + ".out", encoding: .utf8)) ?? ""
        let err = (try? String(contentsOfFile: base + ".err", encoding: .utf8)) ?? ""
        return CallChecks.Output(status: r.status, stdout: out, stderr: err)
    }

    /// Each bad value exits 2 before anything connects, with one line naming the option,
    /// the value and what is allowed; with `--json` an `exit` event says the same.
    @Test(arguments: [
        (["--calls", "0"], ["--calls \"0\"", "1…100000"]),
        (["--calls", "-3"], ["--calls \"-3\"", "1…100000"]),
        (["--ramp", "-5"], ["--ramp \"-5\"", "above 0"]),
        (["--ramp", "0"], ["--ramp \"0\"", "above 0"]),
        (["--prefix-pattern", "load"], ["--prefix-pattern \"load\"", "{i}"]),
        (["--prefix-pattern", "load..{i}"], ["--prefix-pattern \"load..{i}\"", "none empty"]),
        (["--record", "some"], ["--record \"some\"", "none, first or all"]),
    ])
    func aBadValueIsRefusedNamingItAndTheLimit(bad: [String], expected: [String]) async throws {
        var args = ["--router", Self.router, "--role", "offer", "--calls", "2"]
        // The bad option replaces its default, given after it (the last one wins).
        args += bad + ["--json"]
        let r = try await Self.load(args)
        #expect(r.status == 2, "\(bad): \(r.stderr)")
        for text in expected { #expect(r.stderr.contains(text), "\(bad): \(r.stderr)") }
        #expect(r.stderr.hasPrefix("peer: load: "), "\(r.stderr)")
        let exit = r.stdout.split(separator: "\n").last.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(exit?["event"] as? String == "exit" && exit?["code"] as? Int == 2, "\(r.stdout)")
        #expect((exit?["reason"] as? String)?.contains(expected[0]) == true, "\(r.stdout)")
    }

    /// What goes together and what is missing.
    @Test(arguments: [
        (["--calls", "2"], "--role offer|answer is required"),
        (["--role", "offer"], "--calls N is required"),
        (["--calls", "2", "--room-pattern", "r.{i}", "--role", "offer"], "--role does not go with --room-pattern"),
        (["--calls", "2", "--room-pattern", "r"], "--room-pattern \"r\""),
        (["--calls", "2", "--room-pattern", "r.{i}", "--room-size", "0"], "--room-size \"0\""),
        (["--calls", "2", "--role", "caller"], "--role \"caller\": expected offer or answer"),
    ])
    func missingOrConflictingOptionsAreNamed(args: [String], expected: String) async throws {
        let r = try await Self.load(["--router", Self.router] + args)
        #expect(r.status == 2, "\(args): \(r.stderr)")
        #expect(r.stderr.contains(expected), "\(args): \(r.stderr)")
    }

    /// Under a descriptor limit of 64 (soft and hard: the process cannot raise it), 100
    /// calls need far more: refused before the first call, naming the calls, the
    /// descriptors they need, the limit and how many calls fit; the 10 that fit pass the
    /// check (they then fail to reach the router, exit 3, which shows the check passed).
    @Test func moreCallsThanTheDescriptorLimitAllowsAreRefused() async throws {
        let limit = #"ulimit -n 64 || exit 99; "#
        let args = ["--router", Self.router, "--role", "offer", "--local-address", "127.0.0.1", "--timeout", "2"]
        let r = try await Self.load(args + ["--calls", "100"], prefix: limit)
        #expect(r.status == 2, "\(r.stderr)")
        #expect(r.stderr.contains("--calls 100"), "\(r.stderr)")
        #expect(r.stderr.contains("RLIMIT_NOFILE 64"), "\(r.stderr)")
        let perConnection = LoadLimits.baseDescriptorsPerConnection + 1  // one UDP socket: ICE over TCP is off
        let fit = (64 - LoadLimits.processDescriptors) / perConnection
        #expect(r.stderr.contains("needs about \(LoadLimits.processDescriptors + 100 * perConnection) file descriptors"), "\(r.stderr)")
        #expect(r.stderr.contains("at most \(fit) calls fit"), "\(r.stderr)")
        // --ice-tcp adds two sockets a connection: fewer fit.
        let tcp = try await Self.load(args + ["--calls", "100", "--ice-tcp"], prefix: limit)
        #expect(tcp.stderr.contains("at most \((64 - LoadLimits.processDescriptors) / (perConnection + 2)) calls fit"), "\(tcp.stderr)")
        let fits = try await Self.load(args + ["--calls", "\(fit)"], prefix: limit)
        #expect(fits.status == 3, "\(fits.stderr)")
        #expect(!fits.stderr.contains("more than the limit RLIMIT_NOFILE") && fits.stderr.contains("no call started"), "\(fits.stderr)")
    }

    /// `peer load --help` lists its own options and the exit codes.
    @Test func helpNamesTheLoadOptions() async throws {
        let r = try await Self.load(["--help"])
        #expect(r.status == 0)
        for option in ["--calls", "--ramp", "--prefix-pattern", "--room-pattern", "--room-size", "--record none|first|all",
                       "--no-decode", "--ice-tcp", "--summary", "--json"] {
            #expect(r.stdout.contains(option), "\(option) missing from: \(r.stdout)")
        }
    }
}

/// The plan, the limits and the percentiles without a process.
@Suite struct LoadPlanTests {
    func plan(_ signaling: LoadPlan.SignalingMode, calls: Int = 5, ramp: Double = 2) -> LoadPlan {
        LoadPlan(calls: calls, rampPerSecond: ramp, signaling: signaling, template: CallOptions(role: .offer, router: "ws://h/ws"))
    }

    @Test func callsTakeTheirPrefixOrRoomAndTheirStartTime() {
        let legacy = plan(.legacy(offers: false, prefixPattern: "x.load.{i}"))
        #expect(legacy.signalingName(ofCall: 17) == "x.load.17")
        let o = legacy.options(forCall: 3)
        #expect(o.role == .answer && o.prefix == "x.load.3" && o.logTag == "load.3" && !o.recordsMedia)
        #expect(legacy.startOffset(ofCall: 1) == 0 && legacy.startOffset(ofCall: 5) == 2 && legacy.rampSeconds == 2)
        let rooms = plan(.rooms(roomPattern: "r.{i}", roomSize: 3))
        #expect((1...7).map(rooms.signalingName(ofCall:)) == ["r.1", "r.1", "r.1", "r.2", "r.2", "r.2", "r.3"])
        #expect(rooms.options(forCall: 4).role == .room && rooms.options(forCall: 4).room == "r.2")
        #expect(rooms.options(forCall: 1).user != rooms.options(forCall: 2).user)
        #expect(rooms.connectionsPerCall == 5)
        var recorded = legacy
        recorded.recording = .first
        recorded.outputDirectory = "/tmp/out"
        #expect(recorded.options(forCall: 1).recordsMedia && recorded.options(forCall: 1).videoOut == "/tmp/out/load.1.ivf")
        #expect(!recorded.options(forCall: 2).recordsMedia)
    }

    @Test func validationNamesTheValue() {
        #expect(throws: CallOptionError.self) { try plan(.legacy(offers: true, prefixPattern: "a.b")).validate() }
        #expect(throws: CallOptionError.self) { try plan(.legacy(offers: true, prefixPattern: "a.{i}"), ramp: -1).validate() }
        #expect(throws: CallOptionError.self) { try plan(.legacy(offers: true, prefixPattern: "a.{i}"), calls: 0).validate() }
        #expect(throws: Never.self) { try plan(.legacy(offers: true, prefixPattern: "a.{i}")).validate() }
        do { try plan(.legacy(offers: true, prefixPattern: "a.{i}"), ramp: .nan).validate() } catch {
            #expect(error.description.contains("--ramp"), "\(error)")
        }
    }

    /// Nearest rank: p95 of 1…100 is 95, p99 is 99; one value is every percentile.
    @Test func percentilesByNearestRank() throws {
        let p = try #require(Percentiles((1...100).map(Double.init).shuffled()))
        #expect(p.count == 100 && p.p50 == 50 && p.p95 == 95 && p.p99 == 99 && p.max == 100)
        let one = try #require(Percentiles([7, .nan]))
        #expect(one.count == 1 && one.p50 == 7 && one.p99 == 7)
        #expect(Percentiles([]) == nil)
    }

    /// What N calls need, and the first limit they pass, named.
    @Test func limitsNameTheFirstOneExceeded() {
        var p = plan(.legacy(offers: true, prefixPattern: "a.{i}"), calls: 1_000)
        p.template.video = .ivf(path: "x.ivf")
        p.template.decode = false
        p.template.peerConnection.tcpCandidates = false  // as peer load sets it
        let needs = LoadLimits.needs(p, addresses: 2)
        #expect(needs.connections == 1_000)
        #expect(needs.descriptorsPerConnection == LoadLimits.baseDescriptorsPerConnection + 2 + 1)  // 2 UDP sockets, the IVF file
        #expect(needs.udpPorts == 2_000 && needs.tcpPorts == 0)
        let roomy = LoadLimits.Host(descriptorLimit: 1 << 20, ephemeralPorts: 32_768...60_999, threadLimit: nil, availableMemoryBytes: nil)
        #expect(throws: Never.self) { try LoadLimits.check(needs, calls: 1_000, host: roomy) }
        var host = roomy
        host.ephemeralPorts = 40_000...41_000
        do { try LoadLimits.check(needs, calls: 1_000, host: host) } catch {
            #expect(error.description.contains("2000 local UDP ports") && error.description.contains("40000–41000"), "\(error)")
        }
        host = roomy
        host.threadLimit = 1_000
        do { try LoadLimits.check(needs, calls: 1_000, host: host) } catch {
            #expect(error.description.contains("threads") && error.description.contains("1000"), "\(error)")
        }
        host = roomy
        host.availableMemoryBytes = 100 << 20
        do { try LoadLimits.check(needs, calls: 1_000, host: host) } catch {
            #expect(error.description.contains("MemAvailable"), "\(error)")
        }
    }
}
