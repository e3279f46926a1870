// Tests of the pre-RFC 8841 data section (`DTLS/SCTP 5000` with `a=sctpmap`, draft-ietf-mmusic-sctp-sdp-05): offers of six stacks (Fixtures/legacy) parsed, accepted and answered in their own form (RFC 8829 §5.1.2), byte for byte; our re-offers keep the form; the 64 KiB limit; a malformed sctpmap line leaves its data section unusable (rejected, named) and the rest of the description taken.
import Foundation
import Testing
@testable import SDP

/// The hand-written and made legacy offers (Fixtures/legacy/README.md).
enum LegacyFixtures {
    static let directory = Fixtures.directory.appendingPathComponent("legacy")
    static func text(_ name: String) throws -> String {
        try String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8)
    }
}

/// One legacy offer and what our answer's data section must be.
struct LegacyCase: Sendable, CustomTestStringConvertible {
    let file: String
    /// The offered proto, the sctpmap's stream count, and the peer's max-message-size line.
    let proto: String, streams: Int, offeredMaxMessageSize: Int?
    var testDescription: String { file }
}

/// Options with audio, video and a data channel track.
func dataOptions() -> LocalDescriptionOptions {
    var o = options()
    o.tracks.append(LocalTrack(kind: .application, direction: .sendrecv, ssrc: 0, cname: "cn", streamId: "", trackId: ""))
    return o
}

/// The lines of the `m=application` section of `text`, without line ends.
func applicationLines(_ text: String) -> [String] {
    let lines = text.components(separatedBy: "\r\n").filter { !$0.isEmpty }
    guard let start = lines.firstIndex(where: { $0.hasPrefix("m=application") }) else { return [] }
    let rest = lines[(start + 1)...]
    let end = rest.firstIndex { $0.hasPrefix("m=") } ?? lines.endIndex
    return Array(lines[start..<end])
}

@Suite struct LegacyDataSectionTests {
    static let cases = [
        LegacyCase(file: "aiortc-offer-datachannel.sdp", proto: "DTLS/SCTP", streams: 65535, offeredMaxMessageSize: 262_144),
        LegacyCase(file: "chromium-m70-offer-datachannel.sdp", proto: "DTLS/SCTP", streams: 1024, offeredMaxMessageSize: nil),
        LegacyCase(file: "firefox-60-offer-datachannel.sdp", proto: "DTLS/SCTP", streams: 256, offeredMaxMessageSize: 1_073_741_823),
        LegacyCase(file: "janus-offer-datachannel.sdp", proto: "DTLS/SCTP", streams: 16, offeredMaxMessageSize: nil),
        LegacyCase(file: "libwebrtc-draft03-offer-datachannel.sdp", proto: "UDP/DTLS/SCTP", streams: 1024, offeredMaxMessageSize: nil),
        LegacyCase(file: "draft05-several-formats-offer.sdp", proto: "DTLS/SCTP", streams: 16, offeredMaxMessageSize: nil),
    ]

