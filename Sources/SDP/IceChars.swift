// IceChars: random ice-char strings for ufrags, passwords and CNAMEs (RFC 8839 §5.4).

/// `count` random ice-chars (ALPHA / DIGIT / "+" / "/", RFC 8839 §5.4): at least 4 for an
/// `ice-ufrag` and 22 for an `ice-pwd` (§5.4), 16 for a CNAME.
public func randomIceChars(_ count: Int) -> String {
    let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
    return String((0..<count).map { _ in alphabet[Int.random(in: 0..<alphabet.count)] })
}
