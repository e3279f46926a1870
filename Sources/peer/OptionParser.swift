// The option parser of every `peer` subcommand (offer, answer, room, loopback, sdp):
// walks the arguments, reads option values and the values several commands share
// (--bitrate, --video), and words every refusal alike, exiting 2.
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
    /// The option being read (the word ``next()`` returned); empty before the first.
    private(set) var option = ""

    /// A parser of `arguments` (the words after the subcommand) for `command`.
    init(command: String, _ arguments: [String]) {
        self.command = command
        self.arguments = arguments
    }

    /// Moves to the next word, the next option (or a command's other word), and
    /// returns it; nil after the last.
    mutating func next() -> String? {
        index += 1
        guard index < arguments.count else { return nil }
        option = arguments[index]
        return option
    }

    /// The value that follows the current option (the parser moves past it).
    /// Exits 2 with "<option> needs a value" when none follows.
    mutating func value() -> String {
        index += 1
        guard index < arguments.count else { fail("\(option) needs a value (try peer --help)") }
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

    /// Exits 2: the current word is not an option of this command.
    func unknownOption() -> Never { fail("unknown option \"\(option)\" (try peer --help)") }

    /// Exits 2 with `peer: <command>: <message>` on stderr.
    func fail(_ message: String) -> Never { peer.fail("\(command): \(message)") }

    /// `lo…hi`, whole numbers without a decimal point: "10…50000", "0.1…86400".
    private static func format(_ r: ClosedRange<Double>) -> String {
        func f(_ x: Double) -> String { x == x.rounded() ? String(Int(x)) : String(x) }
        return "\(f(r.lowerBound))…\(f(r.upperBound))"
    }
}
