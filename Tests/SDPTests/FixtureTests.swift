import Foundation
import Testing
@testable import SDP

/// Real descriptions made by Chromium, aiortc and GStreamer webrtcbin
/// (scripts/fixtures/make-sdp-fixtures; see Fixtures/README.md).
enum Fixtures {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")
    static func text(_ name: String) throws -> String {
        try String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8)
    }
    static var all: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).filter { $0.hasSuffix(".sdp") }.sorted()
    }
}

/// What our answer to a real offer must contain.
struct ExpectedAnswer: Sendable, CustomTestStringConvertible {
    let file: String
    let mids: [String]
    let ports: [Int]
    let formats: [[String]]
    let bundle: [String]?
    var testDescription: String { file }
}

@Suite struct FixtureTests {
    @Test func thereAreFixturesFromThreeStacks() {
        let stacks = Set(Fixtures.all.compactMap { $0.split(separator: "-").first.map(String.init) })
        #expect(stacks == ["aiortc", "chromium", "gstreamer"])
        #expect(Fixtures.all.count >= 8)
    }

    @Test(arguments: Fixtures.all)
    func parsesAndRoundTrips(_ file: String) throws {
        let text = try Fixtures.text(file)
        let d = try SessionDescription(parsing: text)
        #expect(!d.media.isEmpty)
        #expect(d.media.allSatisfy { $0.mid != nil })
        #expect(d.media.contains { !$0.candidates.isEmpty }, "real descriptions carry candidates")
        #expect(!(d.fingerprints + d.media.flatMap(\.fingerprints)).isEmpty)
        let again = try SessionDescription(parsing: d.serialized())
        #expect(again == d)
        // The number of a= lines we write back equals what was read (nothing lost or invented),
        // except rtpmap-less fmtp-only payloads, which every stack here avoids.
        let count = { (s: String) in s.split(whereSeparator: \.isNewline).filter { $0.hasPrefix("a=") }.count }
        #expect(count(d.serialized()) == count(text))
    }

    @Test func stackSpecificValues() throws {
        let chromium = try SessionDescription(parsing: Fixtures.text("chromium-offer-av.sdp"))
        #expect(chromium.extmapAllowMixed)
        #expect(chromium.media[1].ssrcGroups.first?.semantics == "FID")
        #expect(chromium.media[1].payload(96)?.rtcpFeedback.contains("transport-cc") == true)
        #expect(chromium.media[0].candidates.contains { $0.isTCP && $0.tcpType == "active" && $0.port == 9 })
        #expect(chromium.media[0].candidates.contains { $0.addressKind == .ipv6 })
        #expect(chromium.media[0].candidates.allSatisfy { $0.generation == 0 })

        let aiortc = try SessionDescription(parsing: Fixtures.text("aiortc-offer-av.sdp"))
        #expect(aiortc.media[0].fingerprints.map(\.algorithm) == ["sha-256", "sha-384", "sha-512"])
        #expect(aiortc.media[0].endOfCandidates)
        #expect(aiortc.msidSemantic == MsidSemantic(semantic: "WMS", identifiers: ["*"]))

        let gst = try SessionDescription(parsing: Fixtures.text("gstreamer-offer-av.sdp"))
        #expect(gst.media.map(\.mid) == ["audio0", "video1"])
        #expect(gst.media[1].port == 0 && !gst.media[1].isRejected)  // bundle-only
        #expect(gst.media[0].rtcpMuxOnly)
        #expect(gst.media[0].payload(111)?.name == "OPUS")
        #expect(gst.media[0].candidates.contains { $0.transport == "UDP" })
        #expect(gst.iceOptions == ["trickle"])
    }

    static let offers: [ExpectedAnswer] = [
        ExpectedAnswer(file: "chromium-offer-av.sdp", mids: ["0", "1"], ports: [9, 9], formats: [["111"], ["96"]], bundle: ["0", "1"]),
        ExpectedAnswer(file: "chromium-offer-av-datachannel.sdp", mids: ["0", "1", "2"], ports: [9, 9, 0],
                       formats: [["111"], ["96"], ["webrtc-datachannel"]], bundle: ["0", "1"]),
        ExpectedAnswer(file: "chromium-offer-datachannel.sdp", mids: ["0"], ports: [0], formats: [["webrtc-datachannel"]], bundle: nil),
        ExpectedAnswer(file: "aiortc-offer-av.sdp", mids: ["0", "1"], ports: [9, 9], formats: [["96"], ["97"]], bundle: ["0", "1"]),
        ExpectedAnswer(file: "gstreamer-offer-av.sdp", mids: ["audio0", "video1"], ports: [9, 9], formats: [["111"], ["96"]],
                       bundle: ["audio0", "video1"]),
    ]

    @Test(arguments: offers)
    func ourAnswerToARealOffer(_ expected: ExpectedAnswer) throws {
        let offer = try SessionDescription(parsing: Fixtures.text(expected.file))
        let answer = try JSEP.createAnswer(to: offer, options())
        #expect(answer.media.map(\.mid) == expected.mids)
        #expect(answer.media.map(\.port) == expected.ports)
        #expect(answer.media.map(\.formats) == expected.formats)
        #expect(answer.bundleGroup?.mids == expected.bundle)
        for m in answer.media where !m.isRejected {
            #expect(m.direction == .sendrecv)
            #expect(m.setup == .active)
            #expect(m.rtcpMux)
            #expect(m.payloads.allSatisfy { $0.matches(name: m.kind == .audio ? "opus" : "vp8",
                                                               clockRate: m.kind == .audio ? 48000 : 90000,
                                                               channels: m.kind == .audio ? 2 : 1) })
        }
        #expect(try SessionDescription(parsing: answer.serialized()) == answer)
    }

    /// The answers the other stacks gave: they chose what we would read back.
    @Test func realAnswersParseToTheirChoices() throws {
        let aiortc = try SessionDescription(parsing: Fixtures.text("aiortc-answer-av.sdp"))
        #expect(aiortc.media.map(\.setup) == [.active, .active])
        #expect(aiortc.media[0].payloads.first?.matches(name: "opus", clockRate: 48000, channels: 2) == true)
        let chromium = try SessionDescription(parsing: Fixtures.text("chromium-answer-av.sdp"))
        #expect(chromium.media[0].formats.first == "96")  // aiortc's opus payload type kept
        #expect(chromium.media.map(\.effectiveDirection) == [.sendrecv, .sendrecv])
        let gst = try SessionDescription(parsing: Fixtures.text("gstreamer-answer-av.sdp"))
        #expect(gst.media.map(\.formats) == [["111"], ["96"]])
        #expect(gst.bundleGroup?.mids == ["0", "1"])
    }
}
