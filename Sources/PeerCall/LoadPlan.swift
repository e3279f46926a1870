// LoadPlan: what `peer load` runs — N calls in one process, how fast they start, the topic prefix or room each takes ({i} patterns), what each records — and each call's CallOptions.
import Bytes
import SDP
import Foundation

/// What one `peer load` process runs: `calls` calls started `rampPerSecond` a second, all
/// on one shared WAMP session (``SharedSignaling``). Each call is the same ``Call`` a
/// `peer offer|answer|room` process runs, with the options of ``options(forCall:)``:
///
/// - legacy profile (`--role offer|answer`): call *i* (1…N) signals on the topic prefix
///   ``prefixPattern`` with `{i}` replaced by *i* (`load.{i}` → `load.17`), one
///   connection per call; the other process runs the other role with the same pattern;
/// - rooms (`--room-pattern`, ``roomSize``): call *i* is a member (its own user id) of
///   room ``roomPattern`` with `{i}` replaced by ⌈*i* / roomSize⌉, so each room holds
///   `roomSize` members of this process (and whoever else joins it); a member calls every
///   other member of its room and answers newcomers.
///
/// Call *i* is named `load.`*i* (``tag(_:)``) in log lines, events and the summary.
public struct LoadPlan: Sendable {
    /// How calls find each other.
    public enum SignalingMode: Sendable, Equatable {
        /// The legacy profile, one prefix per call; `offers`: this process offers.
        case legacy(offers: Bool, prefixPattern: String)
        /// The room profile: members `roomSize` to a room named by `roomPattern`.
        case rooms(roomPattern: String, roomSize: Int)
    }

    /// What each call records (`--record`).
    public enum Recording: String, Sendable, CaseIterable {
        /// Nothing: receivers only count (and decode unless `--no-decode`).
        case none
        /// The first call only (IVF and Ogg in ``outputDirectory``).
        case first
        /// Every call.
        case all
    }

    /// The placeholder a pattern must hold: the call's number (legacy) or the room's.
    public static let placeholder = "{i}"
    /// The largest `--calls`.
    public static let maximumCalls = 100_000
    /// The default `--prefix-pattern`: under the default prefix of `shared/PROTOCOL.md`.
    public static let defaultPrefixPattern = Signaling.defaultPrefix + ".load.{i}"

    /// How many calls (1…``maximumCalls``).
    public var calls: Int
    /// Calls started a second (> 0): call *i* starts (*i* − 1) / ramp seconds after the
    /// first.
    public var rampPerSecond: Double
    /// Legacy prefixes or rooms.
    public var signaling: SignalingMode
    /// `--record`.
    public var recording: Recording = .none
    /// Where recordings go (`--out-dir`): `load.<i>.ivf` and `load.<i>.ogg`.
    public var outputDirectory = "."
    /// The options every call starts from (router, ICE servers, media, `--duration`,
    /// `--timeout`, decoding); the role, prefix or room, files and tag are set per call.
    public var template: CallOptions

    /// A plan of `calls` calls at `rampPerSecond`, each from `template`.
    public init(calls: Int, rampPerSecond: Double, signaling: SignalingMode, template: CallOptions) {
        self.calls = calls
        self.rampPerSecond = rampPerSecond
        self.signaling = signaling
        self.template = template
    }

    /// Call `i`'s name in log lines and events: `load.<i>`.
    public static func tag(_ i: Int) -> String { "load.\(i)" }

    /// Seconds from the first call's start to call `i`'s (1-based).
    public func startOffset(ofCall i: Int) -> Double { Double(i - 1) / rampPerSecond }

    /// Seconds from the first call's start to the last one's.
    public var rampSeconds: Double { startOffset(ofCall: calls) }

    /// `pattern` with every `{i}` replaced by `n`.
    public static func expand(_ pattern: String, _ n: Int) -> String {
        pattern.replacingOccurrences(of: placeholder, with: String(n))
    }

