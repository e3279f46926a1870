// DataChannel: W3C RTCDataChannel — one bidirectional channel of messages on an SCTP stream (RFC 8831), its options, state, buffered amount and counts.
import SCTP
import Synchronization

/// The options of a new data channel (W3C `RTCDataChannelInit`).
public struct DataChannelInit: Sendable, Equatable {
    /// Messages delivered in the order sent (default true).
    public var ordered = true
    /// Retransmissions before a message is given up (nil: reliable). Not with ``maxPacketLifeTime``.
    public var maxRetransmits: UInt16?
    /// ms after which an unacknowledged message is given up (nil: reliable).
    public var maxPacketLifeTime: UInt16?
    /// The sub-protocol name (DCEP's protocol field).
    public var `protocol` = ""
    /// True: both sides create the channel with the same ``id`` and no DCEP runs.
    public var negotiated = false
    /// The SCTP stream id (required when ``negotiated``; else ignored, the DTLS role chooses it).
    public var id: UInt16?

    /// Options with every field given.
    public init(ordered: Bool = true, maxRetransmits: UInt16? = nil, maxPacketLifeTime: UInt16? = nil,
                protocol: String = "", negotiated: Bool = false, id: UInt16? = nil) {
        self.ordered = ordered; self.maxRetransmits = maxRetransmits; self.maxPacketLifeTime = maxPacketLifeTime
        self.protocol = `protocol`; self.negotiated = negotiated; self.id = id
    }
}

/// W3C `RTCDataChannelState`.
public enum DataChannelState: String, Sendable, Equatable {
    /// Made, not yet open: the association is not up, or our DATA_CHANNEL_OPEN is not yet
    /// acknowledged by the peer's DATA_CHANNEL_ACK or its first message (RFC 8832 §6).
    case connecting
    /// Messages flow.
    case open
    /// `close()` was called or the peer reset its stream; our reset follows.
    case closing
    /// Both directions of the stream are reset, or the association ended.
    case closed
}

/// One data channel message: text (UTF-8, PPID 51 or 56 when empty) or binary (53 or 57).
public enum DataChannelMessage: Sendable, Equatable {
    /// A UTF-8 string message.
    case text(String)
    /// A binary message.
    case binary([UInt8])

    /// The message's size in bytes (UTF-8 for text), as `bufferedAmount` and the byte
    /// counts measure it.
    public var byteCount: Int {
        switch self {
        case .text(let s): s.utf8.count
        case .binary(let b): b.count
        }
    }
}

/// Why a data channel operation was refused.
public enum DataChannelError: Error, Equatable, Sendable, CustomStringConvertible {
    /// `send` while the channel `label` is not `open` (W3C InvalidStateError).
    case notOpen(label: String, state: DataChannelState)
    /// A message of `bytes` bytes is over the peer's `a=max-message-size` `limit` (W3C TypeError).
    case tooLarge(label: String, bytes: Int, limit: Int)
    /// The channel already holds ``DataChannel/maximumBufferedAmount`` bytes not yet sent
    /// (W3C OperationError): wait for `bufferedamountlow`.
    case bufferFull(label: String, bufferedAmount: Int)
    /// Options W3C `createDataChannel` refuses: the reason names the option and value.
    case invalidOptions(String)

    /// A sentence naming the channel and the value.
    public var description: String {
        switch self {
        case let .notOpen(label, state): "data channel \"\(label)\": send while \(state.rawValue) (only an open channel sends)"
        case let .tooLarge(label, bytes, limit): "data channel \"\(label)\": a message of \(bytes) bytes is over the peer's max-message-size \(limit)"
        case let .bufferFull(label, amount): "data channel \"\(label)\": \(amount) bytes are waiting to be sent; wait for bufferedamountlow"
        case .invalidOptions(let reason): "createDataChannel: \(reason)"
        }
    }
}

/// A data channel (W3C `RTCDataChannel`, RFC 8831): messages on one SCTP stream of the
/// connection's association, opened by DCEP (RFC 8832) or negotiated out of band.
///
/// Threading: any thread may read it, ``send(_:)`` and ``close()``; its events arrive as
/// ``PeerConnectionEvent``s on the event-loop thread. The SCTP work runs there
/// (``SctpTransport``).
public final class DataChannel: Sendable {
    /// The channel's label and sub-protocol (DCEP fields; any UTF-8 up to 65,535 bytes).
    public let label: String, `protocol`: String
    /// Order and reliability (W3C names).
    public let ordered: Bool, maxRetransmits: UInt16?, maxPacketLifeTime: UInt16?
    /// Created with a fixed id on both sides (no DCEP).
    public let negotiated: Bool
    /// Most bytes ``send(_:)`` lets wait (16 MiB, as Chromium); more is refused.
    public static let maximumBufferedAmount = 16 << 20
    let transport: WeakBox<SctpTransport>
    /// The channel's place among the connection's channels, from 0 in the order they were
    /// made (its stats id: a stream id is reused once a channel closes, this is not).
    let serial: Int

    struct State {
        var id: UInt16?
        var readyState: DataChannelState = .connecting
        var bufferedAmount = 0
        var bufferedAmountLowThreshold = 0
        var messagesSent = 0, bytesSent = 0, messagesReceived = 0, bytesReceived = 0
        /// Our DATA_CHANNEL_OPEN is queued or sent and the peer has not acknowledged it (nor
        /// sent on the stream): the channel stays `connecting` (RFC 8832 §6).
        var awaitingAck = false
        /// Stream reset progress when closing (RFC 8831 §6.7): ours sent, ours done, theirs.
        var resetRequested = false, outgoingReset = false, incomingReset = false
    }
    let state: Mutex<State>

