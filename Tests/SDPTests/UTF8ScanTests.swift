import Foundation
import Testing
@testable import SDP

/// The UTF-8 versions of the parser's Character (and scalar) operations (UTF8Scan.swift, the ASCII
/// lines of `SDPLine.split`, `SDPLine.attributeName`/`attributeValue`) against the
/// Character operations they replaced, kept here as the reference, on random texts made
/// of pieces that grapheme breaking treats specially (combining marks, Prepend, ZWJ,
/// SpacingMark, CR LF, the other newlines) and on the fixtures, whole and cut.
@Suite struct UTF8ScanTests {
    static let pieces = [" ", " ", ":", ":", "/", "=", ";", "a=", "m=", "\t", "x", "ab", "0", "\r", "\n", "\r\n", "\u{85}",
                         "\u{2028}", "\u{0301}", "\u{0600}", "\u{200D}", "\u{0903}", "\u{1F1E6}", "é", "\u{1F600}", "\u{FFFD}", ""]

    /// `count` random texts of up to 12 pieces, the same every run.
    static func randomTexts(_ count: Int, seed: UInt64) -> [String] {
        var state = seed
        var texts: [String] = []
        for _ in 0..<count {
            var text = ""
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            for _ in 0..<Int(state >> 60) {
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                text += pieces[Int(state >> 33) % pieces.count]
            }
            texts.append(text)
        }
        return texts
    }

    /// The fixtures' text.
    static func fixtures() throws -> [String] {
        let dir = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")
        let names = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasSuffix(".sdp") }.sorted()
        return try names.map { try String(contentsOf: dir.appendingPathComponent($0), encoding: .utf8) }
    }

    /// `SDPLine.split` as it was: Character operations on every line.
    static func referenceSplit(_ text: String) -> Result<[SDPLine], SDPError> {
        var lines: [SDPLine] = []
        var number = 0
        for raw in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline) {
            number += 1
            var line = raw
            while let last = line.last, last == "\r" || last == " " || last == "\t" { line = line.dropLast() }
            if line.isEmpty { continue }
            let chars = Array(line.prefix(2))
            guard chars.count == 2, chars[1] == "=", let type = chars.first, type.isASCII, type.isLowercase else {
                return .failure(.malformedLine(number: number, line: String(line), expected: "<letter a-z>=<value>"))
            }
            lines.append(SDPLine(type: type, value: String(line.dropFirst(2)), number: number))
        }
        return .success(lines)
    }

    static func split(_ text: String) -> Result<[SDPLine], SDPError> {
        do { return .success(try SDPLine.split(text)) } catch { return .failure(error) }
    }

    /// The substrings of `text` cut at a few scalar boundaries (fields work on substrings too).
    static func substrings(_ text: String) -> [Substring] {
        let scalars = text.unicodeScalars
        let n = scalars.count
        var cuts: [Substring] = [text[...]]
        for (a, b) in [(1, 0), (0, 1), (1, 1), (2, 1), (n / 2, 0)] where a + b <= n {
            let start = scalars.index(scalars.startIndex, offsetBy: a)
            let end = scalars.index(scalars.endIndex, offsetBy: -b)
            cuts.append(text[start..<end])
        }
        return cuts
    }

    func checkFields(_ s: Substring) {
        for separator in [" ", ":", "/", ";", "="] {
            let byte = UInt8(ascii: Unicode.Scalar(separator)!)
            let character = Character(separator)
            for maxSplits in [0, 1, 2, Int.max] {
                for omitting in [true, false] {
                    let new = s.fields(byte, maxSplits: maxSplits, omittingEmpty: omitting)
                    let old = s.split(separator: character, maxSplits: maxSplits, omittingEmptySubsequences: omitting)
                    #expect(new == old.map(String.init), "\(s.debugDescription) split at \(separator) max \(maxSplits) omitting \(omitting)")
                    #expect(new.map { Array($0.utf8) } == old.map { Array($0.utf8) }, "\(s.debugDescription)")
                }
            }
            #expect(s.firstIndex(ofASCII: byte) == s.firstIndex(of: character), "\(s.debugDescription) first \(separator)")
        }
    }

    @Test func fieldsAndFirstIndexAsTheCharacterOperations() throws {
        for text in Self.randomTexts(1500, seed: 0x5DB) + (try Self.fixtures()) {
            for s in Self.substrings(text) { checkFields(s) }
        }
    }

    @Test func splitAsTheCharacterSplit() throws {
        var texts = Self.randomTexts(2000, seed: 0xA11CE)
        // Lines of random pieces behind a valid start, so more of them get past the first check.
        texts += Self.randomTexts(2000, seed: 0xB0B).map { "v=0\r\na=" + $0 + "\n" + "a" + $0 + "=x " }
        for fixture in try Self.fixtures() {
            texts.append(fixture)
            // The fixture with one random piece put in at a few places.
            for (k, piece) in Self.pieces.enumerated() {
                var t = fixture
                let at = t.unicodeScalars.index(t.unicodeScalars.startIndex, offsetBy: (k * 97) % t.unicodeScalars.count)
                t.insert(contentsOf: piece, at: at)
                texts.append(t)
            }
        }
        for text in texts {
            let new = Self.split(text)
            #expect(new == Self.referenceSplit(text), "\(text.debugDescription)")
            guard case .success(let lines) = new else { continue }
            for line in lines {
                let colon = line.value.firstIndex(of: ":")
                let name = line.type != "a" ? nil : colon.map { line.value[..<$0] } ?? line.value[...]
                let value = line.type != "a" ? nil : colon.map { line.value[line.value.index(after: $0)...] }
                #expect(line.attributeName == name, "\(line.value.debugDescription)")
                #expect(line.attributeValue == value, "\(line.value.debugDescription)")
                #expect(line.attribute.name == String(name ?? ""), "\(line.value.debugDescription)")
                #expect(line.attribute.value == value.map(String.init), "\(line.value.debugDescription)")
            }
        }
    }

    /// `Candidate.fields` as it was: trimming and splitting the Unicode scalars.
    static func referenceCandidateFields(_ text: String) -> [String] {
        var body = Substring(text).unicodeScalars
        while let last = body.last, last == "\r" || last == "\n" || last == " " { body = body.dropLast() }
        if body.starts(with: "a=".unicodeScalars) { body = body.dropFirst(2) }
        if body.starts(with: "candidate:".unicodeScalars) { body = body.dropFirst("candidate:".unicodeScalars.count) }
        return body.split(separator: " ", omittingEmptySubsequences: true).map { String(Substring($0)) }
    }

    @Test func candidateFieldsAsTheScalarSplit() {
        let starts = ["", "a=", "candidate:", "a=candidate:", "a=a=", "candidate:a=", " a=", "a", "candidate"]
        for (k, text) in Self.randomTexts(3000, seed: 0xCA7D).enumerated() {
            let line = starts[k % starts.count] + text + ["", " ", "\r\n", " \r", "\n\u{0301}"][k % 5]
            #expect(Candidate.fields(line).map { Array($0.utf8) } == Self.referenceCandidateFields(line).map { Array($0.utf8) },
                    "\(line.debugDescription)")
        }
    }
}
