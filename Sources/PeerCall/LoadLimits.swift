// LoadLimits: what N calls need of this host (file descriptors, local ports, threads, memory), from what one connection costs today as measured, against what the host allows — checked before the first call, the limit named.
import Foundation
import ICE
import PeerAgent
#if canImport(Glibc)
import Glibc
#endif

/// What a ``LoadPlan`` needs of this host and what the host allows, so that `peer load`
/// refuses a call count it cannot open before its first call (exit 2), naming the limit,
/// instead of failing calls halfway through the ramp.
///
/// The costs per connection are today's, measured (`/proc/PID/fd`, `/proc/PID/task`,
/// RSS of `peer load` at N and N/2 calls, docs/BENCHMARKS.md "peer load"); the media hub
/// and event-loop work lower them, and these constants with them.
public enum LoadLimits {
    // MARK: Costs per connection, measured

    /// Descriptors every connection holds whatever it sends: the DTLS-SRTP transport's
    /// doorbell and libnice's agent wake-up (two eventfds).
    public static let baseDescriptorsPerConnection = 2
    /// Sockets per local address a connection gathers on: one UDP socket; with ICE over
    /// TCP (`--ice-tcp`) also a passive and an active TCP socket.
    public static func socketsPerAddress(tcp: Bool) -> (udp: Int, tcp: Int) { (1, tcp ? 2 : 0) }
    /// Descriptors a recording connection adds (its IVF and Ogg files).
    public static let recordingDescriptors = 2
    /// Media threads per connection: a sender's and a sink's per transceiver, audio and
    /// video (`peer.send.*`, `peer.sink.*`; docs/ARCHITECTURE.md "Threads").
    public static let threadsPerConnection = 4
    /// What the process holds before its first call: its descriptors (stdio, GLib's
    /// loop, signalfds, the WebSocket; 15 measured, rounded up) and threads.
    public static let processDescriptors = 32, processThreads = 16
    /// Resident memory of one connection sending a file (`ivf:`, `ogg:`) without decoding,
    /// bytes (`peer-bench load`: RSS at N minus at N/2, per connection added, rounded up).
    public static let memoryPerConnection = 12 << 20
    /// What a VP8 encoder adds to a connection that encodes (the pattern, Y4M), bytes
    /// (~17.7 MB at 640x480, rounded up), and a VP8 decoder to one that decodes.
    public static let encoderMemory = 18 << 20, decoderMemory = 4 << 20

    /// What a plan needs.
    public struct Needs: Sendable, Equatable {
        /// Connections in this process at most.
        public var connections: Int
        /// File descriptors, the process's own included.
        public var descriptors: Int
        /// Local UDP and TCP ports (each from the ephemeral range).
        public var udpPorts: Int, tcpPorts: Int
        /// Threads, the process's own included.
        public var threads: Int
        /// Resident memory, bytes.
        public var memoryBytes: Int
        /// Descriptors one connection holds (for the message).
        public var descriptorsPerConnection: Int
    }

    /// What this host allows now.
    public struct Host: Sendable, Equatable {
        /// RLIMIT_NOFILE's soft limit (after ``raiseDescriptorLimit()``).
        public var descriptorLimit: Int
        /// The ephemeral port range (`/proc/sys/net/ipv4/ip_local_port_range`).
        public var ephemeralPorts: ClosedRange<Int>
        /// Threads: the lower of RLIMIT_NPROC (soft) and `kernel/threads-max`; nil: no limit read.
        public var threadLimit: Int?
        /// `MemAvailable` of `/proc/meminfo`, bytes; nil when unreadable.
        public var availableMemoryBytes: Int?
    }

    /// Why a plan does not fit this host: the limit named, with the figures.
    public struct Refusal: Error, Equatable, CustomStringConvertible {
        /// The message (without the `peer: load:` prefix).
        public var description: String
    }

