// LibNice: facts about the libnice library the ICE module is built on (its version).
import CGLib
import CNice
import EventLoop

/// Facts about the libnice library this module is built on.
public enum LibNice {
    /// libnice's version, "MAJOR.MINOR.MICRO", from `nice-version.h` of the
    /// installed `libnice-dev` (libnice has no run-time version call).
    public static var version: String { "\(NICE_VERSION_MAJOR).\(NICE_VERSION_MINOR).\(NICE_VERSION_MICRO)" }

    /// Creates and frees one RFC 5245-compatible libnice agent on `loop`: proves the
    /// library is linked and usable. Returns the agent's `compatibility` property (0 = RFC 5245).
    public static func probeAgent(on loop: EventLoop = .shared) -> UInt32 {
        loop.sync {
            guard let agent = nice_agent_new(loop.context, NICE_COMPATIBILITY_RFC5245) else { return UInt32.max }
            defer { g_object_unref(UnsafeMutableRawPointer(agent)) }
            var value = GValue()
            g_value_init(&value, GType(7 << 2))  // G_TYPE_UINT (fundamental 7) is a macro Swift cannot import
            defer { g_value_unset(&value) }
            UnsafeMutableRawPointer(agent).withMemoryRebound(to: GObject.self, capacity: 1) {
                g_object_get_property($0, "compatibility", &value)
            }
            return g_value_get_uint(&value)
        }
    }

    /// The library versions this module links, name → version.
    public static var libraryVersions: [String: String] { ["libnice": version, "glib": EventLoop.glibVersion] }
}
