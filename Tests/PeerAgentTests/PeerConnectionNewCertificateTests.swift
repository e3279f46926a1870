// A remote that comes back with a new certificate (RFC 8829 §5.11, RFC 8842 §5): connection A keeps its PeerConnection while B is replaced by a fresh one (a new certificate, as a restarted process has), which an ICE restart brings in — a new DTLS association in the roles the new negotiation gives, new SRTP keys, a new SCTP association; and a new fingerprint without an ICE restart is still refused.
import DTLS
import Foundation
import Media
import SDP
import Synchronization
import Testing
import TestSupport
@testable import PeerAgent

/// Connection A and a B that can be replaced: candidates go between A and the current B
/// (trickle, host candidates on 127.0.0.1), each side's events are kept with their time.
/// "Killing" B drops everything A receives while B closes (its close_notify and BYE never
/// reach A, as when a process is killed), then lets A receive again.
final class ReplaceablePair: @unchecked Sendable {
    private let lock = NSLock()
    private var bs: [PeerConnection] = []
    private var store: [String: [(PeerConnectionEvent, Date)]] = [:]
    /// While set, A drops every datagram it receives (before DTLS: STUN went to libnice).
    let deaf = Flag()
    final class Flag: Sendable {
        let value = Atomic<Bool>(false)
    }
    let a: PeerConnection
    let dir: String
    /// Called with each of A's events on the loop thread, before it is kept (a test's handler).
    var onEventA: (@Sendable (PeerConnectionEvent) -> Void)? {
        get { lock.withLock { handlerA } }
        set { lock.withLock { handlerA = newValue } }
    }
    private var handlerA: (@Sendable (PeerConnectionEvent) -> Void)?

    /// A with audio and video (its recording of B's video in `dir/a.ivf`, decoded) and, with
    /// `data`, a data channel `chat` made before the first offer; then the first B.
    /// `configureA` edits A's configuration (a test hook).
    init(label: String, data: Bool = true, configureA: (inout PeerConnectionConfiguration) -> Void = { _ in }) throws {
        dir = TestServices.temporaryDirectory(label)
        var c = Self.configuration()
        let deaf = self.deaf
        c.inboundDropFilter = { _ in deaf.value.load(ordering: .relaxed) }
        configureA(&c)
        let box = Box()
        a = try PeerConnection(configuration: c) { event in box.pair?.recordA(event) }
        box.pair = self
        a.addTransceiver(.audio, audio: try ToneSource(frequency: 440), receive: ReceiveOptions(oggPath: dir + "/a.ogg", decode: false))
        a.addTransceiver(.video, video: try PatternSource(width: 160, height: 120, frameRate: 30),
                         receive: ReceiveOptions(ivfPath: dir + "/a.ivf", decode: true))
        if data { try a.createDataChannel("chat") }
        _ = try newB()
    }

    private final class Box: @unchecked Sendable { weak var pair: ReplaceablePair? }

    static func configuration() -> PeerConnectionConfiguration {
        var c = PeerConnectionConfiguration()
        c.localAddresses = ["127.0.0.1"]
        c.tcpCandidates = false
        return c
    }

    /// The current B.
    var b: PeerConnection { lock.withLock { bs[bs.count - 1] } }

    /// A fresh B (its own certificate, as a new process makes) with audio and video,
    /// becoming the current one; `tracks` adds something before the offer (a data channel).
    @discardableResult
    func newB(tracks: (PeerConnection) throws -> Void = { _ in }) throws -> PeerConnection {
        var c = Self.configuration()
        c.certificate = try Certificate()
        let index = lock.withLock { bs.count }
        let side = "b\(index + 1)"
        let box = Box()
        box.pair = self
        let pc = try PeerConnection(configuration: c) { event in box.pair?.recordB(event, side: side) }
        pc.addTransceiver(.audio, audio: try ToneSource(frequency: 660), receive: ReceiveOptions(decode: false))
        pc.addTransceiver(.video, video: try PatternSource(width: 160, height: 120, frameRate: 30), receive: ReceiveOptions(decode: true))
        try tracks(pc)
        lock.withLock { bs.append(pc) }
        return pc
    }

