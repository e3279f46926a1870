import Foundation
import TestSupport
import Testing
@testable import WampClient

/// `JSONValue(foundation:longIntegers:)` tests the Swift container types before the
/// Foundation classes (a speed-up: asking an `Array` whether it is an `NSNull` bridges
/// it). These tests hold it to the order it had before, kept here as the reference.
@Suite struct JSONValueMappingTests {
    /// The mapping with the original order of tests: NSNull, String, NSNumber, [Any], [String: Any].
    static func reference(_ object: Any, _ longIntegers: Set<Int64>) -> JSONValue? {
        if object is NSNull { return .null }
        if let s = object as? String { return .string(s) }
        if let number = object as? NSNumber {
            // Numbers are mapped by the same code in both orders: only the dispatch is compared.
            return JSONValue(foundation: number, longIntegers: longIntegers)
        }
        if let array = object as? [Any] {
            var elements: [JSONValue] = []
            for element in array {
                guard let value = reference(element, longIntegers) else { return nil }
                elements.append(value)
            }
            return .array(elements)
        }
        if let dictionary = object as? [String: Any] {
            var members: [String: JSONValue] = [:]
            for (key, element) in dictionary {
                guard let value = reference(element, longIntegers) else { return nil }
                members[key] = value
            }
            return .object(members)
        }
        return nil
    }

    /// A random JSON text of nesting depth at most `depth`, from `rng`.
    static func randomJSON(_ rng: inout some RandomNumberGenerator, depth: Int) -> String {
        let scalars = ["null", "true", "false", "0", "1", "-1", "1.0", "1e2", "0.30000000000000004",
                       "12345678901234567890", "-1000000000000000000", "9223372036854775807",
                       "-9223372036854775808", "18446744073709551615", "1.5e-7", "\"\"", "\"a\"",
                       "\"\\u00e9\\n\"", "\"1\"", "\"null\"", "\"ñ\""]
        let pick = depth == 0 ? Int.random(in: 0..<3, using: &rng) : Int.random(in: 0..<5, using: &rng)
        switch pick {
        case 0, 1, 2:
            return scalars.randomElement(using: &rng)!
        case 3:
            let items = (0..<Int.random(in: 0...4, using: &rng)).map { _ in randomJSON(&rng, depth: depth - 1) }
            return "[" + items.joined(separator: ",") + "]"
        default:
            let members = (0..<Int.random(in: 0...4, using: &rng)).map { i in
                "\"k\(i)\":" + randomJSON(&rng, depth: depth - 1)
            }
            return "{" + members.joined(separator: ",") + "}"
        }
    }

    @Test func sameValuesAsTheOriginalOrderOnRandomJSON() throws {
        var rng = SplitMix64(state: 13)
        for _ in 0..<3000 {
            let text = Self.randomJSON(&rng, depth: 4)
            let bytes = Array(text.utf8)
            let object = try JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed])
            let longIntegers = JSONTextScan(bytes).longIntegerLiterals
            let mapped = JSONValue(foundation: object, longIntegers: longIntegers)
            #expect(mapped != nil, "\(text)")
            #expect(mapped == Self.reference(object, longIntegers), "\(text)")
        }
    }

    @Test func sameValuesAsTheOriginalOrderOnFoundationObjects() {
        let objects: [Any] = [
            NSNull(), "s", NSString(string: "ns"), NSNumber(value: true), NSNumber(value: 0), NSNumber(value: 1.5),
            NSNumber(value: UInt64.max), NSDecimalNumber(string: "0.30000000000000004"),
            [Any](), [NSNull(), "x", NSNumber(value: 2)] as [Any], NSArray(array: [NSNumber(value: 1), "y"]),
            [String: Any](), ["a": [NSNumber(value: false)] as [Any]] as [String: Any],
            NSDictionary(dictionary: ["b": NSNull()]), 7, 2.5, [1, 2], ["k": "v"],
        ]
        for object in objects {
            #expect(JSONValue(foundation: object, longIntegers: []) == Self.reference(object, []), "\(object)")
        }
        // A type JSONSerialization never returns maps to nil either way.
        #expect(JSONValue(foundation: NSObject(), longIntegers: []) == nil)
        #expect(Self.reference(NSObject(), []) == nil)
    }
}
