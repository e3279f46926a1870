// ice-probe: a libnice agent driven over stdin/stdout (JSON lines), for the ICE tests in network namespaces.
import Foundation
import ICE
import Synchronization

// `ice-probe`: one ICE agent driven through JSON lines, for tests that need an agent
// in a process of its own (e.g. inside a network namespace, with `ip netns exec`).
//
//   ice-probe controlling|controlled STUN_URL [--local-address IP]...
//
// stdout, one JSON object a line: {"ufrag":…,"pwd":…} (local credentials),
// {"candidate":"candidate:…"} (each local candidate), {"gathering":"complete"},
// {"state":"checking|connected|…"}, {"selected":{"local":"candidate:…","remote":"candidate:…"}},
// {"sent":N}, {"received":N} (distinct numbered datagrams so far), {"added":"candidate:…"}
// (a remote candidate taken; a named one is then resolving), {"dropped":"candidate:…",
// "reason":"…"} (a remote candidate whose name did not resolve), {"error":"…"}.
// stdin, one JSON object a line: {"ufrag":…,"pwd":…} (remote credentials),
// {"candidate":"candidate:…"} (a remote candidate), {"gathering":"complete"} (remote
// end-of-candidates), {"send":N} (send N numbered datagrams). End of input ends the probe.
// The stdout lines a peer needs are exactly the stdin lines the other peer takes, so
// signaling is relaying lines.

/// The agent, its stdout and the count of datagrams received. Thread-safe: events
/// and datagrams arrive on the loop thread, commands on the main thread; stdout and the
/// numbers received are each in a `Mutex` of their own.
final class Probe: Sendable {
    /// Datagrams sent by `{"send":N}` are this prefix followed by their number.
    static let prefix = "ice-probe "
    /// Standard output: one writer at a time, so lines stay whole.
    private let output = Mutex(FileHandle.standardOutput)
    /// The distinct datagram numbers received so far.
    private let received = Mutex(Set<Int>())

    /// Writes `object` as one JSON line on stdout, whole, from any thread.
    func emit(_ object: [String: Any]) {
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]) else {
            return
        }
        output.withLock { try? $0.write(contentsOf: data + Data("\n".utf8)) }
    }

    /// Reports one agent event as its stdout line.
    func handle(_ event: IceEvent) {
        switch event {
        case .localCandidate(let c): emit(["candidate": c.sdpValue])
        case .gatheringComplete: emit(["gathering": "complete"])
        case .state(let s): emit(["state": s.rawValue])
        case .selectedPair(let p): emit(["selected": ["local": p.local.sdpValue, "remote": p.remote.sdpValue]])
        case .gatheringFailed(let reason): emit(["error": reason])
        case let .remoteCandidateDropped(candidate, reason): emit(["dropped": candidate, "reason": reason])
        }
    }

    /// Counts one received datagram; reports `{"received":N}` when its number is new.
    func receive(_ bytes: [UInt8]) {
        let text = String(decoding: bytes, as: UTF8.self)
        guard text.hasPrefix(Probe.prefix), let number = Int(text.dropFirst(Probe.prefix.count)) else {
            emit(["error": "unexpected datagram of \(bytes.count) bytes"])
            return
        }
        let count: Int? = received.withLock { $0.insert(number).inserted ? $0.count : nil }
        if let count { emit(["received": count]) }
    }

    /// Carries out one stdin line on `agent`; a line it cannot use is reported as
    /// `{"error":…}` and otherwise ignored.
    func command(_ line: String, agent: IceAgent) {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any] else {
            emit(["error": "not a JSON object: \(line)"])
            return
        }
        if let ufrag = object["ufrag"] as? String, let pwd = object["pwd"] as? String {
            agent.setRemoteCredentials(ufrag: ufrag, pwd: pwd)
        } else if let text = object["candidate"] as? String {
            do {
                try agent.addRemoteCandidate(try Candidate(parsing: text))
                emit(["added": text])
            } catch {
                emit(["error": "\(error)"])
            }
        } else if object["gathering"] as? String == "complete" {
            agent.endOfRemoteCandidates()
        } else if let count = object["send"] as? Int, (0...1_000_000).contains(count) {
            var sent = 0
            for i in 0..<count {
                if agent.send(Array("\(Probe.prefix)\(i)".utf8)) { sent += 1 }
                if i % 20 == 19 { usleep(1_000) }  // do not overrun the receiver's socket buffer
            }
            emit(["sent": sent])
        } else {
            emit(["error": "unknown command (expected ufrag+pwd, candidate, gathering or send 0-1000000): \(line)"])
        }
    }
}

/// The command line: role, STUN server and the local addresses to gather on.
struct Arguments {
    var controlling: Bool
    var stun: String
    var localAddresses: [String] = []

    /// Parses `arguments` (without the program name); nil when they are not usable.
    init?(_ arguments: [String]) {
        var positional: [String] = []
        var rest = arguments[...]
        var addresses: [String] = []
        while let argument = rest.popFirst() {
            if argument == "--local-address" {
                guard let address = rest.popFirst() else { return nil }
                addresses.append(address)
            } else {
                positional.append(argument)
            }
        }
        guard positional.count == 2, ["controlling", "controlled"].contains(positional[0]) else { return nil }
        controlling = positional[0] == "controlling"
        stun = positional[1]
        localAddresses = addresses
    }
}

/// Runs the probe until stdin ends, then closes the agent and exits.
func runProbe() -> Never {
    signal(SIGPIPE, SIG_IGN)
    let probe = Probe()
    guard let arguments = Arguments(Array(CommandLine.arguments.dropFirst())) else {
        probe.emit(["error": "usage: ice-probe controlling|controlled STUN_URL [--local-address IP]..."])
        exit(2)
    }
    let agent: IceAgent
    do {
        var configuration = IceAgent.Configuration(controlling: arguments.controlling)
        configuration.servers = [try IceServer(arguments.stun)]
        configuration.localAddresses = arguments.localAddresses
        agent = try IceAgent(configuration, onEvent: { probe.handle($0) }, onReceive: { probe.receive($0) })
        probe.emit(["ufrag": agent.localUfrag, "pwd": agent.localPwd])
        try agent.gather()
    } catch {
        probe.emit(["error": "\(error)"])
        exit(1)
    }
    while let line = readLine() {
        if !line.trimmingCharacters(in: .whitespaces).isEmpty { probe.command(line, agent: agent) }
    }
    agent.close()
    exit(0)
}

runProbe()