    init(label: String, options: DataChannelInit, transport: SctpTransport, serial: Int) {
        self.label = label
        self.serial = serial
        self.protocol = options.protocol
        ordered = options.ordered
        maxRetransmits = options.maxRetransmits
        maxPacketLifeTime = options.maxPacketLifeTime
        negotiated = options.negotiated
        self.transport = WeakBox(transport)
        state = Mutex(State(id: options.id))
    }

    /// The SCTP stream id (nil until the DTLS role chose one).
    public var id: UInt16? { state.withLock { $0.id } }
    /// `connecting`, `open`, `closing` or `closed`.
    public var readyState: DataChannelState { state.withLock { $0.readyState } }
    /// Bytes handed to ``send(_:)`` and not yet taken by SCTP. As in W3C it does not reset
    /// when the channel closes: what was still queued then was never sent.
    public var bufferedAmount: Int { state.withLock { $0.bufferedAmount } }
    /// A `bufferedAmountLow` event comes when ``bufferedAmount`` falls to this or below (bytes).
    public var bufferedAmountLowThreshold: Int {
        get { state.withLock { $0.bufferedAmountLowThreshold } }
        set { state.withLock { $0.bufferedAmountLowThreshold = max(0, newValue) } }
    }

    /// How reliable SCTP sends this channel's messages.
    var reliability: SCTPReliability {
        if let n = maxRetransmits { return .maxRetransmits(UInt32(n)) }
        if let ms = maxPacketLifeTime { return .maxLifetime(ms: UInt32(ms)) }
        return .reliable
    }

    /// The channel type of its DCEP open message (RFC 8832 §5.1).
    var channelType: DCEPChannelType {
        let reliability: DCEPChannelType.Reliability = switch self.reliability {
        case .reliable: .reliable
        case .maxRetransmits(let n): .maxRetransmits(n)
        case .maxLifetime(let ms): .maxPacketLifeTime(ms)
        }
        return DCEPChannelType(ordered: ordered, reliability: reliability)
    }

    /// Sends `message` (W3C `send`): queued in order; ``bufferedAmount`` grows until SCTP takes it.
    /// - Throws: ``DataChannelError/notOpen(label:state:)`` unless `open` (a channel we made
    ///   is `connecting` until the peer acknowledges it: wait for its `open` event),
    ///   ``DataChannelError/tooLarge(label:bytes:limit:)`` over the peer's max-message-size
    ///   (65,536 bytes on a data section in the legacy `a=sctpmap` form),
    ///   ``DataChannelError/bufferFull(label:bufferedAmount:)``.
    public func send(_ message: DataChannelMessage) throws(DataChannelError) {
        guard let transport = transport.value else { throw .notOpen(label: label, state: .closed) }
        let size = message.byteCount
        let limit = transport.remoteMaxMessageSize
        guard size <= limit else { throw .tooLarge(label: label, bytes: size, limit: limit) }
        try state.withLock { s throws(DataChannelError) in
            guard s.readyState == .open else { throw .notOpen(label: label, state: s.readyState) }
            guard s.bufferedAmount + size <= Self.maximumBufferedAmount else { throw .bufferFull(label: label, bufferedAmount: s.bufferedAmount) }
            s.bufferedAmount += size
        }
        transport.enqueue(message, on: self)
    }

    /// Closes the channel (W3C `close`): `closing`, what is buffered is sent, then the
    /// stream is reset (RFC 8831 §6.7) and the channel is `closed` when the peer's reset
    /// of its side comes. Idempotent.
    public func close() {
        transport.value?.close(self)
    }

    /// The `data-channel` stats object (W3C webrtc-stats §7.12).
    public func stats(timestamp: Double) -> DataChannelStats {
        state.withLock { s in
            DataChannelStats(id: "D\(serial)", timestamp: timestamp, label: label, protocol: self.protocol,
                             dataChannelIdentifier: s.id.map(Int.init), state: s.readyState.rawValue,
                             messagesSent: s.messagesSent, bytesSent: s.bytesSent,
                             messagesReceived: s.messagesReceived, bytesReceived: s.bytesReceived)
        }
    }
}

extension DataChannel: Equatable {
    /// The same channel object.
    public static func == (a: DataChannel, b: DataChannel) -> Bool { a === b }
}

/// What a connection's data channels report (``PeerConnectionEvent/dataChannel(_:)``), in
/// order, on the event-loop thread.
public enum DataChannelEvent: Sendable, Equatable {
    /// The peer opened a channel (W3C `datachannel` event; DCEP open received).
    case remoteOpened(DataChannel)
    /// The channel's ``DataChannel/readyState`` changed (`open`, `closing`, `closed`).
    case state(DataChannel, DataChannelState)
    /// A whole message arrived.
    case message(DataChannel, DataChannelMessage)
    /// ``DataChannel/bufferedAmount`` fell to ``DataChannel/bufferedAmountLowThreshold``.
    case bufferedAmountLow(DataChannel)
    /// Something from the peer could not be taken (malformed DCEP, a message over our
    /// max-message-size, an unknown PPID, text that is not UTF-8, a stream with no
    /// channel) or a send failed; `reason` names the value and the channel or stream,
    /// and says when the stream was reset for it (RFC 8832 §6: a DATA_CHANNEL_OPEN on a
    /// stream id of our parity or in use, a DCEP message of unknown type, a message on a
    /// stream with no channel; the channel on it, if any, closes). The association and
    /// the call go on. With no channel it may also name a data section of the peer's that
    /// could not be used (a malformed `a=sctpmap`, ``JSEP/dataSectionProblem(_:)``): that
    /// section is rejected, the rest of the description taken.
    case error(DataChannel?, String)
}
