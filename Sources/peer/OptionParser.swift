// The option parser of every `peer` subcommand (offer, answer, room, loopback, sdp, report):
// walks the arguments, reads option values and the values several commands share
// (--bitrate, --video), and words every refusal alike, exiting 2.
import Bytes
import EventLoop
import Foundation
import PeerAgent
import PeerCall

/// Reads one subcommand's arguments option by option. Every refusal goes to stderr as
/// `peer: <command>: <message>` and exits 2 (``fail(_:)``); a refused value reads
/// `<command>: <option> "<value>": expected <what>`, naming the option and the value.
///
/// ```
/// var p = OptionParser(command: "loopback", arguments)
/// while let option = p.next() {
///     switch option {
///     case "--bitrate": kbps = p.bitrateKbps()
///     default: p.unknownOption()
///     }
/// }
/// ```
struct OptionParser {
    /// The subcommand, the first word of every message, e.g. "offer".
    let command: String
    private let arguments: [String]
    private var index = -1
    /// The option being read (the word ``next()`` returned, without any `=value`); empty
    /// before the first.
    private(set) var option = ""
    /// The value given with the option as `--option=value`, until ``value()`` takes it.
    private var inline: String?

    /// A parser of `arguments` (the words after the subcommand) for `command`.
    init(command: String, _ arguments: [String]) {
        self.command = command
        self.arguments = arguments
    }

    /// Moves to the next word, the next option (or a command's other word), and
    /// returns it; nil after the last. `--option=value` is `--option` with its value
    /// (``value()`` returns it). `--help` or `-h` prints the command's help and exits 0.
    /// Exits 2 when the previous option was given `=value` but takes none.
    mutating func next() -> String? {
        if let v = inline { fail("\(Untrusted.quoted(option)) takes no value, got \"\(Untrusted.quoted(option))=\(Untrusted.quoted(v))\" (try peer \(command) --help)") }
        index += 1
        guard index < arguments.count else { return nil }
        let word = arguments[index]
        if word.hasPrefix("--"), let equals = word.firstIndex(of: "=") {
            option = String(word[..<equals])
            inline = String(word[word.index(after: equals)...])
        } else {
            option = word
        }
        if option == "--help" || option == "-h", inline == nil {
            print(Help.text(for: command) ?? Help.general)
            exit(0)
        }
        if takeLogOption() { return next() }
        return option
    }

    /// `-v`/`--verbose` (repeatable, `-vv`: one level more each), `-q`/`--quiet` (errors
    /// only), `--log-level LEVEL`: every command's, set at once (``Log/configure(level:start:)``),
    /// the last one winning. True when the current word was one of them.
    private mutating func takeLogOption() -> Bool {
        // -v, -vv, …: one level each v; --verbose: one.
        let more = option == "--verbose" ? 1 : (option.count > 1 && option.first == "-" && option.dropFirst().allSatisfy { $0 == "v" } ? option.count - 1 : 0)
        let quiet = option == "-q" || option == "--quiet"
        if more > 0 || quiet || option == "--help", let v = inline {
            fail("\(option) takes no value, got \"\(option)=\(Untrusted.quoted(v))\" (try peer \(command) --help)")
        }
        if more > 0 {
            Log.configure(level: LogLevel(rawValue: min(Log.level.rawValue + more, LogLevel.trace.rawValue)) ?? .trace)
            return true
        }
        if quiet {
            Log.configure(level: .error)
            return true
        }
        if option == "--log-level" {
            let text = value()
            guard let level = LogLevel(name: text) else { refuse(text, expected: "error, warn, info, debug or trace") }
            Log.configure(level: level)
            return true
        }
        return false
    }

    /// The value of the current option: the word after it (the parser moves past it),
    /// or what followed its `=`. Exits 2 with "<option> needs a value" when there is none.
    mutating func value() -> String {
        if let v = inline {
            inline = nil
            return v
        }
        index += 1
        guard index < arguments.count else { fail("\(option) needs a value (try peer \(command) --help)") }
        return arguments[index]
    }

    /// The current option's value as a number that `accepts` takes; exits 2 with
    /// `<option> "<value>": expected <expected>` otherwise (not a number, NaN included).
    mutating func number(expected: String, _ accepts: (Double) -> Bool) -> Double {
        let text = value()
        guard let v = Double(text), accepts(v) else { refuse(text, expected: expected) }
        return v
    }

    /// The current option's value as a number in `range` ("expected a number in 0.1…86400").
    mutating func number(_ range: ClosedRange<Double>) -> Double {
        number(expected: "a number in \(Self.format(range))") { range.contains($0) }
    }

    /// An output file's path (`--video-out`, `--audio-out`, `--stats`), refused unless its
    /// directory exists and is writable (``Preflight/outputProblem(_:)``).
    mutating func output() -> String {
        let path = value()
        if let problem = Preflight.outputProblem(path) { refuse(path, expected: "a file that can be written: \(problem)") }
        return path
    }

    /// `--duration S`: media time, seconds, a number in 0.1…86400 (every command alike).
    mutating func durationSeconds() -> Double { number(0.1...86_400) }

    /// `--timeout S`: how long a step may take, seconds, a number in 0.1…86400 (every
    /// command alike).
    mutating func timeoutSeconds() -> Double { number(0.1...86_400) }

    /// `--bitrate KBPS`: the video bitrate, kbit/s, a number in 10…50000 (a fraction is dropped).
    mutating func bitrateKbps() -> Int { Int(number(10...50_000)) }

    /// `--video pattern[:WxH@FPS] | y4m:PATH | ivf:PATH | none`, worded as ``VideoSpec``
    /// refuses it.
    mutating func video() -> VideoSpec {
        do { return try VideoSpec(parsing: value()) } catch { fail("\(error)") }
    }

    /// `--video pattern[:WxH@FPS]` where only the test pattern will do (loopback):
    /// its size, pixels, and frame rate, frames/s.
    mutating func pattern() -> (width: Int, height: Int, frameRate: Int) {
        let text = value()
        guard case let .pattern(width, height, frameRate)? = try? VideoSpec(parsing: text) else {
            refuse(text, expected: "pattern or pattern:WxH@FPS")
        }
        return (width, height, frameRate)
    }

    /// `--audio tone[:HZ] | wav:PATH | none`, worded as ``AudioSpec`` refuses it.
    mutating func audio() -> AudioSpec {
        do { return try AudioSpec(parsing: value()) } catch { fail("\(error)") }
    }

    /// Exits 2: `<option> "<value>": expected <expected>` (the current option unless named).
    func refuse(_ value: String, expected: String, option: String? = nil) -> Never {
        fail("\(CallOptionError(option: option ?? self.option, value: value, expected: expected))")
    }

    /// Exits 2: the current word is not an option of this command (or, not starting
    /// with `-`, a word where only options go).
    func unknownOption() -> Never {
        guard option.hasPrefix("-") else {
            fail("unexpected argument \"\(Untrusted.quoted(option))\": \(command) takes options only (try peer \(command) --help)")
        }
        fail("unknown option \"\(Untrusted.quoted(option))\" (try peer \(command) --help)")
    }

    /// Exits 2 with `peer: <command>: <message>` on stderr.
    func fail(_ message: String) -> Never { peer.fail("\(command): \(message)") }

    /// `lo…hi`, whole numbers without a decimal point: "10…50000", "0.1…86400".
    private static func format(_ r: ClosedRange<Double>) -> String {
        func f(_ x: Double) -> String { x == x.rounded() ? String(Int(x)) : String(x) }
        return "\(f(r.lowerBound))…\(f(r.upperBound))"
    }
}
