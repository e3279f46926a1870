// SCTPFloor: libusrsctp's share of a data channel transfer — two associations in this process, each one's packets handed to the other in memory on the event loop (no DTLS, no UDP, no ICE), carrying the same messages; the loop thread's CPU time.
import EventLoop
import Foundation
import SCTP
import Synchronization

/// The floor the SCTP stack alone sets under `peer-bench data`: the messages of one round
/// sent reliable and ordered on one stream from association A to B, refilled on each
/// `writable`, every packet handed over in memory (RFC 8261's DTLS left out).
final class SCTPFloor: Sendable {
    /// What went wrong.
    struct Failure: Error, CustomStringConvertible {
        /// What did not happen in time, or libusrsctp's refusal.
        var description: String
    }

    private let loop = EventLoop.shared
    private let sides = Mutex<(a: SCTPAssociation?, b: SCTPAssociation?)>((nil, nil))
    private let wire = MemoryWire(loop: EventLoop.shared)
    /// Associations up, whether sending has begun, bytes B received, and the sender's
    /// place (loop thread).
    private let progress = Mutex<(up: Int, started: Bool, received: Int, sent: Int, offset: Int)>((0, false, 0, 0, 0))
    private let signal = ChangeSignal()
    private let message: [UInt8], messages: Int

    /// - Parameters: messages, size: what to send, `size` bytes each.
    init(messages: Int, size: Int) {
        self.messages = messages
        message = [UInt8](repeating: 0x5A, count: size)
    }

    /// Runs the transfer once the associations are up.
    /// - Returns: the event-loop thread's CPU seconds from the first send to the last byte.
    /// - Throws: ``Failure`` when libusrsctp refuses a socket or the transfer does not
    ///   end within 60 s.
    func measure() async throws -> Double {
        try loop.sync { () throws in
            let a = try SCTPAssociation(loop: loop, output: { [weak self] in self?.wire.carry($0, to: 1) },
                                        onEvent: { [weak self] in self?.event($0, atB: false) })
            let b = try SCTPAssociation(loop: loop, output: { [weak self] in self?.wire.carry($0, to: 0) },
                                        onEvent: { [weak self] in self?.event($0, atB: true) })
            sides.withLock { $0 = (a, b) }
            wire.connect({ a.receive($0) }, { b.receive($0) })
            try a.connect()
            try b.connect()
        }
        defer { loop.sync { sides.withLock { s in s.a?.close(); s.b?.close(); s = (nil, nil) } } }
        let up = await signal.wait(within: 10) { self.progress.withLock { $0.up } == 2 }
        guard up else {
            throw Failure(description: "SCTP floor: the two associations did not come up")
        }
        let total = messages * message.count
        let before = loop.sync { threadCPUSeconds() }
        _ = loop.async {
            self.progress.withLock { $0.started = true }
            self.fill()
        }
        let done = await signal.wait(within: 60) { self.progress.withLock { $0.received } >= total }
        guard done else {
            throw Failure(description: "SCTP floor: \(progress.withLock { $0.received }) of \(total) bytes arrived")
        }
        return loop.sync { threadCPUSeconds() } - before
    }

    private func event(_ e: SCTPAssociationEvent, atB: Bool) {
        switch e {
        case .up: progress.withLock { $0.up += 1 }
        case let .message(_, _, data) where atB: progress.withLock { $0.received += data.count }
        case .writable where !atB: fill()
        default: break
        }
        signal.signal()
    }

    /// Sends from A until libusrsctp's buffer is full or every message is taken.
    private func fill() {
        guard let a = sides.withLock({ $0.a }) else { return }
        while true {
            let (started, sent, offset) = progress.withLock { ($0.started, $0.sent, $0.offset) }
            guard started, sent < messages else { return }
            guard case let .accepted(n)? = try? a.send(message[offset...], streamId: 0, ppid: 53, unordered: false, reliability: .reliable), n > 0 else { return }
            progress.withLock { p in
                p.offset += n
                if p.offset == message.count { (p.sent, p.offset) = (p.sent + 1, 0) }
            }
        }
    }
}
