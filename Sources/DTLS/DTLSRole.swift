// DTLSRole: the DTLS client or server, from the negotiated a=setup (RFC 8842 §5.2, RFC 4145 §4).

/// The DTLS role: the client sends the ClientHello (`a=setup:active`), the server answers it.
public enum DTLSRole: Sendable, Equatable {
    /// The DTLS client (initiates the handshake).
    case client
    /// The DTLS server (waits for the ClientHello).
    case server

    /// Our role from our own negotiated `a=setup` value (RFC 8842 §5.2, RFC 4145 §4):
    /// `active` → client, `passive` → server. Nil for `actpass` (only an offer may
    /// say it; the answer decides) and `holdconn` or anything else.
    public init?(localSetup: String) {
        switch localSetup.lowercased() {
        case "active": self = .client
        case "passive": self = .server
        default: return nil
        }
    }
}
