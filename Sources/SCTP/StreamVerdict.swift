// StreamVerdict: what a data channel endpoint does with one message the peer sent on a stream — accept a DATA_CHANNEL_OPEN, open on an ACK, deliver, or refuse (not acknowledged, the stream reset) — by RFC 8832 §4–§6 and RFC 8831 §6.
import Bytes

/// What to do with one whole message the peer sent on an SCTP stream of a data channel
/// association (RFC 8832 §4–§6, RFC 8831 §6), judged from its PPID, its first bytes, the
/// stream id, our DTLS role and the channel that holds the stream here. Pure: the caller
/// (PeerAgent's `SctpTransport`) carries it out.
public enum StreamVerdict: Equatable, Sendable {
    /// A DATA_CHANNEL_OPEN on a free stream of the peer's parity: make the channel and
    /// acknowledge it (RFC 8832 §6).
    case open(type: DCEPChannelType, priority: UInt16, label: String, protocol: String)
    /// DATA_CHANNEL_ACK for our channel on the stream, which waited for it: it opens.
    case acknowledged
    /// User data (or a PPID the channel reports) for the channel on the stream; a channel
    /// of ours still waiting for the ACK opens first (RFC 8832 §6: the peer's first message
    /// implies it).
    case deliver
    /// Not taken and not acknowledged: the message is dropped and counted, and our side of
    /// the stream is reset (RFC 6525, RFC 8831 §6.7), which closes whatever the peer, or we,
    /// had on it.
    case refuse(StreamRefusal)
    /// Dropped and counted; the stream is left as it is.
    case drop(StreamDrop)

    /// A channel label (outside text) as our messages show it: control and reordering
    /// characters escaped (``Untrusted``), at most 64 Unicode scalars and so at most 384
    /// characters (a longer one is cut and ends in `… (N bytes)`), without quotes.
    public static func shown(_ label: String) -> String {
        let scalars = label.unicodeScalars
        guard scalars.count > 64 else { return Untrusted.quoted(label) }
        var cut = String.UnicodeScalarView()
        cut.append(contentsOf: scalars.prefix(64))
        return Untrusted.quoted(String(cut)) + "… (\(label.utf8.count) bytes)"
    }

    /// Who holds the stream here.
    public enum Holder: Equatable, Sendable {
        /// No channel (none made, or its channel closed).
        case none
        /// A channel, labelled `label`; `awaitingAck` for ours whose DATA_CHANNEL_OPEN the
        /// peer has not yet acknowledged.
        case channel(label: String, awaitingAck: Bool)
    }

    /// Judges one message.
    /// - Parameters:
    ///   - ppid: its payload protocol identifier (RFC 8831 §8; 50 is DCEP).
    ///   - data: the whole message.
    ///   - streamId: the SCTP stream it came on.
    ///   - weAreDTLSClient: our DTLS role (the client opens even stream ids, the server odd
    ///     ones, RFC 8832 §6); nil when not known, which checks no parity.
    ///   - holder: the channel on that stream here, if any.
    public static func judge(ppid: UInt32, data: [UInt8], streamId: UInt16, weAreDTLSClient: Bool?,
                             holder: Holder) -> StreamVerdict {
        guard ppid == DataChannelPPID.dcep.rawValue else {
            if case .none = holder { return .refuse(.noChannel(ppid: ppid, bytes: data.count)) }
            return .deliver
        }
        guard let type = data.first else { return .drop(.malformed(.truncated("an empty DCEP message"))) }
        switch type {
        case DCEPMessage.openType:
            if let client = weAreDTLSClient, streamId % 2 == (client ? 0 : 1) {
                return .refuse(.wrongParity(weAreDTLSClient: client))
            }
            if case let .channel(label, _) = holder { return .refuse(.streamInUse(label: label)) }
            do {
                guard case let .open(channelType, priority, label, proto) = try DCEPMessage(parsing: data) else {
                    return .drop(.malformed(.unknownMessageType(type)))
                }
                return .open(type: channelType, priority: priority, label: label, protocol: proto)
            } catch {
                return .refuse(.malformedOpen(error))
            }
        case DCEPMessage.ackType:
            if data.count > 1 { return .drop(.malformed(.trailing(offset: 1, count: data.count - 1))) }
            guard case .channel(_, true) = holder else { return .drop(.unexpectedAck) }
            return .acknowledged
        default:
            return .refuse(.unknownMessageType(type))
        }
    }
}

/// Why a message made us reset its stream (``StreamVerdict/refuse(_:)``).
public enum StreamRefusal: Equatable, Sendable, CustomStringConvertible {
    /// DATA_CHANNEL_OPEN on a stream id of our parity (RFC 8832 §6): the DTLS client opens
    /// even ids, the server odd ones.
    case wrongParity(weAreDTLSClient: Bool)
    /// DATA_CHANNEL_OPEN on a stream the channel `label` holds.
    case streamInUse(label: String)
    /// A DATA_CHANNEL_OPEN on a free stream that does not parse (the peer's channel is
    /// open on its side already, RFC 8832 §6).
    case malformedOpen(DCEPError)
    /// A DCEP message whose type is neither DATA_CHANNEL_OPEN (0x03) nor DATA_CHANNEL_ACK (0x02).
    case unknownMessageType(UInt8)
    /// A message of `bytes` bytes with PPID `ppid` on a stream with no channel.
    case noChannel(ppid: UInt32, bytes: Int)

    /// The reason in words (the caller adds the stream id and what was done).
    public var description: String {
        switch self {
        case .wrongParity(let client):
            "DATA_CHANNEL_OPEN on \(client ? "an even" : "an odd") stream id, which is ours to open: "
                + "the peer is the DTLS \(client ? "server and opens odd" : "client and opens even") ids (RFC 8832 §6)"
        case .streamInUse(let label): "DATA_CHANNEL_OPEN on the stream of channel \"\(StreamVerdict.shown(label))\", which is in use (RFC 8832 §6)"
        case .malformedOpen(let error): "\(error)"
        case .unknownMessageType(let type):
            "DCEP message of unknown type 0x\(String(type, radix: 16)) (expected 0x03 DATA_CHANNEL_OPEN or 0x02 DATA_CHANNEL_ACK, RFC 8832 §5)"
        case let .noChannel(ppid, bytes): "a message (PPID \(ppid), \(bytes) bytes) on a stream which has no open channel"
        }
    }
}

/// Why a message was dropped with its stream left as it is (``StreamVerdict/drop(_:)``).
public enum StreamDrop: Equatable, Sendable, CustomStringConvertible {
    /// A DCEP message that does not parse (an empty one, an ACK with bytes after it).
    case malformed(DCEPError)
    /// DATA_CHANNEL_ACK on a stream with no channel of ours waiting for one.
    case unexpectedAck

    /// The reason in words (the caller adds the stream id).
    public var description: String {
        switch self {
        case .malformed(let error): "\(error)"
        case .unexpectedAck: "DATA_CHANNEL_ACK with no channel of ours waiting for one"
        }
    }
}
