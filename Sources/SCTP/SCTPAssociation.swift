// SCTPAssociation: one SCTP association (RFC 9260) from libusrsctp in user-land AF_CONN mode, its packets carried by a DTLS association (RFC 8261), all on the event-loop thread; the only file that touches libusrsctp.
import CUsrsctp
import EventLoop
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// How a message may be given up on (RFC 3758 PR-SCTP, RFC 7496 policies).
public enum SCTPReliability: Sendable, Equatable {
    /// Retransmitted until acknowledged.
    case reliable
    /// Given up after this many retransmissions (0: sent once).
    case maxRetransmits(UInt32)
    /// Given up once this many ms passed since it was sent.
    case maxLifetime(ms: UInt32)
}

/// What an ``SCTPAssociation`` reports, on the event-loop thread.
public enum SCTPAssociationEvent: Sendable, Equatable {
    /// The association is up (`SCTP_COMM_UP`): streams each way.
    case up(inboundStreams: Int, outboundStreams: Int)
    /// A whole message on stream `streamId` with payload protocol `ppid` (host order).
    case message(streamId: UInt16, ppid: UInt32, data: [UInt8])
    /// A message larger than ``SCTPAssociation/maximumReceiveMessageSize`` was dropped
    /// (its first `bytes` bytes counted); the association goes on.
    case messageTooLarge(streamId: UInt16, ppid: UInt32, bytes: Int)
    /// The peer reset these outgoing streams of its own (RFC 6525 §5.2.2): their incoming
    /// side is closed here.
    case incomingStreamsReset([UInt16])
    /// Our reset of these outgoing streams completed.
    case outgoingStreamsReset([UInt16])
    /// The peer denied our reset of these outgoing streams, or it failed (RFC 6525 §5.1,
    /// result "Denied" or "Error"): `denied` tells which.
    case outgoingResetFailed([UInt16], denied: Bool)
    /// The send buffer has room again after a send was refused for lack of it.
    case writable
    /// The association ended (lost, shut down, or never established): why.
    case down(String)
}

/// Errors of ``SCTPAssociation``.
public enum SCTPError: Error, Equatable, Sendable, CustomStringConvertible {
    /// libusrsctp call `call` failed with `errno` `code`.
    case usrsctp(call: String, code: Int32)
    /// The stack runs on another event loop's thread (one per process).
    case otherLoop
    /// A message of `bytes` bytes is larger than the peer takes (`limit`, its
    /// `a=max-message-size`, RFC 8841 §6).
    case messageTooLarge(bytes: Int, limit: Int)
    /// The association is closed.
    case closed

    /// A sentence naming the call or the value.
    public var description: String {
        switch self {
        case let .usrsctp(call, code): "SCTP: \(call) failed: \(String(cString: strerror(code))) (errno \(code))"
        case .otherLoop: "SCTP: libusrsctp runs on one event loop per process; this association asked for another"
        case let .messageTooLarge(bytes, limit): "SCTP: a message of \(bytes) bytes is over the peer's max-message-size \(limit)"
        case .closed: "SCTP: the association is closed"
        }
    }
}

