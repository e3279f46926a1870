// Limits on session descriptions from outside (what `peer` accepts; stated in docs/USAGE.md).

/// The largest session description `peer` parses. Real offers are a few KiB (Chromium's
/// audio+video offer with candidates is ~6 KiB); these bounds keep a hostile or broken
/// peer from making one parse cost more than a few milliseconds and a few MiB.
public enum SDPLimits {
    /// Longest text, bytes (UTF-8): 256 KiB.
    public static let maximumBytes = 256 * 1024
    /// Most `m=` sections: 256 (an SFU client with 100 remote participants offers ~200;
    /// `peer` answers the ones it does not use with port 0).
    public static let maximumMediaSections = 256
}
