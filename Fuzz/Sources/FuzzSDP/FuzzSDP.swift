// libFuzzer target for the SDP module's parser, serializer, JSEP answer (data sections in
// their RFC 8841 or legacy a=sctpmap form too) and subsequent offer, and the re-offer checks (candidate lines on their own are FuzzICE's). A crash here IS the finding: each check traps with
// fatalError naming the property that broke.
import SDP

/// Fixed local options for exercising JSEP.createAnswer on every parsed offer.
private let answerOptions = LocalDescriptionOptions(
    sessionId: 4_611_686_018_427_387_903, iceUfrag: "fuzz", icePwd: "fuzzfuzzfuzzfuzzfuzzfuzz",
    fingerprints: [Fingerprint(algorithm: "sha-256", value: Array(repeating: "AB", count: 32).joined(separator: ":"))],
    tracks: [LocalTrack(kind: .audio, ssrc: 1111, cname: "fuzz", streamId: "s", trackId: "a"),
             LocalTrack(kind: .video, ssrc: 2222, cname: "fuzz", streamId: "s", trackId: "v"),
             LocalTrack(kind: .application, ssrc: 0, cname: "fuzz", streamId: "", trackId: "")])

/// Our first offer with the same options: what a fuzzed re-offer is checked against.
private let firstOffer = JSEP.createOffer(answerOptions)

/// serialized() must give text that parses back to the same description.
private func checkRoundTrip(_ parsed: SessionDescription, _ what: String, input: String) {
    let text = parsed.serialized()
    let reparsed: SessionDescription
    do {
        reparsed = try SessionDescription(parsing: text)
    } catch {
        fatalError("""
            \(what): serialized() output does not parse: \(error)
            --- input ---
            \(input.debugDescription)
            --- serialized ---
            \(text.debugDescription)
            """)
    }
    guard reparsed == parsed else {
        fatalError("""
            \(what): round trip changed the description (reparsed != parsed)
            --- input ---
            \(input.debugDescription)
            --- serialized ---
            \(text.debugDescription)
            --- reserialized ---
            \(reparsed.serialized().debugDescription)
            --- parsed ---
            \(parsed)
            --- reparsed ---
            \(reparsed)
            """)
    }
}

/// A data section with an `a=sctpmap` that does not parse is rejected (only it: the parse
/// kept the rest). The first data section we accept answers the offer's in its form (RFC 8829 §5.1.2): the
/// legacy `a=sctpmap` form with the offer's proto, our port 5000 as its only format and one
/// sctpmap, no `a=sctp-port`; the RFC 8841 form with the offer's proto otherwise; every
/// accepted one is a data section of ours that the peer reads on port 5000.
private func checkDataSection(offer: SessionDescription, answer: SessionDescription, input: String) {
    // A data section with a malformed a=sctpmap is never taken: rejected, the rest answered.
    for (o, a) in zip(offer.media, answer.media) where JSEP.dataSectionProblem(o) != nil && !a.isRejected {
        fatalError("a data section with a malformed a=sctpmap is accepted\n--- offer section ---\n\(o)\n--- input ---\n\(input.debugDescription)")
    }
    for (o, a) in zip(offer.media, answer.media) where o.kind == .application && !a.isRejected {
        let form = JSEP.legacyForm(of: o)
        let fine = JSEP.isDataSection(o) && JSEP.isDataSection(a) && a.proto == o.proto && JSEP.sctpPort(of: a) == 5000
            && JSEP.legacyForm(of: a) == form
            && (form == nil ? a.formats == [JSEP.dataFormat] && a.sctpPort == 5000 && a.sctpmaps.isEmpty
                : a.formats == ["5000"] && a.sctpPort == nil && a.sctpmaps.count == 1 && JSEP.peerMaxMessageSize(of: a) == 65_536)
        guard fine else {
            fatalError("the data section's answer is not in the offer's form\n--- offer section ---\n\(o)\n--- answer section ---\n\(a)\n--- input ---\n\(input.debugDescription)")
        }
    }
}

/// libFuzzer's entry point: checks one input (`size` bytes at `data`); always returns 0.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)

    if let parsed = try? SessionDescription(parsing: text) {
        checkRoundTrip(parsed, "SessionDescription", input: text)
        // Treat it as an offer: the answer must be a description that round-trips too.
        if let answer = try? JSEP.createAnswer(to: parsed, answerOptions) {
            checkRoundTrip(answer, "JSEP.createAnswer result", input: text)
            checkDataSection(offer: parsed, answer: answer, input: text)
            // Our re-offer after that answer: it round-trips and passes our own checks.
            var next = answerOptions
            for i in next.tracks.indices {
                let m = answer.media.first { $0.kind == next.tracks[i].kind && !$0.isRejected }
                next.tracks[i].mid = m?.mid
                next.tracks[i].payloadType = m?.payloads.first?.payloadType
                next.tracks[i].direction = .sendonly
                if next.tracks[i].kind == .application, let m { next.tracks[i].legacyData = JSEP.legacyForm(of: m) }
            }
            next.establishedSetup = .active
            let reoffer = JSEP.createOffer(next, previous: answer)
            checkRoundTrip(reoffer, "JSEP.createOffer(previous:) result", input: text)
            do { try Reoffer.check(reoffer, against: answer) } catch {
                fatalError("our re-offer fails our own Reoffer.check: \(error)\n--- input ---\n\(text.debugDescription)")
            }
        }
        // The input as a re-offer of our first offer, or as the answer to one: an error or
        // not, never a trap; and any description with a fingerprint is a valid re-offer of
        // itself (without one, it is refused for that alone).
        _ = try? Reoffer.check(parsed, against: firstOffer, establishedSetup: .passive)
        _ = try? Reoffer.checkAnswer(parsed, against: firstOffer, establishedSetup: .active)
        // A description that restarts ICE with another certificate (the peer back from a
        // restart, RFC 8829 §5.11) begins a new DTLS association: never refused for its
        // fingerprint or its roles; without the restart, another certificate always is.
        if Reoffer.startsNewAssociation(parsed, against: firstOffer) {
            do throws(ReofferError) { try Reoffer.check(parsed, against: firstOffer, establishedSetup: .passive) } catch {
                switch error {
                case .fingerprintChanged, .roleSwap:
                    fatalError("an ICE restart with a new certificate is refused: \(error)\n--- input ---\n\(text.debugDescription)")
                default: break
                }
            }
        } else if let ours = Reoffer.fingerprints(of: firstOffer).first, case let prints = Reoffer.fingerprints(of: parsed),
                  !prints.isEmpty, !prints.contains(where: { $0.matches(ours) }), Reoffer.iceUfrag(of: parsed) == Reoffer.iceUfrag(of: firstOffer) {
            do throws(ReofferError) {
                try Reoffer.checkAnswer(parsed, against: firstOffer, establishedSetup: .active, iceRestartOffered: true)
                fatalError("a new certificate without an ICE restart is accepted\n--- input ---\n\(text.debugDescription)")
            } catch {}
        }
        do throws(ReofferError) { try Reoffer.check(parsed, against: parsed) } catch {
            if case .fingerprintMissing = error, Reoffer.fingerprints(of: parsed).isEmpty {} else {
                fatalError("a description fails Reoffer.check against itself: \(error)\n--- input ---\n\(text.debugDescription)")
            }
        }
    }

    return 0
}