/// One SCTP association over a DTLS association (RFC 8261), as WebRTC data channels use
/// it (RFC 8831 §5): libusrsctp in AF_CONN mode, one-to-one socket, both sides connecting
/// (simultaneous open), stream reset enabled (RFC 6525), explicit end of record so a
/// message larger than the send buffer goes in pieces, PR-SCTP per message, no Nagle.
///
/// Packets: ``receive(_:)`` takes each SCTP packet from DTLS; `output` gets each packet
/// to send (at most ``mtu`` bytes). Everything runs on the event-loop thread: call every
/// method there. libusrsctp runs without its timer and socket threads
/// (`usrsctp_init_nothreads`), its timers advanced by a 10 ms loop timer while any
/// association exists; its one remaining thread, `SCTP iterator`, walks the endpoints
/// once after an address is registered and calls none of our callbacks.
///
/// Events are collected while libusrsctp runs and handed to `onEvent` once it has
/// returned: after ``receive(_:)`` and the timers at once, after the calls a user makes
/// (``send(_:streamId:ppid:unordered:reliability:)``, ``resetOutgoing(_:)``, ``connect()``)
/// from a later turn of the loop — so no event handler ever runs inside such a call (a
/// handler that sends from within a send would see its queue change under it), and a
/// handler may call back into the association.
// @unchecked: the libusrsctp socket and all state are confined to the event-loop thread (checked in each method).
public final class SCTPAssociation: @unchecked Sendable {
    /// The SCTP packet size, bytes: the DTLS record around it still fits a 1200-byte datagram.
    public static let mtu: UInt32 = 1120
    /// Send and receive buffer sizes, bytes.
    public static let bufferSize: Int32 = 1 << 20
    /// Streams each way we ask for (stream ids 0–1023).
    public static let streams: UInt16 = 1024

    /// Our and the peer's SCTP ports (`a=sctp-port`, RFC 8841 §5; 5000 by default).
    public let localPort: UInt16, remotePort: UInt16
    /// Larger incoming messages are dropped and reported (our `a=max-message-size`).
    public let maximumReceiveMessageSize: Int
    private let loop: EventLoop
    private let output: @Sendable ([UInt8]) -> Void
    private let onEvent: @Sendable (SCTPAssociationEvent) -> Void
    /// The id libusrsctp knows us by (its AF_CONN address; ``Stack/registry``).
    private let id: UInt
    private var socket: OpaquePointer?
    private var pending: [SCTPAssociationEvent] = []
    private var delivering = false, deliveryQueued = false
    /// A message being received in pieces (partial delivery), by stream.
    private var partial: [UInt16: (ppid: UInt32, data: [UInt8], dropped: Int)] = [:]
    private var isUp = false
    /// The peer's stream resets held back until their data has arrived (a libusrsctp fault).
    private var gate = ResetRequestGate()
    private var releaseQueued = false

    /// Makes the socket (nothing is sent before ``connect()``).
    /// - Parameters:
    ///   - localPort, remotePort: the SCTP ports of the two `a=sctp-port` lines.
    ///   - maximumReceiveMessageSize: our `a=max-message-size`, bytes.
    ///   - loop: the event loop (libusrsctp keeps to the first one used in a process).
    ///   - output: sends one SCTP packet over DTLS (loop thread).
    ///   - onEvent: the association's events (loop thread).
    /// - Throws: ``SCTPError/otherLoop``; ``SCTPError/usrsctp(call:code:)`` when the
    ///   socket cannot be made or set up. Call on the loop thread.
    public init(localPort: UInt16 = 5000, remotePort: UInt16 = 5000, maximumReceiveMessageSize: Int = 262_144,
                loop: EventLoop, output: @escaping @Sendable ([UInt8]) -> Void,
                onEvent: @escaping @Sendable (SCTPAssociationEvent) -> Void) throws(SCTPError) {
        precondition(loop.isCurrent, "SCTPAssociation is confined to its event loop's thread")
        self.localPort = localPort
        self.remotePort = remotePort
        self.maximumReceiveMessageSize = maximumReceiveMessageSize
        self.loop = loop
        self.output = output
        self.onEvent = onEvent
        guard Stack.start(on: loop) else { throw .otherLoop }
        id = Stack.register()
        Stack.associations[id] = Weak(self)
        usrsctp_register_address(UnsafeMutableRawPointer(bitPattern: id))
        do {
            try open()
        } catch {
            shutDown()
            throw error
        }
    }

    deinit {
        // Released off the loop (a connection dropped without close()): libusrsctp and the
        // registry are the loop's, so the socket is closed there.
        guard !loop.isCurrent else { shutDown(); return }
        let (sock, id) = (socket.map(SendableSocket.init), id)
        loop.async {
            if let sock { usrsctp_close(sock.pointer) }
            guard Stack.associations.removeValue(forKey: id) != nil else { return }
            usrsctp_deregister_address(UnsafeMutableRawPointer(bitPattern: id))
        }
    }