    @Test func everyFixtureIsListed() throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: LegacyFixtures.directory.path).filter { $0.hasSuffix(".sdp") }
        #expect(Set(files) == Set(Self.cases.map(\.file)))
    }

    /// Each offer parses into its sctpmap, round-trips, is a data section in the legacy form
    /// on SCTP port 5000, and allows 64 KiB messages whatever it says.
    @Test(arguments: cases)
    func parsesAsALegacyDataSection(_ c: LegacyCase) throws {
        let text = try LegacyFixtures.text(c.file)
        let offer = try SessionDescription(parsing: text)
        #expect(try SessionDescription(parsing: offer.serialized()) == offer)
        let count = { (s: String) in s.split(whereSeparator: \.isNewline).filter { $0.hasPrefix("a=") }.count }
        #expect(count(offer.serialized()) == count(text), "every a= line written back")
        let m = try #require(offer.media.first { $0.kind == .application })
        #expect(m.proto == c.proto && m.sctpPort == nil && m.maxMessageSize == c.offeredMaxMessageSize)
        #expect(JSEP.isDataSection(m))
        #expect(JSEP.legacyForm(of: m) == LegacyDataForm(proto: c.proto, advertisesMaxMessageSize: c.offeredMaxMessageSize != nil))
        #expect(m.sctpmaps.first { $0.isDataChannel }?.streams == c.streams)
        #expect(JSEP.sctpPort(of: m) == 5000)
        #expect(JSEP.peerMaxMessageSize(of: m) == 65_536)
    }

    /// Our answer writes the data section in the offer's form: its proto, `5000` as the
    /// format, `a=sctpmap:5000 webrtc-datachannel 1024`, no `a=sctp-port`, and
    /// `a=max-message-size:65536` only where the offer had a max-message-size. Compared line
    /// by line with the text we send.
    @Test(arguments: cases)
    func isAnsweredInTheFormItCameIn(_ c: LegacyCase) throws {
        let offer = try SessionDescription(parsing: try LegacyFixtures.text(c.file))
        let answer = try JSEP.createAnswer(to: offer, dataOptions())
        let mid = try #require(offer.media.first { $0.kind == .application }?.mid)
        var expected = ["m=application 9 \(c.proto) 5000", "c=IN IP4 0.0.0.0", "a=ice-ufrag:uFrG", "a=ice-pwd:p4ssw0rdp4ssw0rdp4ssw0",
                        "a=ice-options:trickle", "a=fingerprint:sha-256 \(fingerprint.value)", "a=setup:active", "a=mid:\(mid)",
                        "a=sctpmap:5000 webrtc-datachannel 1024"]
        if c.offeredMaxMessageSize != nil { expected.append("a=max-message-size:65536") }
        let text = answer.serialized()
        #expect(applicationLines(text) == expected)
        #expect(!text.contains("a=sctp-port"))
        // What the offerer reads back: a legacy data section of ours, 64 KiB.
        let reread = try SessionDescription(parsing: text)
        #expect(reread == answer)
        let ours = try #require(reread.media.first { $0.kind == .application })
        #expect(JSEP.legacyForm(of: ours)?.proto == c.proto && JSEP.sctpPort(of: ours) == 5000 && JSEP.peerMaxMessageSize(of: ours) == 65_536)
        if offer.bundleGroup != nil { #expect(answer.bundleGroup?.mids == [mid]) }
    }

    /// Our subsequent offer after a legacy negotiation keeps the form (the peer may not read
    /// another); a first offer is always RFC 8841's.
    @Test func aReofferKeepsTheLegacyForm() throws {
        let offer = try SessionDescription(parsing: try LegacyFixtures.text("firefox-60-offer-datachannel.sdp"))
        let answer = try JSEP.createAnswer(to: offer, dataOptions())
        var next = dataOptions()
        next.tracks = next.tracks.filter { $0.kind == .application }
        next.tracks[0].mid = "sdparta_0"
        next.tracks[0].legacyData = JSEP.legacyForm(of: offer.media[0])
        next.establishedSetup = .active
        let reoffer = JSEP.createOffer(next, previous: answer)
        #expect(applicationLines(reoffer.serialized()) == [
            "m=application 9 DTLS/SCTP 5000", "c=IN IP4 0.0.0.0", "a=ice-ufrag:uFrG", "a=ice-pwd:p4ssw0rdp4ssw0rdp4ssw0",
            "a=ice-options:trickle", "a=fingerprint:sha-256 \(fingerprint.value)", "a=setup:actpass", "a=mid:sdparta_0",
            "a=sctpmap:5000 webrtc-datachannel 1024", "a=max-message-size:65536"])
        try Reoffer.check(reoffer, against: answer)
        let first = JSEP.createOffer(dataOptions())
        #expect(first.media[2].proto == "UDP/DTLS/SCTP" && first.media[2].formats == ["webrtc-datachannel"] && first.media[2].sctpmaps.isEmpty)
    }

    /// The drafts' in-between form, `DTLS/SCTP webrtc-datachannel` (Firefox 63's transition):
    /// accepted, answered with its proto (RFC 3264 §6) and RFC 8841's attributes.
    @Test func theDraftProtoWithTheNewFormatIsAnsweredWithItsProto() throws {
        let text = sdp(["v=0", "o=- 1 1 IN IP4 0.0.0.0", "s=-", "t=0 0",
                        "m=application 9 DTLS/SCTP webrtc-datachannel", "c=IN IP4 0.0.0.0", "a=mid:d",
                        "a=fingerprint:sha-256 \(fingerprint.value)", "a=setup:actpass", "a=sctp-port:5000"])
        let offer = try SessionDescription(parsing: text)
        #expect(JSEP.isDataSection(offer.media[0]) && JSEP.legacyForm(of: offer.media[0]) == nil)
        #expect(JSEP.peerMaxMessageSize(of: offer.media[0]) == 65_536)
        let m = try JSEP.createAnswer(to: offer, dataOptions()).media[0]
        #expect(m.port == 9 && m.proto == "DTLS/SCTP" && m.formats == ["webrtc-datachannel"] && m.sctpPort == 5000 && m.maxMessageSize == 262_144)
    }

    /// An sctpmap for a port the m= line does not list, or for another application, makes
    /// no data section: it is rejected (port 0, its formats kept).
    @Test func anSctpmapOfAnotherPortOrApplicationIsNoDataSection() throws {
        for (mLine, map) in [("m=application 9 DTLS/SCTP 5000", "a=sctpmap:5001 webrtc-datachannel 1024"),
                             ("m=application 9 DTLS/SCTP 5000", "a=sctpmap:5000 bfcp 2"),
                             ("m=application 9 SCTP 5000", "a=sctpmap:5000 webrtc-datachannel 1024")] {
            let offer = try SessionDescription(parsing: sdp(["v=0", "o=- 1 1 IN IP4 0.0.0.0", "s=-", "t=0 0", mLine, "a=mid:d", map]))
            #expect(!JSEP.isDataSection(offer.media[0]) && JSEP.legacyForm(of: offer.media[0]) == nil, "\(mLine) \(map)")
            let m = try JSEP.createAnswer(to: offer, dataOptions()).media[0]
            #expect(m.port == 0 && m.formats == offer.media[0].formats, "\(mLine) \(map)")
        }
    }

    /// A data channel mapping in upper case (`WebRTC-DataChannel`) and one with the draft's
    /// `streams=` parameter are read; the parameters are written back as read.
    @Test func sctpmapSpellingsAreRead() throws {
        let offer = try SessionDescription(parsing: sdp(["v=0", "o=- 1 1 IN IP4 0.0.0.0", "s=-", "t=0 0",
                                                        "m=application 9 DTLS/SCTP 5000", "a=mid:d",
                                                        "a=sctpmap:5000 WebRTC-DataChannel  max-message-size=100000 streams=16"]))
        let map = try #require(offer.media[0].sctpmaps.first)
        #expect(map == SctpMap(number: 5000, app: "WebRTC-DataChannel", parameters: "max-message-size=100000 streams=16"))
        #expect(map.isDataChannel && map.streams == 16 && JSEP.legacyForm(of: offer.media[0]) != nil)
        #expect(offer.serialized().contains("a=sctpmap:5000 WebRTC-DataChannel max-message-size=100000 streams=16\r\n"))
        #expect(SctpMap(number: 5000, app: "webrtc-datachannel").streams == nil)
    }

    /// A malformed sctpmap line (Chromium's offer with one added to its data section) costs
    /// that data section alone: the description parses and round-trips, the section is no
    /// data section and says why, naming the line and what was expected; our answer takes
    /// the audio and video and rejects the data section (port 0, its mid kept).
    @Test func aMalformedSctpmapLeavesOnlyTheDataSectionUnusable() throws {
        let chromium = try Fixtures.text("chromium-offer-av-datachannel.sdp")
        for bad in ["a=sctpmap:", "a=sctpmap:5000", "a=sctpmap:70000 webrtc-datachannel 16", "a=sctpmap:x webrtc-datachannel", "a=sctpmap"] {
            let text = chromium.replacingOccurrences(of: "a=sctp-port:5000\r\n", with: "a=sctp-port:5000\r\n\(bad)\r\n")
            #expect(text != chromium)
            let offer = try SessionDescription(parsing: text)
            #expect(try SessionDescription(parsing: offer.serialized()) == offer, "\(bad)")
            #expect(offer.serialized().contains("\r\n\(bad)\r\n"), "written back as it came")
            let data = try #require(offer.media.first { $0.kind == .application })
            #expect(data.sctpmaps.isEmpty && !JSEP.isDataSection(data))
            #expect(JSEP.dataSectionProblem(data) == "\(bad) is malformed (expected a=sctpmap:<SCTP port 0-65535> <application> [<streams>])")
            #expect(offer.media.filter { $0.kind != .application }.allSatisfy { JSEP.dataSectionProblem($0) == nil })
            let answer = try JSEP.createAnswer(to: offer, dataOptions())
            #expect(answer.media.map(\.mid) == ["0", "1", "2"])
            #expect(answer.media.map(\.port) == [9, 9, 0], "\(bad)")
            #expect(answer.media[0].payloads.first?.name == "opus" && answer.media[1].payloads.first?.name == "VP8")
            #expect(answer.bundleGroup?.mids == ["0", "1"])
        }
    }
}
