// DTLSTransportState: the states of a DTLSTransport, as W3C RTCDtlsTransportState.

/// The state of a ``DTLSTransport``, as W3C `RTCDtlsTransportState`.
public enum DTLSTransportState: String, Sendable, Equatable {
    /// Created, ``DTLSTransport/start()`` not yet called.
    case new
    /// The handshake is running.
    case connecting
    /// The handshake finished, the peer certificate matched a fingerprint and the
    /// SRTP keying material was exported.
    case connected
    /// Closed by ``DTLSTransport/close()`` or by the peer's close_notify.
    case closed
    /// The handshake or the fingerprint check failed; see ``DTLSTransport/error``.
    case failed
}