    private func open() throws(SCTPError) {
        guard let sock = usrsctp_socket(Int32(AF_CONN), Int32(SOCK_STREAM.rawValue), Int32(IPPROTO_SCTP), Stack.receiveCallback,
                                        Stack.sendCallback, UInt32(Self.bufferSize / 2),
                                        UnsafeMutableRawPointer(bitPattern: id)) else {
            throw .usrsctp(call: "usrsctp_socket", code: peer_sctp_errno())
        }
        socket = sock
        guard usrsctp_set_non_blocking(sock, 1) == 0 else { throw .usrsctp(call: "usrsctp_set_non_blocking", code: peer_sctp_errno()) }
        var linger = Glibc.linger(l_onoff: 1, l_linger: 0)  // close aborts at once (the DTLS association ends anyway)
        try set(SOL_SOCKET, SO_LINGER, &linger, "SO_LINGER")
        var size = Self.bufferSize
        try set(SOL_SOCKET, SO_SNDBUF, &size, "SO_SNDBUF")
        try set(SOL_SOCKET, SO_RCVBUF, &size, "SO_RCVBUF")
        var reset = sctp_assoc_value(assoc_id: sctp_assoc_t(SCTP_ALL_ASSOC), assoc_value: UInt32(SCTP_ENABLE_RESET_STREAM_REQ))
        try set(IPPROTO_SCTP, SCTP_ENABLE_STREAM_RESET, &reset, "SCTP_ENABLE_STREAM_RESET")
        var on: Int32 = 1
        try set(IPPROTO_SCTP, SCTP_NODELAY, &on, "SCTP_NODELAY")
        try set(IPPROTO_SCTP, SCTP_EXPLICIT_EOR, &on, "SCTP_EXPLICIT_EOR")
        try set(IPPROTO_SCTP, SCTP_RECVRCVINFO, &on, "SCTP_RECVRCVINFO")
        var initmsg = sctp_initmsg(sinit_num_ostreams: Self.streams, sinit_max_instreams: Self.streams,
                                   sinit_max_attempts: 0, sinit_max_init_timeo: 0)
        try set(IPPROTO_SCTP, SCTP_INITMSG, &initmsg, "SCTP_INITMSG")
        for type in [SCTP_ASSOC_CHANGE, SCTP_SENDER_DRY_EVENT, SCTP_STREAM_RESET_EVENT, SCTP_SEND_FAILED_EVENT] {
            var event = sctp_event(se_assoc_id: sctp_assoc_t(SCTP_ALL_ASSOC), se_type: UInt16(type), se_on: 1)
            try set(IPPROTO_SCTP, SCTP_EVENT, &event, "SCTP_EVENT(\(type))")
        }
        var local = address(port: localPort)
        let bound = withUnsafeMutablePointer(to: &local) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { usrsctp_bind(sock, $0, socklen_t(MemoryLayout<sockaddr_conn>.size)) }
        }
        guard bound == 0 else { throw .usrsctp(call: "usrsctp_bind(port \(localPort))", code: peer_sctp_errno()) }
    }

    /// Starts the association (sends INIT; the peer does too, RFC 8841 §9.3).
    /// - Throws: ``SCTPError/usrsctp(call:code:)`` when libusrsctp refuses; ``SCTPError/closed``.
    public func connect() throws(SCTPError) {
        precondition(loop.isCurrent)
        guard let sock = socket else { throw .closed }
        var remote = address(port: remotePort)
        let result = withUnsafeMutablePointer(to: &remote) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { usrsctp_connect(sock, $0, socklen_t(MemoryLayout<sockaddr_conn>.size)) }
        }
        let code = peer_sctp_errno()
        deliverLater()
        guard result == 0 || code == EINPROGRESS else { throw .usrsctp(call: "usrsctp_connect(port \(remotePort))", code: code) }
        // Path MTU discovery off, the packet size fixed (the DTLS sink cannot tell it).
        var params = sctp_paddrparams()
        withUnsafeMutableBytes(of: &params.spp_address) { raw in
            withUnsafeBytes(of: &remote) { raw.copyMemory(from: $0) }
        }
        params.spp_assoc_id = sctp_assoc_t(SCTP_ALL_ASSOC)
        params.spp_pathmtu = Self.mtu
        params.spp_flags = UInt32(SPP_PMTUD_DISABLE)
        try set(IPPROTO_SCTP, SCTP_PEER_ADDR_PARAMS, &params, "SCTP_PEER_ADDR_PARAMS")
    }

    /// Feeds one SCTP packet that arrived over DTLS.
    public func receive(_ packet: [UInt8]) {
        precondition(loop.isCurrent)
        guard socket != nil, !packet.isEmpty else { return }
        if let packet = gate.incoming(packet, now: Stack.nowMs()) { input(packet) }
        deliver()
    }

    /// Hands one packet to libusrsctp.
    private func input(_ packet: [UInt8]) {
        packet.withUnsafeBytes { usrsctp_conninput(UnsafeMutableRawPointer(bitPattern: id), $0.baseAddress, $0.count, 0) }
    }

    /// Hands on the peer's stream resets whose data has now arrived, from the next turn of
    /// the loop (the SACK that showed it left from inside libusrsctp).
    private func releaseLater() {
        guard !releaseQueued else { return }
        releaseQueued = true
        loop.async { [weak self] in
            guard let self else { return }
            self.releaseQueued = false
            guard self.socket != nil else { return }
            for packet in self.gate.releasable() { self.input(packet) }
            self.deliver()
        }
    }

    /// What a send did.
    public enum SendOutcome: Sendable, Equatable {
        /// libusrsctp took this many bytes (all of them, or the first part when its send
        /// buffer filled: send the rest after ``SCTPAssociationEvent/writable``).
        case accepted(Int)
        /// The send buffer is full: nothing taken; try again after ``SCTPAssociationEvent/writable``.
        case full
    }

    /// Sends `data` (the rest of a message: the end of record is set, RFC 6458 §8.1.26) on
    /// stream `streamId` with payload protocol `ppid`.
    /// - Throws: ``SCTPError/usrsctp(call:code:)`` for a refusal other than a full buffer
    ///   (e.g. a stream that does not exist); ``SCTPError/closed``.
    public func send(_ data: ArraySlice<UInt8>, streamId: UInt16, ppid: UInt32, unordered: Bool,
                     reliability: SCTPReliability) throws(SCTPError) -> SendOutcome {
        precondition(loop.isCurrent)
        guard let sock = socket else { throw .closed }
        var spa = sctp_sendv_spa()
        spa.sendv_flags = UInt32(SCTP_SEND_SNDINFO_VALID)
        spa.sendv_sndinfo.snd_sid = streamId
        spa.sendv_sndinfo.snd_ppid = ppid.bigEndian
        spa.sendv_sndinfo.snd_flags = UInt16(SCTP_EOR) | (unordered ? UInt16(SCTP_UNORDERED) : 0)
        switch reliability {
        case .reliable: break
        case .maxRetransmits(let n):
            spa.sendv_flags |= UInt32(SCTP_SEND_PRINFO_VALID)
            spa.sendv_prinfo = sctp_prinfo(pr_policy: UInt16(SCTP_PR_SCTP_RTX), pr_value: n)
        case .maxLifetime(let ms):
            spa.sendv_flags |= UInt32(SCTP_SEND_PRINFO_VALID)
            spa.sendv_prinfo = sctp_prinfo(pr_policy: UInt16(SCTP_PR_SCTP_TTL), pr_value: ms)
        }
        let sent = data.withUnsafeBytes { bytes in
            usrsctp_sendv(sock, bytes.baseAddress, bytes.count, nil, 0, &spa,
                          socklen_t(MemoryLayout<sctp_sendv_spa>.size), UInt32(SCTP_SENDV_SPA), 0)
        }
        let code = peer_sctp_errno()
        deliverLater()
        if sent >= 0 { return .accepted(sent) }
        if code == EWOULDBLOCK || code == EAGAIN { return .full }
        throw .usrsctp(call: "usrsctp_sendv(stream \(streamId), \(data.count) bytes)", code: code)
    }

    /// Resets our outgoing side of `streams` (RFC 6525 §5.1.2), as closing a data channel
    /// does (RFC 8831 §6.7); ``SCTPAssociationEvent/outgoingStreamsReset(_:)`` follows.
    /// - Throws: ``SCTPError/usrsctp(call:code:)``; ``SCTPError/closed``.
    public func resetOutgoing(_ streams: [UInt16]) throws(SCTPError) {
        precondition(loop.isCurrent)
        guard let sock = socket else { throw .closed }
        guard !streams.isEmpty, streams.count <= Int(UInt16.max) else { return }
        let result = streams.withUnsafeBufferPointer { peer_sctp_reset_outgoing(sock, $0.baseAddress, UInt16($0.count)) }
        let code = peer_sctp_errno()
        deliverLater()
        guard result == 0 else { throw .usrsctp(call: "SCTP_RESET_STREAMS \(streams)", code: code) }
    }

    /// What libusrsctp reports of the association (`SCTP_STATUS`), for `transport` stats.
    public struct Status: Sendable, Equatable {
        /// The peer's receive window and our congestion window, bytes.
        public var peerWindow: Int, congestionWindow: Int
        /// Smoothed round-trip time, ms.
        public var smoothedRoundTripTimeMs: Int
        /// Data chunks sent and not yet acknowledged, and waiting to be sent.
        public var unacknowledged: Int, pending: Int
        /// The packet size in use, bytes.
        public var mtu: Int
        /// The retransmission timeout now, ms.
        public var rtoMs: Int
    }

    /// The association's status, nil before it is up or after close.
    public var status: Status? {
        precondition(loop.isCurrent)
        guard let sock = socket, isUp else { return nil }
        var status = sctp_status()
        var length = socklen_t(MemoryLayout<sctp_status>.size)
        guard usrsctp_getsockopt(sock, Int32(IPPROTO_SCTP), Int32(SCTP_STATUS), &status, &length) == 0 else { return nil }
        return Status(peerWindow: Int(status.sstat_rwnd), congestionWindow: Int(status.sstat_primary.spinfo_cwnd),
                      smoothedRoundTripTimeMs: Int(status.sstat_primary.spinfo_srtt),
                      unacknowledged: Int(status.sstat_unackdata), pending: Int(status.sstat_penddata),
                      mtu: Int(status.sstat_primary.spinfo_mtu), rtoMs: Int(status.sstat_primary.spinfo_rto))
    }

    /// Closes the socket (an ABORT goes to the peer) and lets go of libusrsctp. Idempotent.
    public func close() {
        precondition(loop.isCurrent)
        shutDown()
    }

    // MARK: Loop-thread internals

    private func shutDown() {
        if let sock = socket {
            socket = nil
            usrsctp_close(sock)
        }
        guard Stack.associations.removeValue(forKey: id) != nil else { return }
        usrsctp_deregister_address(UnsafeMutableRawPointer(bitPattern: id))
        pending.removeAll()
    }

    private func set<T: BitwiseCopyable>(_ level: some BinaryInteger, _ option: some BinaryInteger, _ value: inout T, _ name: String) throws(SCTPError) {
        guard let sock = socket else { throw .closed }
        let result = withUnsafeBytes(of: &value) { raw in
            usrsctp_setsockopt(sock, Int32(truncatingIfNeeded: level), Int32(truncatingIfNeeded: option), raw.baseAddress,
                               socklen_t(raw.count))
        }
        guard result == 0 else { throw .usrsctp(call: "usrsctp_setsockopt(\(name))", code: peer_sctp_errno()) }
    }

    private func address(port: UInt16) -> sockaddr_conn {
        sockaddr_conn(sconn_family: UInt16(AF_CONN), sconn_port: port.bigEndian, sconn_addr: UnsafeMutableRawPointer(bitPattern: id))
    }

    /// Hands the collected events on from the next turn of the loop (after a user's call).
    private func deliverLater() {
        guard !pending.isEmpty, !deliveryQueued else { return }
        deliveryQueued = true
        loop.async { [weak self] in
            guard let self else { return }
            self.deliveryQueued = false
            self.deliver()
        }
    }

    /// Hands the collected events on, once libusrsctp has returned (not re-entered).
    private func deliver() {
        guard !delivering else { return }
        delivering = true
        defer { delivering = false }
        while !pending.isEmpty {
            let events = pending
            pending.removeAll()
            for event in events { onEvent(event) }
        }
    }

    /// Data or a notification from libusrsctp (loop thread, inside one of its calls).
    fileprivate func received(_ bytes: UnsafeRawBufferPointer, info: sctp_rcvinfo, flags: Int32) {
        if flags & Int32(PEER_SCTP_MSG_NOTIFICATION) != 0 {
            notification(bytes)
            return
        }
        let sid = info.rcv_sid, ppid = UInt32(bigEndian: info.rcv_ppid)
        var piece = partial.removeValue(forKey: sid) ?? (ppid, [], 0)
        if piece.dropped > 0 || piece.data.count + bytes.count > maximumReceiveMessageSize {
            piece.dropped += piece.data.count + bytes.count
            piece.data = []
        } else {
            piece.data.append(contentsOf: bytes)
        }
        guard flags & Int32(PEER_SCTP_MSG_EOR) != 0 else {
            partial[sid] = piece
            return
        }
        if piece.dropped > 0 {
            pending.append(.messageTooLarge(streamId: sid, ppid: piece.ppid, bytes: piece.dropped))
        } else {
            pending.append(.message(streamId: sid, ppid: piece.ppid, data: piece.data))
        }
    }

    /// An SCTP notification (RFC 6458 §6.1): its type, flags and length, then the rest.
    private func notification(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count >= 8 else { return }
        let type = bytes.loadUnaligned(fromByteOffset: 0, as: UInt16.self)
        let flags = bytes.loadUnaligned(fromByteOffset: 2, as: UInt16.self)
        switch Int32(type) {
        case SCTP_ASSOC_CHANGE:
            guard bytes.count >= MemoryLayout<sctp_assoc_change>.size else { return }
            let change = bytes.loadUnaligned(as: sctp_assoc_change.self)
            switch Int32(change.sac_state) {
            case SCTP_COMM_UP, SCTP_RESTART:
                isUp = true
                pending.append(.up(inboundStreams: Int(change.sac_inbound_streams), outboundStreams: Int(change.sac_outbound_streams)))
            case SCTP_COMM_LOST: pending.append(.down("the association was lost (error \(change.sac_error))"))
            case SCTP_SHUTDOWN_COMP: pending.append(.down("the peer shut the association down"))
            case SCTP_CANT_STR_ASSOC: pending.append(.down("the association could not be established"))
            default: break
            }
        case SCTP_STREAM_RESET_EVENT:
            let header = MemoryLayout<sctp_stream_reset_event>.size
            guard bytes.count >= header else { return }
            let length = min(Int(bytes.loadUnaligned(fromByteOffset: 4, as: UInt32.self)), bytes.count)
            let streams = stride(from: header, to: length - 1, by: 2).map { bytes.loadUnaligned(fromByteOffset: $0, as: UInt16.self) }
            // An empty list means every stream (RFC 6525 §4.1; the receiver maps it).
            guard Int32(flags) & (SCTP_STREAM_RESET_DENIED | SCTP_STREAM_RESET_FAILED) == 0 else {
                if Int32(flags) & SCTP_STREAM_RESET_OUTGOING_SSN != 0 {
                    pending.append(.outgoingResetFailed(streams, denied: Int32(flags) & SCTP_STREAM_RESET_DENIED != 0))
                }
                return
            }
            if Int32(flags) & SCTP_STREAM_RESET_INCOMING_SSN != 0 {
                if streams.isEmpty { partial = [:] } else { for sid in streams { partial[sid] = nil } }  // empty: every stream
                pending.append(.incomingStreamsReset(streams))
            }
            if Int32(flags) & SCTP_STREAM_RESET_OUTGOING_SSN != 0 { pending.append(.outgoingStreamsReset(streams)) }
        case SCTP_SENDER_DRY_EVENT:
            pending.append(.writable)
        default:
            break
        }
    }

    /// The send buffer has room (libusrsctp's send callback).
    fileprivate func bufferHasRoom() { pending.append(.writable) }

    /// A packet libusrsctp wants sent: its CRC32c filled in (RFC 9260 §6.8; libusrsctp
    /// leaves it to us with the offload on), and its SACK noted by the gate.
    fileprivate func packetOut(_ bytes: UnsafeRawBufferPointer) {
        var packet = Array(bytes)
        if gate.outgoing(packet) { releaseLater() }
        if packet.count >= 12 {
            packet.withUnsafeMutableBytes { raw in
                // Computed with the field zero, stored as libusrsctp itself stores it.
                raw.storeBytes(of: 0, toByteOffset: 8, as: UInt32.self)
                raw.storeBytes(of: Self.checksum(UnsafeRawBufferPointer(raw)), toByteOffset: 8, as: UInt32.self)
            }
        }
        output(packet)
    }
}

