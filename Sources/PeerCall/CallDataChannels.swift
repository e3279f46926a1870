// CallDataChannels: a call's data channels (RFC 8831) — the offerer's channels, message events, --data-out, --data-echo, --data-burst and its count of numbered messages, --at sends, and the `control` channel of shared/PROTOCOL.md.
import Foundation
import PeerAgent

/// What a call knows of one link's data channels (the call's task only).
final class LinkData {
    /// The link's channels, ours and the peer's, until they close (then summarized and let go).
    var channels: [DataChannel] = []
    /// Numbered messages sent so far, by channel (`--data-burst`).
    var burstSent: [ObjectIdentifier: Int] = [:]
    /// The count of numbered messages received, by channel.
    var numbered: [ObjectIdentifier: NumberedCount] = [:]
    /// Control commands that renegotiate, answered when their answer is applied.
    var pendingControl: [(channel: DataChannel, action: String, id: Any?)] = []
}

/// What arrived of `--data-burst`'s numbered messages on one channel. Numbers are taken
/// below ``maximumNumber`` (the largest burst) and kept in a bitmap (at most 12.5 MB);
/// a higher number from the peer is counted in ``outOfRange`` only.
public struct NumberedCount: Sendable, Equatable {
    /// Distinct numbers received, repeats, numbers that came after a higher one, numbers
    /// at or above ``maximumNumber``.
    public var received = 0, duplicates = 0, outOfOrder = 0, outOfRange = 0
    /// The highest number seen (below ``maximumNumber``).
    public var highest: UInt64?
    /// When the first and the last arrived (seconds, monotonic).
    public var firstAt: Double?, lastAt: Double?
    /// One bit per number seen.
    var seen: [UInt64] = []
    /// One more than the largest number counted (`--data-burst`'s largest count).
    public static let maximumNumber: UInt64 = 100_000_000

    /// Numbers below the highest that never came.
    public var missing: Int { highest.map { Int($0) + 1 - received } ?? 0 }

    /// The first `limit` runs of numbers below the highest that never came, as closed
    /// ranges (`first...last`), lowest first: where a loss sits in the burst.
    public func gaps(limit: Int = 8) -> [ClosedRange<UInt64>] {
        guard let h = highest, missing > 0 else { return [] }
        var runs: [ClosedRange<UInt64>] = [], start: UInt64?
        var n: UInt64 = 0
        while n <= h {
            let word = Int(n / 64)
            // Whole words of 64 seen (outside a gap) or 64 missing (inside one) at a time.
            if n % 64 == 0, n + 63 <= h, seen[word] == (start == nil ? .max : 0) {
                n += 64
                continue
            }
            let isSeen = seen[word] & (UInt64(1) << (n % 64)) != 0
            if !isSeen, start == nil { start = n }
            if isSeen, let s = start {
                runs.append(s...(n - 1))
                start = nil
                if runs.count == limit { break }
            }
            n += 1
        }
        return runs
    }

    mutating func take(_ n: UInt64, at time: Double) {
        guard n < Self.maximumNumber else { outOfRange += 1; return }
        if firstAt == nil { firstAt = time }
        lastAt = time
        let word = Int(n / 64), bit = UInt64(1) << (n % 64)
        if word >= seen.count { seen += [UInt64](repeating: 0, count: word + 1 - seen.count) }
        guard seen[word] & bit == 0 else { duplicates += 1; return }
        seen[word] |= bit
        received += 1
        if let h = highest, n < h { outOfOrder += 1 } else { highest = n }
    }
}

extension CallRun {
    /// Most bytes a burst leaves buffered before it waits for `bufferedamountlow`, and
    /// that low-water mark.
    static let burstHighWater = 1 << 20, burstLowWater = 256 << 10

    /// Creates the call's channels on a new link: all of `--data-channel` when we offer,
    /// the negotiated ones (with an id) in either role.
    func openDataChannels(_ link: CallLink) throws {
        for spec in options.dataChannels where link.offerer || spec.options.negotiated {
            link.data.channels.append(try link.pc.createDataChannel(spec.label, options: spec.options))
        }
    }