    private func recordA(_ event: PeerConnectionEvent) {
        if case let .localCandidate(c) = event { try? b.addIceCandidate(c) }
        onEventA?(event)
        lock.withLock { store["a", default: []].append((event, Date())) }
    }

    private func recordB(_ event: PeerConnectionEvent, side: String) {
        let current = lock.withLock { "b\(bs.count)" == side }
        if case let .localCandidate(c) = event, current { try? a.addIceCandidate(c) }
        lock.withLock { store[side, default: []].append((event, Date())) }
    }

    /// The events `side` ("a", "b1", "b2") reported, with when.
    func events(_ side: String) -> [(PeerConnectionEvent, Date)] { lock.withLock { store[side] ?? [] } }

    /// The data channel events of `side`.
    func channelEvents(_ side: String) -> [DataChannelEvent] {
        events(side).compactMap { if case .dataChannel(let e) = $0.0 { e } else { nil } }
    }

    /// The text messages `side` received.
    func texts(_ side: String) -> [String] {
        channelEvents(side).compactMap { if case let .message(_, .text(t)) = $0 { t } else { nil } }
    }

    /// The channel the peer opened on `side` with `label`, the last one.
    func remoteChannel(_ side: String, _ label: String) -> DataChannel? {
        channelEvents(side).compactMap { if case let .remoteOpened(ch) = $0, ch.label == label { ch } else { nil } }.last
    }

    /// B "dies" as a killed process does: nothing it sends on its way out reaches A.
    func killB() async {
        deaf.value.store(true, ordering: .relaxed)
        b.close()
        try? await Task.sleep(nanoseconds: 200_000_000)
        deaf.value.store(false, ordering: .relaxed)
    }

    func close() {
        a.close()
        for pc in lock.withLock({ bs }) { pc.close() }
    }

    /// The number of `event`s `side` reported.
    func count(_ side: String, _ event: PeerConnectionEvent) -> Int { events(side).filter { $0.0 == event }.count }

    /// A's video receiver and B's (current) video receiver.
    var videoA: RtpTransceiver? { a.allTransceivers.first { $0.kind == .video } }
    var videoB: RtpTransceiver? { b.allTransceivers.first { $0.kind == .video } }
}