    /// The topic prefix (legacy) or room name (rooms) call `i` signals on.
    public func signalingName(ofCall i: Int) -> String {
        switch signaling {
        case let .legacy(_, pattern): return Self.expand(pattern, i)
        case let .rooms(pattern, size): return Self.expand(pattern, (i - 1) / size + 1)
        }
    }

    /// Connections one call has at most: 1 (legacy); in rooms the other members of its
    /// room, counted as `roomSize` of ours and as many of another process's (2 × size − 1).
    public var connectionsPerCall: Int {
        switch signaling {
        case .legacy: return 1
        case let .rooms(_, size): return max(1, 2 * size - 1)
        }
    }

    /// Whether call `i` records (``recording``).
    public func records(call i: Int) -> Bool {
        switch recording {
        case .none: return false
        case .first: return i == 1
        case .all: return true
        }
    }

    /// The options of call `i` (1-based): ``template`` with its role, prefix or room, tag
    /// (`load.<i>`) and, when it records, its files in ``outputDirectory``.
    public func options(forCall i: Int) -> CallOptions {
        var o = template
        switch signaling {
        case let .legacy(offers, _):
            o.role = offers ? .offer : .answer
            o.prefix = signalingName(ofCall: i)
        case .rooms:
            o.role = .room
            o.room = signalingName(ofCall: i)
            o.user = randomIceChars(8).replacingOccurrences(of: "+", with: "x").replacingOccurrences(of: "/", with: "y")
        }
        let tag = Self.tag(i)
        o.logTag = tag
        o.recordsMedia = records(call: i)
        o.recordOut = nil
        o.statsTimelinePath = nil
        o.dataOut = nil
        let base = URL(fileURLWithPath: outputDirectory).appendingPathComponent(tag).path
        o.videoOut = base + ".ivf"
        o.audioOut = base + ".ogg"
        return o
    }

    /// Checks what the command line cannot check one option at a time.
    /// - Throws: ``CallOptionError`` naming the option, the value and what was expected:
    ///   `--calls` outside 1…``maximumCalls``, a ramp not above 0 (or not a number), a
    ///   pattern without `{i}`, a room size outside 1…1000.
    public func validate() throws(CallOptionError) {
        guard (1...Self.maximumCalls).contains(calls) else {
            throw CallOptionError(option: "--calls", value: String(calls), expected: "a number of calls in 1…\(Self.maximumCalls)")
        }
        guard rampPerSecond.isFinite, rampPerSecond > 0, rampPerSecond <= 10_000 else {
            throw CallOptionError(option: "--ramp", value: formatSeconds(rampPerSecond),
                                  expected: "calls started a second, a number above 0 and at most 10000")
        }
        switch signaling {
        case let .legacy(_, pattern):
            try Self.checkPattern(pattern, option: "--prefix-pattern", example: "load.{i}")
        case let .rooms(pattern, size):
            try Self.checkPattern(pattern, option: "--room-pattern", example: "loadroom.{i}")
            guard (1...1_000).contains(size) else {
                throw CallOptionError(option: "--room-size", value: String(size), expected: "members of this process per room, 1…1000")
            }
        }
    }

    /// A pattern is refused without `{i}` (every call would take the same topics) or empty
    /// parts around a dot (not a WAMP URI).
    private static func checkPattern(_ pattern: String, option: String, example: String) throws(CallOptionError) {
        guard pattern.contains(placeholder) else {
            throw CallOptionError(option: option, value: pattern,
                                  expected: "a pattern with {i} (replaced by each call's number, 1…N), e.g. \(example)")
        }
        let sample = expand(pattern, 1)
        guard !sample.split(separator: ".", omittingEmptySubsequences: false).contains(where: \.isEmpty),
              !sample.contains(where: { $0 == " " || $0 == "#" || $0.isNewline }) else {
            throw CallOptionError(option: option, value: pattern, expected: "dot-separated WAMP URI parts, none empty, e.g. \(example)")
        }
    }
}
