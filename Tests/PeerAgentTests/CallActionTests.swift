import Foundation
import Testing
import SDP
@testable import PeerCall

/// The controls of a running call (`--at`, `--control stdin`) and how an offer from the
/// peer of a call is told apart (`shared/PROTOCOL.md` "Renegotiation").
@Suite struct CallActionTests {
    @Test func scheduledActionsParse() throws {
        #expect(try ScheduledAction(parsing: "3:hold") == ScheduledAction(seconds: 3, action: .hold))
        #expect(try ScheduledAction(parsing: "4.5:video:off") == ScheduledAction(seconds: 4.5, action: .videoOff))
        #expect(try ScheduledAction(parsing: "0:ice-restart") == ScheduledAction(seconds: 0, action: .iceRestart))
        #expect(try ScheduledAction(parsing: "9:hangup").action == .hangup)
        for bad in ["hold", "3", "3:", "x:hold", "-1:hold", "86401:hold", "3:pause", "nan:hold", "3:video"] {
            do {
                _ = try ScheduledAction(parsing: bad)
                Issue.record("\(bad) accepted")
            } catch {
                #expect(error.option == "--at" && error.value == bad)
                #expect(error.description.contains("hold, unhold, ice-restart, video:off"))
            }
        }
    }

    @Test func controlCommandsParseWithTheirIds() throws {
        #expect(try ControlCommand(parsing: #"{"action":"hold"}"#) == ControlCommand(action: .hold, id: nil))
        let withId = try ControlCommand(parsing: #"{"action":"audio:off","id":7}"#)
        #expect(withId.action == .audioOff && withId.id == "7")
        #expect(try ControlCommand(parsing: #"{"id":"a","action":"unhold","extra":[1]}"#).id == "a")
    }

    /// A bad command that names an id keeps it, so its error event can be matched.
    @Test func aBadCommandKeepsItsId() {
        #expect(throws: ControlCommandError(reason: "unknown action \"fly\"; expected one of \(CallAction.names)", id: "7")) {
            try ControlCommand(parsing: #"{"action":"fly","id":7}"#)
        }
        #expect(throws: ControlCommandError(reason: #"no "action" string in "{"id":"x"}"; expected {"action":"hold"}"#, id: "x")) {
            try ControlCommand(parsing: #"{"id":"x"}"#)
        }
    }

    /// A track the peer adds gets its own file; mids that differ only in characters that
    /// cannot go in a file name still get different files.
    @Test func addedTracksGetFilesOfTheirOwn() {
        #expect(CallRun.addedTrackPath("/tmp/x/peer.ivf", mid: "2") == "/tmp/x/peer-mid2.ivf")
        let dot = CallRun.addedTrackPath("/tmp/peer.ogg", mid: "a.b"), dash = CallRun.addedTrackPath("/tmp/peer.ogg", mid: "a-b")
        #expect(dot.hasPrefix("/tmp/peer-mida_b-") && dot.hasSuffix(".ogg") && dot != dash, "\(dot) \(dash)")
    }

    @Test func badControlLinesNameWhatIsWrong() {
        let cases: [(String, String)] = [
            ("hold", "not JSON: \"hold\""),
            ("[1,2]", "not a JSON object: \"[1,2]\""),
            (#"{"act":"hold"}"#, "no \"action\" string"),
            (#"{"action":"fly"}"#, "unknown action \"fly\"; expected one of hold, unhold"),
            (#"{"action":"\u001b[31m"}"#, "unknown action \"\\u001b[31m\""),
            ("{\"action\":\"\u{1B}\"}", #"not JSON: "{"action":"\u001b"}""#),
        ]
        for (line, expected) in cases {
            do {
                _ = try ControlCommand(parsing: line)
                Issue.record("\(line) accepted")
            } catch {
                #expect(error.reason.contains(expected), "\(error.reason)")
            }
        }
        // Found by FuzzSignaling: NULs are quoted as \u0000, six characters each; the quote
        // is cut after 80 characters of its own.
        for long in [String(repeating: "x", count: 10_000), String(repeating: "\u{0}", count: 10_000)] {
            do { _ = try ControlCommand(parsing: long) } catch { #expect(error.reason.count < 120, "\(error.reason.count)") }
        }
    }

    // MARK: InCallOffer

    static func hex(_ byte: String) -> String { Array(repeating: byte, count: 32).joined(separator: ":") }
    static let printA = Fingerprint(algorithm: "sha-256", value: hex("AA"))
    static func offer(id: String, version: String, print: Fingerprint = printA) -> String {
        var d = SessionDescription(origin: Origin(sessionId: id, sessionVersion: version))
        var m = MediaDescription(kind: .audio, port: 9, proto: "UDP/TLS/RTP/SAVPF", formats: ["111"])
        m.mid = "0"
        m.fingerprints = [print]
        d.media = [m]
        return d.serialized()
    }

    @Test func offersFromThePeerOfACallAreToldApart() {
        let remote = (id: "77", version: UInt64(3))
        func classify(_ sdp: String, answered: String? = nil) -> InCallOffer {
            InCallOffer.classify(sdp, remote: remote, fingerprints: [Self.printA], answered: answered)
        }
        #expect(classify(Self.offer(id: "77", version: "4")) == .renegotiation)
        #expect(classify(Self.offer(id: "77", version: "3")) == .repeated)
        #expect(classify(Self.offer(id: "77", version: "2")) == .stale(latest: 3, offered: 2))
        #expect(classify(Self.offer(id: "77", version: "2"), answered: "77 2") == .repeated)
        // A new session id for every description (aiortc): the same fingerprint is the peer.
        #expect(classify(Self.offer(id: "90", version: "1")) == .renegotiation)
        #expect(classify(Self.offer(id: "90", version: "1", print: Fingerprint(algorithm: "SHA-256", value: Self.hex("aa")))) == .renegotiation)
        #expect(classify(Self.offer(id: "90", version: "1", print: Fingerprint(algorithm: "sha-256", value: Self.hex("CC")))) == .otherCaller)
        #expect(classify("v=0\r\n") == .otherCaller)
        // A version beyond 64 bits is the largest, not garbage.
        #expect(classify(Self.offer(id: "77", version: "99999999999999999999999")) == .renegotiation)
    }

    /// Another session with another fingerprint that restarts ICE (another ufrag than the
    /// peer's latest) may be the peer back with a new certificate; with the peer's ufrag,
    /// or none, it is another caller.
    @Test func anOfferWithANewCertificateAndAnIceRestartIsToldApart() throws {
        let remote = (id: "77", version: UInt64(3))
        let printC = Fingerprint(algorithm: "sha-256", value: Self.hex("CC"))
        func offer(ufrag: String?, print: Fingerprint) throws -> String {
            var d = try SessionDescription(parsing: Self.offer(id: "90", version: "1", print: print))
            d.media[0].iceUfrag = ufrag
            d.media[0].icePwd = ufrag.map { $0 + "passwordpasswordpass" }
            return d.serialized()
        }
        func classify(_ sdp: String) -> InCallOffer {
            InCallOffer.classify(sdp, remote: remote, fingerprints: [Self.printA], ufrag: "old1", answered: nil)
        }
        #expect(classify(try offer(ufrag: "new1", print: printC)) == .newCertificate)
        #expect(classify(try offer(ufrag: "old1", print: printC)) == .otherCaller, "no ICE restart")
        #expect(classify(try offer(ufrag: nil, print: printC)) == .otherCaller)
        #expect(classify(try offer(ufrag: "new1", print: Self.printA)) == .renegotiation, "the same certificate is the peer")
        #expect(InCallOffer.classify(try offer(ufrag: "new1", print: printC), remote: remote, fingerprints: [Self.printA],
                                     answered: nil) == .otherCaller, "the peer's ufrag unknown")
    }
}