@Suite struct PeerConnectionNewCertificateTests {
    static func fingerprint(_ pc: PeerConnection) throws -> String {
        let d = try SessionDescription(parsing: #require(pc.localDescription).sdp)
        let f = try #require(Reoffer.fingerprints(of: d).first)
        return "\(f.algorithm) \(f.value)"
    }

    static func restarts(_ pair: ReplaceablePair, _ side: String) -> [DtlsRestart] {
        pair.events(side).compactMap { if case let .dtlsRestarted(r) = $0.0 { r } else { nil } }
    }

    /// B's process restarts (a new certificate): A restarts ICE and B's fresh connection
    /// answers. A begins a new DTLS association — the event names B's new fingerprint and
    /// the one before, a second DTLS `connected` follows, the connection is `connected`
    /// again; the old data channel is reported closed, a new one opens on the new SCTP
    /// association and carries messages both ways; B's new video (new SSRC, sequence
    /// numbers and timestamps) goes on into A's receiver and its IVF, which decodes across
    /// the change; A's video reaches the new B, which decodes it at once (a key frame).
    @Test func anAnswerWithANewCertificateToOurIceRestartStartsANewAssociation() async throws {
        let pair = try ReplaceablePair(label: "newcert-answer")
        defer { pair.close(); try? FileManager.default.removeItem(atPath: pair.dir) }
        try PeerConnectionRenegotiationTests.renegotiate(pair.a, pair.b)
        #expect(await eventually(within: 10) { pair.a.connectionState == .connected && pair.b.connectionState == .connected })
        let chat = try #require(pair.a.sctp.channels.first { $0.label == "chat" })
        #expect(await eventually(within: 5) { chat.readyState == .open && pair.remoteChannel("b1", "chat")?.readyState == .open })
        try chat.send(.text("before"))
        #expect(await eventually(within: 3) { pair.texts("b1") == ["before"] })
        let va = try #require(pair.videoA)
        #expect(await eventually(within: 5) { (va.receiver.snapshot().framesWritten ?? 0) > 20 })
        let oldPrint = try Self.fingerprint(pair.b)
        let oldSSRC = va.receiver.snapshot().ssrc

        await pair.killB()
        let b2 = try pair.newB()
        let writtenBefore = va.receiver.snapshot().framesWritten ?? 0
        let started = Date()
        pair.a.restartIce()
        let (offer, answer) = try PeerConnectionRenegotiationTests.renegotiate(pair.a, b2)
        #expect(Reoffer.fingerprints(of: answer).first.map { "\($0.algorithm) \($0.value)" } != oldPrint)
        #expect(offer.media.first?.iceUfrag != nil)
        let restart = try #require(Self.restarts(pair, "a").first)
        #expect(restart.previousFingerprint == oldPrint)
        #expect(restart.fingerprint == (try Self.fingerprint(b2)))
        #expect(restart.generation == 1 && restart.offeredByUs)
        #expect(restart.role == "server", "B answered a=setup:active: A is the DTLS server")
        // The old channel closes, reported; A's connection goes through connecting to connected.
        #expect(await eventually(within: 3) { chat.readyState == .closed })
        #expect(pair.channelEvents("a").contains { if case let .state(ch, .closed) = $0 { ch === chat } else { false } })
        #expect(await eventually(within: 5) { pair.count("a", .dtlsState(.connected)) == 2 })
        #expect(await eventually(within: 3) { pair.a.connectionState == .connected && b2.connectionState == .connected })
        let states = pair.events("a").compactMap { if case let .connectionState(s, _) = $0.0 { s } else { nil } }
        #expect(states.suffix(2) == [.connecting, .connected], "\(states)")
        print("new certificate (answer): DTLS connected again \(Int(Date().timeIntervalSince(started) * 1000)) ms after the restart began")
        // Media: B2's video into A's same receiver and file; A's video decoded by B2.
        #expect(await eventually(within: 3) { (va.receiver.snapshot().framesWritten ?? 0) > writtenBefore + 15 })
        let vb = try #require(pair.videoB)
        #expect(await eventually(within: 3) { (vb.receiver.snapshot().framesDecoded ?? 0) > 10 })
        let after = va.receiver.snapshot()
        #expect(after.ssrc != oldSSRC && after.ssrc == answer.media.first { $0.kind == .video }?.ssrcs.first?.ssrc)
        // Data: a new channel on the new association, both ways.
        let chat2 = try pair.a.createDataChannel("chat2")
        #expect(await eventually(within: 5) { chat2.readyState == .open && pair.remoteChannel("b2", "chat2")?.readyState == .open })
        try chat2.send(.text("after"))
        try #require(pair.remoteChannel("b2", "chat2")).send(.text("back"))
        #expect(await eventually(within: 3) { pair.texts("b2") == ["after"] && pair.texts("a") == ["back"] })
        // The markers of B2's frames (numbered from 0 again) count as a new sender's, not as repeats.
        let e2e = try #require(va.receiver.endToEndSnapshot(inboundId: "IT"))
        #expect(e2e.framesRepeated == 0 && e2e.framesWithMarker > writtenBefore + 15, "\(e2e)")
        // The recording decodes across the change: every frame A wrote.
        let written = va.receiver.snapshot().framesWritten ?? 0
        pair.a.close()
        #expect(try await CallChecks.decodedFrames(pair.dir + "/a.ivf") == written)
        #expect(written > writtenBefore + 15)
    }

    /// The new B offers (as a restarted offerer does): its offer restarts ICE and carries
    /// a new fingerprint and `a=setup:actpass`; A answers in the same connection with a new
    /// association — where A was the DTLS server (it offered first, B answered active), A now
    /// answers active and is the client (RFC 8842 §5.3: a new association's roles are
    /// chosen anew); media flows both ways again.
    @Test func anOfferWithANewCertificateAndAnIceRestartIsAnsweredWithNewRoles() async throws {
        let pair = try ReplaceablePair(label: "newcert-offer")
        defer { pair.close(); try? FileManager.default.removeItem(atPath: pair.dir) }
        try PeerConnectionRenegotiationTests.renegotiate(pair.a, pair.b)
        #expect(await eventually(within: 10) { pair.a.connectionState == .connected && pair.b.connectionState == .connected })
        #expect(pair.a.getStats().transports.first?.dtlsRole == "server")
        let va = try #require(pair.videoA)
        #expect(await eventually(within: 5) { (va.receiver.snapshot().framesWritten ?? 0) > 10 })
        await pair.killB()
        let b2 = try pair.newB { pc in try pc.createDataChannel("chat") }
        let writtenBefore = va.receiver.snapshot().framesWritten ?? 0
        let (offer, answer) = try PeerConnectionRenegotiationTests.renegotiate(b2, pair.a)
        #expect(offer.media.map(\.mid) == ["0", "1", "2"])
        #expect(answer.media.first?.setup == .active)
        let restart = try #require(Self.restarts(pair, "a").first)
        #expect(restart.role == "client" && !restart.offeredByUs)
        #expect(await eventually(within: 5) { pair.a.connectionState == .connected && b2.connectionState == .connected })
        #expect(pair.a.getStats().transports.first?.dtlsRole == "client")
        #expect(await eventually(within: 3) { (va.receiver.snapshot().framesWritten ?? 0) > writtenBefore + 15 })
        let vb = try #require(pair.videoB)
        #expect(await eventually(within: 3) { (vb.receiver.snapshot().framesDecoded ?? 0) > 10 })
        // B2's channel (it offered the data section) opens on A.
        #expect(await eventually(within: 5) { pair.remoteChannel("a", "chat")?.readyState == .open })
    }

    /// The new association checks the peer's certificate against the new fingerprint: an
    /// answer whose fingerprint is not the new B's certificate's (a third one) fails the
    /// handshake (bad_certificate) and the connection, naming the fingerprints.
    @Test func theNewCertificateIsCheckedAgainstTheNewFingerprint() async throws {
        let pair = try ReplaceablePair(label: "newcert-mismatch", data: false)
        defer { pair.close(); try? FileManager.default.removeItem(atPath: pair.dir) }
        try PeerConnectionRenegotiationTests.renegotiate(pair.a, pair.b)
        #expect(await eventually(within: 10) { pair.a.connectionState == .connected && pair.b.connectionState == .connected })
        await pair.killB()
        let b2 = try pair.newB()
        let third = try Certificate().fingerprint()
        pair.a.restartIce()
        let offer = try pair.a.createOffer()
        try pair.a.setLocalDescription(offer)
        try b2.setRemoteDescription(offer)
        let answer = try b2.createAnswer()
        try b2.setLocalDescription(answer)
        var edited = try SessionDescription(parsing: answer.sdp)
        for i in edited.media.indices { edited.media[i].fingerprints = [Fingerprint(algorithm: "sha-256", value: third)] }
        edited.fingerprints = []
        try pair.a.setRemoteDescription(SessionDescriptionInit(type: .answer, sdp: edited.serialized()))
        #expect(Self.restarts(pair, "a").first?.fingerprint == "sha-256 \(third)")
        #expect(await eventually(within: 5) { pair.a.connectionState == .failed })
        let reason = pair.a.failureReason ?? ""
        #expect(reason.hasPrefix("DTLS failed") && reason.contains(third.replacingOccurrences(of: ":", with: "")), "\(reason)")
    }

    /// Holds A's transport renewal (``PeerConnectionConfiguration/beforeTransportRenewal``)
    /// until A's loop thread has selected the pair of the restarted ICE (3 s at most).
    final class RenewalHold: @unchecked Sendable {
        weak var pc: PeerConnection?
        let sawPair = Atomic<Bool>(false)

        func waitForPair() {
            guard let pc else { return }
            let deadline = Date().addingTimeInterval(3)
            while Date() < deadline {
                if pc.state.withLock({ $0.pairSelectedAfterRestarts >= $0.iceRestarts }) {
                    sawPair.store(true, ordering: .relaxed)
                    return
                }
                usleep(5_000)
            }
        }
    }

    /// The restarted ICE selects its pair while A is still renewing its transports for the
    /// new association (a test hook holds the renewal until A's loop thread has selected
    /// it): the new handshake starts all the same once the renewal is done — a second DTLS
    /// `connected`, the connection `connected` again — instead of being dropped and the
    /// call failing at the DTLS deadline.
    @Test func aPairSelectedWhileTheTransportsAreRenewedStillStartsTheHandshake() async throws {
        let hold = RenewalHold()
        let pair = try ReplaceablePair(label: "newcert-race", data: false) { c in
            c.beforeTransportRenewal = { hold.waitForPair() }
        }
        hold.pc = pair.a
        defer { pair.close(); try? FileManager.default.removeItem(atPath: pair.dir) }
        try PeerConnectionRenegotiationTests.renegotiate(pair.a, pair.b)
        #expect(await eventually(within: 10) { pair.a.connectionState == .connected && pair.b.connectionState == .connected })
        await pair.killB()
        let b2 = try pair.newB()
        pair.a.restartIce()
        try PeerConnectionRenegotiationTests.renegotiate(pair.a, b2)
        let sawPair = hold.sawPair.load(ordering: .relaxed)
        #expect(sawPair, "the restarted ICE selected its pair during the renewal")
        #expect(await eventually(within: 5) { pair.count("a", .dtlsState(.connected)) == 2 })
        #expect(await eventually(within: 3) { pair.a.connectionState == .connected && b2.connectionState == .connected })
        let va = try #require(pair.videoA)
        #expect(await PeerConnectionRenegotiationTests.grows({ va.receiver.snapshot().framesReceived ?? 0 }), "B2's media arrives")
    }

    /// A closes while it renews its transports for the new association (a test hook closes
    /// it there, as another thread may): `closed` stays final — the data channel transport
    /// and the DTLS-SRTP transport stay `closed` (not `new` again for an association that
    /// never starts), the channel is closed, and no `dtlsRestarted` follows the close.
    @Test func aCloseDuringTheRenewalStaysClosed() async throws {
        let hold = RenewalHold()
        let pair = try ReplaceablePair(label: "newcert-close") { c in
            c.beforeTransportRenewal = { hold.pc?.close() }
        }
        hold.pc = pair.a
        defer { pair.close(); try? FileManager.default.removeItem(atPath: pair.dir) }
        try PeerConnectionRenegotiationTests.renegotiate(pair.a, pair.b)
        #expect(await eventually(within: 10) { pair.a.connectionState == .connected && pair.b.connectionState == .connected })
        let chat = try #require(pair.a.sctp.channels.first { $0.label == "chat" })
        #expect(await eventually(within: 5) { chat.readyState == .open })
        await pair.killB()
        let b2 = try pair.newB()
        pair.a.restartIce()
        try PeerConnectionRenegotiationTests.renegotiate(pair.a, b2)
        let transport = try #require(pair.a.state.withLock { $0.transport })
        #expect(await eventually(within: 3) { transport.state == .closed })
        try await Task.sleep(nanoseconds: 200_000_000)
        #expect(pair.a.connectionState == .closed && pair.a.sctp.state == .closed && transport.state == .closed)
        #expect(chat.readyState == .closed)
        #expect(Self.restarts(pair, "a").isEmpty, "nothing reported after the close")
    }

    /// The channel a test's `dtlsRestarted` handler made (on the loop thread).
    final class MadeChannel: Sendable {
        let channel = Mutex<DataChannel?>(nil)
    }

    /// A data channel made in the `dtlsRestarted` event's handler (as a call reopens its
    /// channels there) is one of the new association's: the renewal, which closes the old
    /// association's channels, leaves it alone, and it opens once the new SCTP association
    /// is up — B2 gets it, and it carries a message each way.
    @Test func aChannelMadeWhenTheRestartIsReportedOpensOnTheNewAssociation() async throws {
        let pair = try ReplaceablePair(label: "newcert-handler")
        defer { pair.close(); try? FileManager.default.removeItem(atPath: pair.dir) }
        try PeerConnectionRenegotiationTests.renegotiate(pair.a, pair.b)
        #expect(await eventually(within: 10) { pair.a.connectionState == .connected && pair.b.connectionState == .connected })
        let chat = try #require(pair.a.sctp.channels.first { $0.label == "chat" })
        #expect(await eventually(within: 5) { chat.readyState == .open })
        let made = MadeChannel()
        let a = pair.a
        pair.onEventA = { event in
            guard case .dtlsRestarted = event else { return }
            made.channel.withLock { $0 = try? a.createDataChannel("again") }
        }
        await pair.killB()
        let b2 = try pair.newB()
        pair.a.restartIce()
        try PeerConnectionRenegotiationTests.renegotiate(pair.a, b2)
        #expect(await eventually(within: 3) { made.channel.withLock { $0 } != nil })
        let again = try #require(made.channel.withLock { $0 })
        #expect(await eventually(within: 3) { chat.readyState == .closed })
        #expect(await eventually(within: 5) { again.readyState == .open && pair.remoteChannel("b2", "again")?.readyState == .open },
                "made in the handler: \(again.readyState)")
        try again.send(.text("again"))
        try #require(pair.remoteChannel("b2", "again")).send(.text("back again"))
        #expect(await eventually(within: 3) { pair.texts("b2") == ["again"] && pair.texts("a") == ["back again"] })
    }

