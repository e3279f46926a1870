// NiceLog: libnice's debug log (NICE_DEBUG) delivered to a Swift closure — gathering, STUN transactions, checks.
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