extension SCTPAssociation {
    /// The CRC32c of `bytes` (RFC 9260 §6.8, Appendix A) as the checksum field holds it
    /// when stored in host order: the CPU's crc32 instruction where there is one (about
    /// 0.8 µs less per 1,100-byte packet than libusrsctp's table code: `peer-bench data`'s
    /// SCTP floor went from 0.111 to 0.086 s for 45,000 packets), else `usrsctp_crc32c`.
    static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        peer_sctp_crc32c(bytes.baseAddress, bytes.count)
    }

    /// The same, computed by libusrsctp (the reference ``checksum(_:)`` is tested against).
    static func libusrsctpChecksum(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        peer_sctp_crc32c_usrsctp(bytes.baseAddress, bytes.count)
    }
}

/// A libusrsctp socket handed to the loop thread to be closed there.
private struct SendableSocket: @unchecked Sendable {  // @unchecked: only the loop thread uses it
    let pointer: OpaquePointer
}

/// A weak reference held by the registry.
private struct Weak {
    weak var value: SCTPAssociation?
    init(_ value: SCTPAssociation) { self.value = value }
}

/// libusrsctp's one stack per process: started once on the first association's loop
/// (no timer thread; its `SCTP iterator` thread starts with it), its timers advanced on
/// that loop every 10 ms while associations exist, and the associations by the ids
/// libusrsctp knows them by.
private enum Stack {
    /// The loop the stack runs on (set once), and the last id handed out.
    nonisolated(unsafe) static var loop: EventLoop?
    nonisolated(unsafe) static var lastId: UInt = 0
    /// The associations by id (loop thread only).
    nonisolated(unsafe) static var associations: [UInt: Weak] = [:]
    /// The timer source and when the timers were last advanced (monotonic ms).
    nonisolated(unsafe) static var ticker: UInt32 = 0
    nonisolated(unsafe) static var lastTickMs: Int64 = 0
    /// How often libusrsctp's timers are advanced, ms.
    static let tickMs: UInt32 = 10
    private static let startLock = Mutex(false)

