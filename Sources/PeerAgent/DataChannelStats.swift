// DataChannelStats and SctpTransportStats: the W3C webrtc-stats `data-channel` object (§7.12) and the `sctp-transport` object (RTCSctpTransportStats) of a connection's data channels, with DataChannelDiscards, what the peer sent that was dropped.

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
    /// What the peer sent that the data channels dropped, by reason (not W3C).
    public var discarded: DataChannelDiscards?
}

/// Messages from the peer that the data channels dropped, by reason, and the streams reset
/// for them (RFC 8832 §6, RFC 8831 §6; not W3C: carried in `sctp-transport` as
/// `discarded`). Each refused message is counted once, also when its stream's reset was
/// already under way.
public struct DataChannelDiscards: Sendable, Encodable, Equatable {
    /// DATA_CHANNEL_OPEN refused: on a stream id of our parity (the DTLS client opens even
    /// ids, the server odd ones), on a stream a channel holds, or unparsable on a free one.
    public var openWrongParity = 0, openStreamInUse = 0, openMalformed = 0
    /// DCEP messages of a type neither OPEN (0x03) nor ACK (0x02) (their stream reset);
    /// other DCEP that does not parse; DATA_CHANNEL_ACKs no channel of ours waited for.
    public var dcepUnknownType = 0, dcepMalformed = 0, unexpectedAck = 0
    /// Messages on a stream with no channel (their stream reset).
    public var noChannel = 0
    /// Messages over our max-message-size (whole or in parts), text that is not UTF-8,
    /// messages with a PPID that is not a data channel's (RFC 8831 §8) on a channel.
    public var tooLarge = 0, notUTF8 = 0, unknownPPID = 0
    /// Streams we reset to refuse what came on them.
    public var streamsReset = 0

    /// Every message dropped (``streamsReset`` not included).
    public var total: Int {
        openWrongParity + openStreamInUse + openMalformed + dcepUnknownType + dcepMalformed + unexpectedAck
            + noChannel + tooLarge + notUTF8 + unknownPPID
    }

    /// No counts.
    public init() {}
}
