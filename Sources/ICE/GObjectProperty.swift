// Getting and setting GObject properties (libnice's agent settings) from Swift.
import CGLib

/// Setting GObject properties from Swift: `g_object_set` is variadic, so one
/// `GValue` per call (`G_TYPE_*` are macros: fundamental type ids shifted by 2).
enum GObjectProperty {
    static let boolean = GType(5 << 2), uint = GType(7 << 2), string = GType(16 << 2)

    static func set(_ object: UnsafeMutableRawPointer, _ name: String, bool value: Bool) {
        var v = GValue()
        g_value_init(&v, boolean)
        g_value_set_boolean(&v, value ? 1 : 0)
        apply(object, name, &v)
    }

    static func bool(_ object: UnsafeMutableRawPointer, _ name: String) -> Bool {
        var v = GValue()
        g_value_init(&v, boolean)
        defer { g_value_unset(&v) }
        object.withMemoryRebound(to: GObject.self, capacity: 1) { g_object_get_property($0, name, &v) }
        return g_value_get_boolean(&v) != 0
    }

    static func set(_ object: UnsafeMutableRawPointer, _ name: String, uint value: UInt32) {
        var v = GValue()
        g_value_init(&v, uint)
        g_value_set_uint(&v, value)
        apply(object, name, &v)
    }

    static func set(_ object: UnsafeMutableRawPointer, _ name: String, string value: String) {
        var v = GValue()
        g_value_init(&v, string)
        g_value_set_string(&v, value)
        apply(object, name, &v)
    }

    private static func apply(_ object: UnsafeMutableRawPointer, _ name: String, _ value: inout GValue) {
        object.withMemoryRebound(to: GObject.self, capacity: 1) { g_object_set_property($0, name, &value) }
        g_value_unset(&value)
    }
}
