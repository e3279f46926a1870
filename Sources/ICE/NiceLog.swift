// NiceLog: libnice's debug log (NICE_DEBUG) delivered to a Swift closure — gathering, STUN transactions, checks — and each line's connection, by the agent it names.
import CGLib
import CNice
import Synchronization

/// libnice's debug log (what `NICE_DEBUG=libnice` prints), delivered to a Swift
/// closure: the agent's candidate gathering, STUN transactions and checks.
/// Process-wide; one capture at a time.
public final class NiceLog: Sendable {
    private let handler: @Sendable (String) -> Void
    /// The GLib log handlers installed and the reference they hold; emptied by stop().
    private let installed = Mutex<(handlerIds: [(String, UInt32)], retained: Unmanaged<NiceLog>?)>(([], nil))

    /// Enables libnice's debug messages (with its STUN messages when `withStun`) and
    /// passes each line to `handler`, on whatever thread logged it.
    public init(withStun: Bool = true, handler: @escaping @Sendable (String) -> Void) {
        self.handler = handler
        let me = Unmanaged.passRetained(self)
        let log: GLogFunc = { _, _, message, data in
            guard let data, let message else { return }
            Unmanaged<NiceLog>.fromOpaque(data).takeUnretainedValue().handler(String(cString: message))
        }
        var handlerIds: [(String, UInt32)] = []
        for domain in ["libnice", "libnice-stun"] {
            // All levels from ERROR (1 << 2) to DEBUG (1 << 7).
            handlerIds.append((domain, g_log_set_handler(domain, GLogLevelFlags(rawValue: 0xFC), log, me.toOpaque())))
        }
        installed.withLock { $0 = (handlerIds, me) }
        nice_debug_enable(withStun ? 1 : 0)
    }

    /// The connection names of the agents that have one (``IceAgent/Configuration/logTag``),
    /// by the agent's address as libnice prints it (`%p`: `0x7fb73000b0b0`).
    private static let tags = Mutex<[String: String]>([:])

    /// `agent`'s address as libnice's lines print it (`Agent 0x7fb73000b0b0 : …`).
    static func key(_ agent: OpaquePointer) -> String { "0x" + String(UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(agent))), radix: 16) }

    /// Lines naming `agent` get `tag` (``tag(ofLine:)``) until ``forget(agent:)``.
    static func remember(agent: OpaquePointer, tag: String) { tags.withLock { $0[key(agent)] = tag } }

    /// The agent of `key` (``key(_:)``) is gone: its address may come back as another agent's.
    static func forget(key: String) { _ = tags.withLock { $0.removeValue(forKey: key) } }

    /// The connection name of the agent a libnice line names (`Agent 0x… : …`, `Agent:0x…
    /// s:1: …`), if it has one; nil for lines naming none (the interfaces it enumerates,
    /// its STUN messages) or an agent without.
    public static func tag(ofLine line: String) -> String? {
        guard line.hasPrefix("Agent 0x") || line.hasPrefix("Agent:0x") else { return nil }
        let address = line.dropFirst("Agent ".count).prefix { $0 != " " && $0 != ":" && $0 != "," }
        return tags.withLock { $0[String(address)] }
    }

    /// Stops the capture and disables libnice's debug messages again. Idempotent.
    public func stop() {
        let (handlerIds, retained) = installed.withLock { value in
            defer { value = ([], nil) }
            return value
        }
        guard let retained else { return }
        nice_debug_disable(1)
        for (domain, id) in handlerIds { g_log_remove_handler(domain, id) }
        retained.release()
    }
}
