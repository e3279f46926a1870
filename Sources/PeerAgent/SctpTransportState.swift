// SctpTransportState: W3C RTCSctpTransportState of the connection's SCTP association (RFC 8261), plus `new` before it starts.

/// W3C `RTCSctpTransportState`, plus `new` before the association starts.
public enum SctpTransportState: String, Sendable, Equatable {
    /// No association yet (no data section negotiated, or DTLS not connected).
    case new
    /// INIT sent, the association not up yet.
    case connecting
    /// The association is up.
    case connected
    /// The association ended or the connection closed.
    case closed
}
