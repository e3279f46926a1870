// LibSoup: facts about the libsoup-3 library the WebSocket transport is built on (its version).
import CSoup

/// Facts about the libsoup-3 library the WebSocket transport is built on.
public enum LibSoup {
    /// libsoup's run-time version, "MAJOR.MINOR.MICRO" (`soup_get_major_version()` …).
    public static var version: String {
        "\(soup_get_major_version()).\(soup_get_minor_version()).\(soup_get_micro_version())"
    }

    /// The library versions this module links, name → version.
    public static var libraryVersions: [String: String] { ["libsoup": version] }
}