    /// The peer came back with a new certificate (``PeerAgent/DtlsRestart``): the old SCTP
    /// association's channels closed (their summaries went out as each closed); on the new
    /// one the side whose offer began it makes the `--data-channel` channels again, as the
    /// offerer does at the start (the peer's new connection, answering, makes none), and
    /// both make the negotiated ones (with an id) — so either side's channels come back once.
    func reopenDataChannels(_ link: CallLink, offeredByUs: Bool) {
        for spec in options.dataChannels where offeredByUs || spec.options.negotiated {
            do { link.data.channels.append(try link.pc.createDataChannel(spec.label, options: spec.options)) } catch {
                onEvent(.dataError(peer: link.peer, label: spec.label, reason: "cannot open it again on the new association: \(error)"))
            }
        }
    }

    /// A data channel event of `link`'s connection.
    func dataChannelEvent(_ event: DataChannelEvent, on link: CallLink) async -> CallResult? {
        switch event {
        case let .remoteOpened(ch):
            link.data.channels.append(ch)
            onEvent(.dataChannel(peer: link.peer, label: ch.label, id: ch.id.map(Int.init), state: "datachannel", detail: describe(ch)))
        case let .state(ch, state):
            onEvent(.dataChannel(peer: link.peer, label: ch.label, id: ch.id.map(Int.init), state: state.rawValue, detail: nil))
            if state == .open { pumpBurst(ch, on: link) }
            if state == .closed { summarizeClosed(ch, on: link) }
        case let .message(ch, message):
            return await received(message, on: ch, link: link)
        case let .bufferedAmountLow(ch):
            pumpBurst(ch, on: link)
        case let .error(ch, reason):
            onEvent(.dataError(peer: link.peer, label: ch?.label, reason: reason))
        }
        return nil
    }

    private func describe(_ ch: DataChannel) -> String {
        var parts = [ch.ordered ? "ordered" : "unordered"]
        if let n = ch.maxRetransmits { parts.append("maxRetransmits \(n)") }
        if let ms = ch.maxPacketLifeTime { parts.append("maxPacketLifeTime \(ms) ms") }
        if !ch.protocol.isEmpty { parts.append("protocol \(ch.protocol)") }
        return parts.joined(separator: ", ")
    }

    private func received(_ message: DataChannelMessage, on ch: DataChannel, link: CallLink) async -> CallResult? {
        dataLog?.write(peer: link.peer, direction: "in", label: ch.label, message: message)
        if case .binary(let bytes) = message, let n = DataBurst.number(bytes) {
            link.data.numbered[ObjectIdentifier(ch), default: NumberedCount()].take(n, at: ProcessInfo.processInfo.systemUptime)
        } else {
            onEvent(.dataMessage(peer: link.peer, label: ch.label, message: message))
        }
        if ch.label == "control" { return await control(message, on: ch, link: link) }
        if options.dataEcho { send(message, on: ch, link: link, origin: "echo") }
        return nil
    }

    /// Sends `message` on `ch`, logged; a refusal is reported as a `dataError`.
    @discardableResult
    func send(_ message: DataChannelMessage, on ch: DataChannel, link: CallLink, origin: String) -> Bool {
        do {
            try ch.send(message)
            dataLog?.write(peer: link.peer, direction: "out", label: ch.label, message: message)
            return true
        } catch {
            onEvent(.dataError(peer: link.peer, label: ch.label, reason: "\(origin): \(error)"))
            return false
        }
    }

    /// `--at SECONDS:send:…` or the `send` control command: the message on every open
    /// channel labelled so (or, for `close`, those channels closed); reported as a `send` result.
    func sendData(_ request: DataSend, origin: String) {
        let targets = links.values.sorted { $0.peer < $1.peer }.flatMap { link in
            link.data.channels.filter { $0.label == request.label && $0.readyState == .open }.map { (link, $0) }
        }
        guard !targets.isEmpty else {
            onEvent(.dataSendResult(label: request.label, ok: false, detail: "no open channel labelled \"\(request.label)\"", origin: origin))
            return
        }
        guard let message = request.message else {
            for (_, ch) in targets { ch.close() }
            onEvent(.dataSendResult(label: request.label, ok: true, detail: "closing \(targets.count) channel\(targets.count == 1 ? "" : "s")", origin: origin))
            return
        }
        let sent = targets.filter { link, ch in send(message, on: ch, link: link, origin: origin) }.count
        onEvent(.dataSendResult(label: request.label, ok: sent == targets.count,
                                detail: sent == targets.count ? nil : "sent on \(sent) of \(targets.count) channels", origin: origin))
    }

