// DCEP: the Data Channel Establishment Protocol's DATA_CHANNEL_OPEN and DATA_CHANNEL_ACK messages (RFC 8832 §5) and the payload protocol identifiers of data channels (RFC 8831 §8).
import Bytes

/// SCTP payload protocol identifiers of WebRTC data channels (RFC 8831 §8, RFC 8832 §8.1).
public enum DataChannelPPID: UInt32, Sendable {
    /// A DCEP message (RFC 8832).
    case dcep = 50
    /// A UTF-8 string message.
    case string = 51
    /// A binary message.
    case binary = 53
    /// An empty string message (sent as one byte, RFC 8831 §6.6).
    case stringEmpty = 56
    /// An empty binary message (sent as one byte).
    case binaryEmpty = 57
    /// Deprecated partial string and binary messages (RFC 8831 §8); still received.
    case stringPartial = 54, binaryPartial = 52
}

/// A data channel's reliability and order as DCEP carries it (RFC 8832 §5.1).
public struct DCEPChannelType: Sendable, Equatable {
    /// Delivered in order (the type's high bit clear).
    public var ordered: Bool
    /// Reliable; or given up after `maxRetransmits` retransmissions; or after
    /// `maxPacketLifeTime` ms (the open message's reliability parameter).
    public enum Reliability: Sendable, Equatable {
        /// Retransmitted until acknowledged (channel type 0x00).
        case reliable
        /// Given up after this many retransmissions (0x01).
        case maxRetransmits(UInt32)
        /// Given up this many ms after it was sent (0x02).
        case maxPacketLifeTime(UInt32)
    }
    /// The reliability and its parameter.
    public var reliability: Reliability

    /// A type from its fields.
    public init(ordered: Bool, reliability: Reliability) {
        self.ordered = ordered
        self.reliability = reliability
    }
}

/// A DCEP message (RFC 8832 §5).
public enum DCEPMessage: Sendable, Equatable {
    /// DATA_CHANNEL_OPEN (type 0x03): the channel's type, priority (RFC 8831 §6.4),
    /// label and sub-protocol (UTF-8, RFC 8832 §5.1).
    case open(type: DCEPChannelType, priority: UInt16, label: String, protocol: String)
    /// DATA_CHANNEL_ACK (type 0x02).
    case ack

    /// The message type bytes of DATA_CHANNEL_OPEN and DATA_CHANNEL_ACK (RFC 8832 §8.2.1).
    public static let openType: UInt8 = 0x03, ackType: UInt8 = 0x02

    /// Parses one DCEP message (the whole payload of an SCTP message with PPID 50).
    /// - Throws: ``DCEPError`` naming the field and offset: an empty or unknown message
    ///   type, a channel type RFC 8832 does not define, a truncated message, a label or
    ///   protocol that is not UTF-8, or bytes after the protocol.
    public init(parsing bytes: [UInt8]) throws(DCEPError) {
        var r = ByteReader(bytes)
        do {
            let type = try r.u8("message type")
            switch type {
            case Self.ackType:
                guard r.remaining == 0 else { throw DCEPError.trailing(offset: 1, count: bytes.count - 1) }
                self = .ack
            case Self.openType:
                let channelType = try r.u8("channel type")
                let priority = try r.u16("priority")
                let parameter = try r.u32("reliability parameter")
                let labelLength = Int(try r.u16("label length"))
                let protocolLength = Int(try r.u16("protocol length"))
                let labelAt = r.offset
                let label = try r.take(labelLength, "label")
                let protocolAt = r.offset
                let proto = try r.take(protocolLength, "protocol")
                guard r.remaining == 0 else { throw DCEPError.trailing(offset: r.offset, count: bytes.count - r.offset) }
                let ordered = channelType & 0x80 == 0
                let reliability: DCEPChannelType.Reliability
                switch channelType & 0x7F {
                case 0x00: reliability = .reliable
                case 0x01: reliability = .maxRetransmits(parameter)
                case 0x02: reliability = .maxPacketLifeTime(parameter)
                default: throw DCEPError.unknownChannelType(channelType)
                }
                guard let labelText = String(validating: label, as: UTF8.self) else { throw DCEPError.notUTF8(field: "label", offset: labelAt) }
                guard let protoText = String(validating: proto, as: UTF8.self) else { throw DCEPError.notUTF8(field: "protocol", offset: protocolAt) }
                self = .open(type: DCEPChannelType(ordered: ordered, reliability: reliability), priority: priority,
                             label: labelText, protocol: protoText)
            default:
                throw DCEPError.unknownMessageType(type)
            }
        } catch let error as DCEPError {
            throw error
        } catch {
            throw DCEPError.truncated("\(error)")
        }
    }

    /// The message's bytes (RFC 8832 §5.1, §5.2; lengths in network order). A label or
    /// protocol longer than 65,535 bytes is cut there (W3C refuses those before).
    public var serialized: [UInt8] {
        switch self {
        case .ack: return [Self.ackType]
        case let .open(type, priority, label, proto):
            var w = ByteWriter()
            w.u8(Self.openType)
            let (kind, parameter): (UInt8, UInt32) = switch type.reliability {
            case .reliable: (0x00, 0)
            case .maxRetransmits(let n): (0x01, n)
            case .maxPacketLifeTime(let ms): (0x02, ms)
            }
            w.u8(kind | (type.ordered ? 0 : 0x80))
            w.u16(priority)
            w.u32(parameter)
            let l = Array(label.utf8.prefix(65_535)), p = Array(proto.utf8.prefix(65_535))
            w.u16(UInt16(l.count))
            w.u16(UInt16(p.count))
            w.append(l)
            w.append(p)
            return w.bytes
        }
    }
}

/// Why a DCEP message did not parse (RFC 8832 §5).
public enum DCEPError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The message ended inside a field (the reader's message names it and the offset).
    case truncated(String)
    /// The first byte is neither DATA_CHANNEL_OPEN (0x03) nor DATA_CHANNEL_ACK (0x02).
    case unknownMessageType(UInt8)
    /// The channel type byte is not one of RFC 8832 §5.1's six.
    case unknownChannelType(UInt8)
    /// The label or protocol at `offset` is not UTF-8.
    case notUTF8(field: String, offset: Int)
    /// `count` bytes follow the message at `offset`.
    case trailing(offset: Int, count: Int)

    /// A sentence naming the field and where it is.
    public var description: String {
        switch self {
        case .truncated(let what): "DCEP: truncated message: \(what)"
        case .unknownMessageType(let t): "DCEP: unknown message type 0x\(String(t, radix: 16)) (expected 0x03 DATA_CHANNEL_OPEN or 0x02 DATA_CHANNEL_ACK)"
        case .unknownChannelType(let t): "DCEP: unknown channel type 0x\(String(t, radix: 16)) in DATA_CHANNEL_OPEN (byte 1)"
        case let .notUTF8(field, offset): "DCEP: the \(field) at byte \(offset) of DATA_CHANNEL_OPEN is not UTF-8"
        case let .trailing(offset, count): "DCEP: \(count) bytes after the message end at byte \(offset)"
        }
    }
}