    /// Raises RLIMIT_NOFILE's soft limit to its hard limit (a process may, unprivileged).
    /// Returns the soft limit before and after; unchanged when it cannot be read or set.
    @discardableResult
    public static func raiseDescriptorLimit() -> (before: Int, after: Int) {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return (0, 0) }
        let before = Int(clamping: limit.rlim_cur)
        guard limit.rlim_cur < limit.rlim_max else { return (before, before) }
        var raised = limit
        raised.rlim_cur = limit.rlim_max
        guard setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 else { return (before, before) }
        return (before, Int(clamping: raised.rlim_cur))
    }

    /// The host's limits now.
    public static func host() -> Host {
        var files = rlimit()
        let descriptorLimit = getrlimit(Int32(RLIMIT_NOFILE.rawValue), &files) == 0 ? Int(clamping: files.rlim_cur) : 1_024
        var ports = 32_768...60_999  // Linux's default
        if let text = try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8) {
            let numbers = text.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" }).compactMap { Int($0) }
            if numbers.count == 2, numbers[0] <= numbers[1] { ports = numbers[0]...numbers[1] }
        }
        var threadLimit: Int?
        var nproc = rlimit()
        if getrlimit(Int32(__RLIMIT_NPROC.rawValue), &nproc) == 0, nproc.rlim_cur != rlim_t.max { threadLimit = Int(clamping: nproc.rlim_cur) }
        if let text = try? String(contentsOfFile: "/proc/sys/kernel/threads-max", encoding: .utf8),
           let max = Int(text.trimmingCharacters(in: .whitespacesAndNewlines)) {
            threadLimit = min(threadLimit ?? max, max)
        }
        var available: Int?
        if let text = try? String(contentsOfFile: "/proc/meminfo", encoding: .utf8),
           let line = text.split(separator: "\n").first(where: { $0.hasPrefix("MemAvailable:") }),
           let kb = line.split(separator: " ").dropFirst().first.flatMap({ Int($0) }) {
            available = kb * 1024
        }
        return Host(descriptorLimit: descriptorLimit, ephemeralPorts: ports, threadLimit: threadLimit, availableMemoryBytes: available)
    }

    /// The addresses a connection of `template` gathers on: `--local-address` given, else
    /// this host's interface addresses other than loopback and IPv6 link-local (libnice's
    /// choice), at least one.
    public static func localAddressCount(_ template: CallOptions) -> Int {
        if !template.peerConnection.localAddresses.isEmpty { return template.peerConnection.localAddresses.count }
        let all = HostAddresses.all() ?? []
        let usable = all.filter { !$0.hasPrefix("127.") && $0 != "::1" && !$0.lowercased().hasPrefix("fe80") }
        return max(1, usable.count)
    }

    /// What `plan` needs, its connections gathering on `addresses` local addresses.
    public static func needs(_ plan: LoadPlan, addresses: Int) -> Needs {
        let connections = plan.calls * plan.connectionsPerCall
        let sockets = socketsPerAddress(tcp: plan.template.peerConnection.tcpCandidates)
        var files = 0
        switch plan.template.video { case .ivf, .y4m: files += 1; case .none, .pattern: break }
        switch plan.template.audio { case .wav: files += 1; case .none, .tone, .ogg: break }
        let perConnection = baseDescriptorsPerConnection + addresses * (sockets.udp + sockets.tcp) + files
        let recorded: Int
        switch plan.recording {
        case .none: recorded = 0
        case .first: recorded = plan.connectionsPerCall
        case .all: recorded = connections
        }
        var memory = memoryPerConnection
        switch plan.template.video { case .pattern, .y4m: memory += encoderMemory; case .none, .ivf: break }
        if plan.template.decode { memory += decoderMemory }
        return Needs(connections: connections,
                     descriptors: processDescriptors + connections * perConnection + recorded * recordingDescriptors,
                     udpPorts: connections * addresses * sockets.udp, tcpPorts: connections * addresses * sockets.tcp,
                     threads: processThreads + connections * threadsPerConnection, memoryBytes: connections * memory,
                     descriptorsPerConnection: perConnection)
    }

    /// Checks `needs` against `host`.
    /// - Throws: ``Refusal`` naming the first limit exceeded (descriptors, ephemeral ports,
    ///   threads, memory), the calls asked for, what they need, and the most calls that fit.
    public static func check(_ needs: Needs, calls: Int, host: Host) throws(Refusal) {
        let perCall = Double(needs.connections) / Double(max(1, calls))
        func fitting(_ available: Int, _ base: Int, _ per: Int) -> Int {
            guard per > 0, perCall > 0 else { return calls }
            return max(0, Int((Double(available - base) / (Double(per) * perCall)).rounded(.down)))
        }
        let c = "--calls \(calls)"
        if needs.descriptors > host.descriptorLimit {
            let per = needs.connections > 0 ? (needs.descriptors - processDescriptors) / needs.connections : 0
            throw Refusal(description: "\(c): needs about \(needs.descriptors) file descriptors (\(needs.connections) connections × "
                + "\(needs.descriptorsPerConnection) + the process's \(processDescriptors)), more than the limit RLIMIT_NOFILE "
                + "\(host.descriptorLimit) (raised to its hard limit); at most \(fitting(host.descriptorLimit, processDescriptors, per)) calls fit "
                + "(raise the hard limit: ulimit -Hn, or LimitNOFILE= in a systemd unit)")
        }
        let portCount = host.ephemeralPorts.count
        if needs.udpPorts > portCount || needs.tcpPorts > portCount {
            let udp = needs.udpPorts > portCount
            let used = udp ? needs.udpPorts : needs.tcpPorts
            throw Refusal(description: "\(c): needs \(used) local \(udp ? "UDP" : "TCP") ports, more than the ephemeral port range "
                + "\(host.ephemeralPorts.lowerBound)–\(host.ephemeralPorts.upperBound) holds (\(portCount), "
                + "net.ipv4.ip_local_port_range); at most \(fitting(portCount, 0, max(1, used / max(1, needs.connections)))) calls fit")
        }
        if let limit = host.threadLimit, needs.threads > limit {
            throw Refusal(description: "\(c): needs about \(needs.threads) threads (\(threadsPerConnection) per connection), more than "
                + "the limit \(limit) (RLIMIT_NPROC or kernel.threads-max); at most \(fitting(limit, processThreads, threadsPerConnection)) calls fit")
        }
        if let available = host.availableMemoryBytes, needs.memoryBytes > available {
            let per = needs.memoryBytes / max(1, needs.connections)
            throw Refusal(description: "\(c): needs about \(needs.memoryBytes >> 20) MB of memory (\(per >> 20) MB per connection), "
                + "more than the \(available >> 20) MB available (MemAvailable); at most \(fitting(available, 0, per)) calls fit")
        }
    }
}
