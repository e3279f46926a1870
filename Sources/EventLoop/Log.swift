// Log: the process's diagnostic log — levels error…trace, each line on stderr with the seconds since start and its component ("12.345 ice: …"), and GLib's own messages (libnice, libsoup, GIO) routed into it.
import Bytes
import CGLib
import Glibc
import Synchronization

/// How much the log says (`--log-level`, `-v`, `-q`, `PEER_LOG`), least first.
public enum LogLevel: Int, Sendable, Comparable, CaseIterable, CustomStringConvertible {
    /// Only what ends the run or loses data.
    case error
    /// And what goes wrong but is survived (a dropped packet, a refused candidate).
    case warn
    /// And the progress a user follows: states, milestones (the default).
    case info
    /// And the steps inside: libnice's connectivity checks, the DTLS handshake, WAMP messages.
    case debug
    /// And everything per packet (libnice's STUN messages).
    case trace

    /// The level named `name` (`error`, `warn`, `info`, `debug`, `trace`), else nil.
    public init?(name: String) {
        guard let level = Self.allCases.first(where: { $0.description == name.lowercased() }) else { return nil }
        self = level
    }

    public var description: String {
        switch self {
        case .error: "error"
        case .warn: "warn"
        case .info: "info"
        case .debug: "debug"
        case .trace: "trace"
        }
    }

    public static func < (a: LogLevel, b: LogLevel) -> Bool { a.rawValue < b.rawValue }
}

/// The process's log. Lines go to stderr, one `write(2)` each (lines from several threads
/// never interleave), as `<seconds since start, 3 decimals> <component>: <message>`.
/// Thread-safe; the level is read with one atomic load, so a disabled line costs little
/// (its message is an autoclosure, not built).
public enum Log {
    private static let threshold = Atomic<Int>(LogLevel.info.rawValue)
    /// The zero of the line times, CLOCK_MONOTONIC seconds as a bit pattern.
    private static let origin = Atomic<UInt64>(Log.monotonic().bitPattern)

    /// The level in effect.
    public static var level: LogLevel { LogLevel(rawValue: threshold.load(ordering: .relaxed)) ?? .info }

    /// Sets the level, and the zero of the line times (`start`, CLOCK_MONOTONIC seconds,
    /// e.g. when the process started; by default when the log was first used).
    public static func configure(level: LogLevel, start: Double? = nil) {
        threshold.store(level.rawValue, ordering: .relaxed)
        if let start { origin.store(start.bitPattern, ordering: .relaxed) }
    }

    /// Whether lines of `level` are written.
    public static func enabled(_ level: LogLevel) -> Bool { level.rawValue <= threshold.load(ordering: .relaxed) }

    /// Writes `message` of `component` (e.g. "ice", "dtls", "wamp") when `level` is enabled.
    public static func write(_ level: LogLevel, _ component: String, _ message: @autoclosure () -> String) {
        write(level, component, tag: nil, message())
    }

    /// Writes `message` of `component` about the connection named `tag` (`peer load`:
    /// `load.17`), before the component: `12.345 load.17 dtls: …`; without a tag as
    /// ``write(_:_:_:)``.
    public static func write(_ level: LogLevel, _ component: String, tag: String?, _ message: @autoclosure () -> String) {
        guard enabled(level) else { return }
        let component = tag.map { "\(Untrusted.quoted($0, limit: 40)) \(component)" } ?? component
        let elapsed = max(0, monotonic() - Double(bitPattern: origin.load(ordering: .relaxed)))
        let ms = Int((elapsed * 1000).rounded())
        let millis = String(ms % 1000)
        var text = message()
        if text.last == "\n" { text.removeLast() }
        // The libraries' text carries what peers sent (candidates, SDP): escaped.
        let line = "\(ms / 1000).\(String(repeating: "0", count: 3 - millis.count))\(millis) \(component): \(Untrusted.quoted(text, limit: .max))\n"
        if let writer = lineWriter.withLock({ $0 }) { return writer(line) }
        var bytes = Array(line.utf8)
        bytes.withUnsafeMutableBytes { b in _ = Glibc.write(2, b.baseAddress, b.count) }
    }

    private static let lineWriter = Mutex<(@Sendable (String) -> Void)?>(nil)

    /// Sends every line (newline included) to `writer` instead of stderr — the command
    /// line's, which keeps its status line apart from them.
    public static func setLineWriter(_ writer: @escaping @Sendable (String) -> Void) {
        lineWriter.withLock { $0 = writer }
    }

    /// Routes GLib's messages of every domain without a handler of its own into the log:
    /// `libnice`/`libnice-stun` as `ice`, `libsoup` as `wamp`, the rest (GLib, GIO) as
    /// `glib`; GLib's error and critical as error, warning as warn, message and info as
    /// info, debug as debug (libsoup's, one per WebSocket frame, as trace). Idempotent.
    public static func routeGLib() {
        _ = glibRouted
    }

    private static let glibRouted: Bool = {
        g_log_set_default_handler({ domain, flags, message, _ in
            let text = message.map { String(cString: $0) } ?? ""
            let name = domain.map { String(cString: $0) } ?? "glib"
            var level = Log.level(glib: UInt32(bitPattern: Int32(flags.rawValue)))
            if level == .debug, name == "libsoup" { level = .trace }  // one line per WebSocket frame
            Log.write(level, Log.component(glibDomain: name), text)
        }, nil)
        return true
    }()

    /// The component of a GLib log domain.
    static func component(glibDomain domain: String) -> String {
        switch domain {
        case "libnice", "libnice-stun": "ice"
        case "libsoup": "wamp"
        default: "glib"
        }
    }

    /// The level of GLib's `GLogLevelFlags` bits (error 1<<2, critical 1<<3, warning 1<<4,
    /// message 1<<5, info 1<<6, debug 1<<7): g_message as info (GLib prints it by default),
    /// g_info and g_debug as debug.
    static func level(glib flags: UInt32) -> LogLevel {
        if flags & (1 << 2 | 1 << 3) != 0 { return .error }
        if flags & (1 << 4) != 0 { return .warn }
        if flags & (1 << 5) != 0 { return .info }  // g_message: printed by default, as GLib does; g_info is debug
        return .debug
    }

    /// CLOCK_MONOTONIC, seconds.
    static func monotonic() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}
