// DataChannelStats and SctpTransportStats: the W3C webrtc-stats `data-channel` object (§7.12) and the `sctp-transport` object (RTCSctpTransportStats) of a connection's data channels.

/// `data-channel` statistics of one channel (W3C webrtc-stats RTCDataChannelStats).
public struct DataChannelStats: Sendable, Encodable, Equatable {
    /// Stats object id: "D" and the channel's number in the order the connection made its
    /// channels (from 0), unique for the connection's life as a stream id is not.
    public var id: String
    /// Always "data-channel".
    public var type = "data-channel"
    /// When the values were taken, ms since the Unix epoch.
    public var timestamp: Double
    /// The channel's label and sub-protocol.
    public var label: String
    public var `protocol`: String
    /// The SCTP stream id, once chosen.
    public var dataChannelIdentifier: Int?
    /// `connecting`, `open`, `closing` or `closed`.
    public var state: String
    /// Whole messages and their bytes (UTF-8 for text) sent and received.
    public var messagesSent: Int, bytesSent: Int, messagesReceived: Int, bytesReceived: Int
}

/// `sctp-transport` statistics of the connection's association (webrtc-stats
/// RTCSctpTransportStats), from libusrsctp's `SCTP_STATUS`.
public struct SctpTransportStats: Sendable, Encodable, Equatable {
    /// Always "SCTP".
    public var id = "SCTP"
    /// Always "sctp-transport".
    public var type = "sctp-transport"
    /// When the values were taken, ms since the Unix epoch.
    public var timestamp: Double
    /// The `transport` it runs over.
    public var transportId = "T-bundle"
    /// `new`, `connecting`, `connected` or `closed`.
    public var state: String
    /// Smoothed round-trip time, seconds.
    public var smoothedRoundTripTime: Double?
    /// Congestion window and the peer's receive window, bytes.
    public var congestionWindow: Int?
    public var receiverWindow: Int?
    /// The SCTP packet size in use, bytes.
    public var mtu: Int?
    /// Data chunks sent and not yet acknowledged.
    public var unackData: Int?
}