    /// Sends `--data-burst`'s numbered messages on `ch` until its buffer holds
    /// ``burstHighWater`` bytes; `bufferedamountlow` brings it back.
    private func pumpBurst(_ ch: DataChannel, on link: CallLink) {
        guard let burst = options.dataBursts.first(where: { $0.label == ch.label }), ch.readyState == .open else { return }
        let key = ObjectIdentifier(ch)
        var sent = link.data.burstSent[key] ?? 0
        guard sent < burst.count else { return }
        ch.bufferedAmountLowThreshold = Self.burstLowWater
        while sent < burst.count, ch.bufferedAmount < Self.burstHighWater {
            let message = DataChannelMessage.binary(burst.message(sent))
            do {
                try ch.send(message)
                dataLog?.write(peer: link.peer, direction: "out", label: ch.label, message: message)
            } catch {
                if case .bufferFull = error { break }
                onEvent(.dataError(peer: link.peer, label: ch.label, reason: "--data-burst stopped after \(sent) messages: \(error)"))
                sent = burst.count
                break
            }
            sent += 1
        }
        link.data.burstSent[key] = sent
    }

    /// The `dataSummary` events of `link`'s channels (at its close): counts, and for
    /// numbered messages what arrived of them.
    func summarizeData(_ link: CallLink) {
        for ch in link.data.channels { summarize(ch, on: link) }
    }

    /// A channel that closed mid-call: its summary now, and the call lets go of it (a peer
    /// that opens and closes channels all call long grows nothing here).
    private func summarizeClosed(_ ch: DataChannel, on link: CallLink) {
        guard link.data.channels.contains(where: { $0 === ch }) else { return }
        summarize(ch, on: link)
        link.data.channels.removeAll { $0 === ch }
        link.data.numbered[ObjectIdentifier(ch)] = nil
        link.data.burstSent[ObjectIdentifier(ch)] = nil
    }

    private func summarize(_ ch: DataChannel, on link: CallLink) {
        let s = ch.stats(timestamp: 0)
        let n = link.data.numbered[ObjectIdentifier(ch)]
        onEvent(.dataSummary(peer: link.peer, label: ch.label, messagesSent: s.messagesSent, bytesSent: s.bytesSent,
                             messagesReceived: s.messagesReceived, bytesReceived: s.bytesReceived, numbered: n))
    }
}

/// `--data-out`: every message as one JSON line (`time` ms since the Unix epoch, `peer`,
/// `direction` in/out, `label`, `text` or `binary` as base64, `bytes`), each line written
/// whole so the file is valid JSON lines at any moment.
final class DataLog {
    private let handle: FileHandle
    let path: String

    /// Opens (truncates) `path`.
    /// - Throws: the file system's error.
    init(path: String) throws {
        guard FileManager.default.createFile(atPath: path, contents: nil) else {
            throw CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: path])
        }
        handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        self.path = path
    }

    deinit { try? handle.close() }

    /// Appends one message (the line made by hand: JSONSerialization took most of a
    /// busy channel's CPU).
    func write(peer: String, direction: String, label: String, message: DataChannelMessage) {
        let time = (Date().timeIntervalSince1970 * 10_000_000).rounded() / 10_000
        var line = "{\"bytes\":\(message.byteCount),\"direction\":\(Self.quoted(direction)),\"label\":\(Self.quoted(label)),"
            + "\"peer\":\(Self.quoted(peer)),"
        switch message {
        case .text(let t): line += "\"text\":\(Self.quoted(t)),"
        case .binary(let b): line += "\"binary\":\"\(Data(b).base64EncodedString())\","
        }
        line += "\"time\":\(time)}\n"
        try? handle.write(contentsOf: Data(line.utf8))
    }

    /// `text` as a JSON string (RFC 8259 §7): quote, backslash and control characters escaped.
    static func quoted(_ text: String) -> String {
        var out = "\""
        out.reserveCapacity(text.utf8.count + 2)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F {
                    out += "\\u" + String(repeating: "0", count: 4 - String(scalar.value, radix: 16).count) + String(scalar.value, radix: 16)
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }
}