    /// A new fingerprint without an ICE restart stays refused, offer or answer, naming the
    /// line — the connection keeps its state and media; so is an answer with a new
    /// fingerprint and new credentials to an offer that did not restart ICE.
    @Test func aNewFingerprintWithoutAnIceRestartIsStillRefused() async throws {
        let pair = try ReplaceablePair(label: "newcert-refused", data: false)
        defer { pair.close(); try? FileManager.default.removeItem(atPath: pair.dir) }
        try PeerConnectionRenegotiationTests.renegotiate(pair.a, pair.b)
        #expect(await eventually(within: 10) { pair.a.connectionState == .connected && pair.b.connectionState == .connected })
        let remote = try SessionDescription(parsing: #require(pair.a.remoteDescription).sdp)
        let (ufrag, pwd) = (try #require(Reoffer.iceUfrag(of: remote)), try #require(remote.media.first?.icePwd))
        let b2 = try pair.newB()
        // B2's offer with B1's ICE credentials: a new fingerprint, no restart.
        let offer = try b2.createOffer()
        var edited = try SessionDescription(parsing: offer.sdp)
        for i in edited.media.indices { edited.media[i].iceUfrag = ufrag; edited.media[i].icePwd = pwd }
        #expect {
            try pair.a.setRemoteDescription(SessionDescriptionInit(type: .offer, sdp: edited.serialized()))
        } throws: { "\($0)".contains("changes the DTLS fingerprint") && "\($0)".contains("without an ICE restart") }
        #expect(pair.a.signalingState == .stable && pair.a.negotiationCount == 1)
        // An answer with a new certificate (and new credentials) to A's plain re-offer.
        let reoffer = try pair.a.createOffer()
        try pair.a.setLocalDescription(reoffer)
        try b2.setRemoteDescription(reoffer)
        let answer = try b2.createAnswer()
        #expect {
            try pair.a.setRemoteDescription(answer)
        } throws: { "\($0)".contains("changes the DTLS fingerprint") }
        #expect(pair.a.signalingState == .haveLocalOffer)
        try pair.a.rollback()
        #expect(Self.restarts(pair, "a").isEmpty)
        #expect(pair.count("a", .dtlsState(.connected)) == 1)
        let va = try #require(pair.videoA)
        #expect(await PeerConnectionRenegotiationTests.grows({ va.receiver.snapshot().framesReceived ?? 0 }), "B1's media goes on")
    }
}