    /// Starts libusrsctp on `loop` the first time; false when it runs on another loop.
    static func start(on loop: EventLoop) -> Bool {
        let first = startLock.withLock { started -> Bool in
            defer { started = true }
            return !started
        }
        if first {
            self.loop = loop
            usrsctp_init_nothreads(0, outputCallback, nil)
            usrsctp_sysctl_set_sctp_ecn_enable(0)  // as browsers: no ECN over DTLS
            usrsctp_sysctl_set_sctp_blackhole(2)  // no ABORT for stray packets
            // CRC32c: not checked on input (DTLS authenticates every record, RFC 8261 §3;
            // the gate hands on packets it shortened), computed on output in packetOut.
            usrsctp_enable_crc32c_offload()
            // Recovery in ms, not seconds, on the short paths data channels run on (ICE and
            // DTLS have already crossed it): an RTO of at least 100 ms (RFC 9260 §16's 1 s
            // minimum is for unknown internet paths; a longer round trip still sets the RTO),
            // 200 ms before the first measurement, at most 3 s when backing off. The initial
            // value matters most: libusrsctp takes its first RTT sample from the first INIT
            // sent, so an INIT or COOKIE lost and resent after RFC 9260's 1 s made srtt about
            // 0.7 s and the RTO 3 s on a 1 ms path, and at 10 % loss a third of bulk
            // transfers stalled for seconds at a time (traced: SCTP_STATUS srtt 524–881 ms
            // on one side, 1 ms on the other); with 200 ms, 14 of 14 ran through.
            usrsctp_sysctl_set_sctp_rto_min_default(100)
            usrsctp_sysctl_set_sctp_rto_initial_default(200)
            usrsctp_sysctl_set_sctp_rto_max_default(3000)
        }
        return self.loop === loop
    }

    /// A fresh id (never 0: libusrsctp treats the address as a pointer) and the ticker running.
    static func register() -> UInt {
        lastId += 1
        if ticker == 0 { arm() }
        return lastId
    }

    private static func arm() {
        lastTickMs = nowMs()
        guard let loop else { return }
        ticker = loop.after(milliseconds: tickMs) { tick() }
    }

    private static func tick() {
        ticker = 0
        let now = nowMs()
        usrsctp_handle_timers(UInt32(clamping: max(0, now - lastTickMs)))
        lastTickMs = now
        for case let association? in associations.values.map(\.value) { association.deliverAfterTimers() }
        associations = associations.filter { $0.value.value != nil }
        if !associations.isEmpty { arm() }
    }

    static func nowMs() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec) / 1_000_000
    }

    static func association(_ pointer: UnsafeMutableRawPointer?) -> SCTPAssociation? {
        guard let pointer else { return nil }
        return associations[UInt(bitPattern: pointer)]?.value
    }

    static let outputCallback: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?, Int, UInt8, UInt8) -> Int32 = {
        address, buffer, length, _, _ in
        guard let buffer, length > 0, let association = Stack.association(address) else { return 0 }
        association.packetOut(UnsafeRawBufferPointer(start: buffer, count: length))
        return 0
    }

    static let receiveCallback: @convention(c) (OpaquePointer?, sctp_sockstore, UnsafeMutableRawPointer?, Int, sctp_rcvinfo,
                                                 Int32, UnsafeMutableRawPointer?) -> Int32 = {
        _, _, data, length, info, flags, ulp in
        defer { free(data) }  // libusrsctp hands the buffer over
        guard let data, let association = Stack.association(ulp) else { return 1 }
        association.received(UnsafeRawBufferPointer(start: data, count: length), info: info, flags: flags)
        return 1
    }

    static let sendCallback: @convention(c) (OpaquePointer?, UInt32, UnsafeMutableRawPointer?) -> Int32 = { _, _, ulp in
        Stack.association(ulp)?.bufferHasRoom()
        return 0
    }
}

extension SCTPAssociation {
    /// Events the timers raised (retransmissions, heartbeats, a lost association).
    /// After libusrsctp's timers: held stream resets past their deadline go on, then the
    /// events are handed on.
    fileprivate func deliverAfterTimers() {
        if socket != nil, gate.heldCount > 0 {
            for packet in gate.overdue(now: Stack.nowMs()) { input(packet) }
        }
        deliver()
    }
}
