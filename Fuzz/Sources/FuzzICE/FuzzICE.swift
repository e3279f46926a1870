// libFuzzer target for the ICE module's STUN/TURN URL parser (IceServer.init, never
// resolvedAddress(), which does DNS) and the SDP module's candidate-line parser
// (Candidate(parsing:)): what parses writes back to text that parses to the same value.
// A crash here IS the finding: each check traps with fatalError naming the property that broke.
import ICE
import SDP

/// libFuzzer's entry point: checks one input (`size` bytes at `data`); always returns 0.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    checkServer(text)
    checkCandidate(text)
    return 0
}

/// A URL that parses has a host and a port, and its canonical form parses to the same server.
private func checkServer(_ text: String) {
    guard let server = try? IceServer(text, username: "user", password: "pass") else { return }
    guard !server.host.isEmpty, server.port > 0 else {
        fatalError("IceServer with an empty host or port 0 from \(text.debugDescription)")
    }
    guard server.isTURN || server.transport == (server.scheme == .stuns ? .tcp : .udp) else {
        fatalError("STUN server with transport \(server.transport) from \(text.debugDescription)")
    }
    let canonical = server.description
    guard let again = try? IceServer(canonical, username: "user", password: "pass") else {
        fatalError("IceServer.description does not parse: \(canonical.debugDescription) from \(text.debugDescription)")
    }
    guard again == server, again.description == canonical else {
        fatalError("IceServer round trip changed the server: \(text.debugDescription) -> \(canonical.debugDescription) -> \(again.description.debugDescription)")
    }
}

/// A candidate that parses writes back (as `candidate:…`, and as an SDP line `a=candidate:…`
/// with its line end) to text that parses to the same candidate.
private func checkCandidate(_ text: String) {
    guard let candidate = try? Candidate(parsing: text) else { return }
    guard (1...256).contains(candidate.component), candidate.priority >= 1, (0...65535).contains(candidate.port) else {
        fatalError("Candidate out of range from \(text.debugDescription)")
    }
    let line = candidate.sdpValue
    guard let again = try? Candidate(parsing: line) else {
        fatalError("Candidate.sdpValue does not parse: \(line.debugDescription) from \(text.debugDescription)")
    }
    guard again == candidate, again.sdpValue == line else {
        fatalError("Candidate round trip changed the candidate: \(text.debugDescription) -> \(line.debugDescription) -> \(again.sdpValue.debugDescription)")
    }
    guard let sdpLine = try? Candidate(parsing: "a=" + line + "\r\n"), sdpLine == candidate else {
        fatalError("Candidate as an SDP line \("a=" + line + "\\r\\n") does not parse to the same candidate (from \(text.debugDescription))")
    }
    // The address kind is a function of the address.
    if candidate.address.contains(":"), candidate.addressKind != .ipv6 {
        fatalError("Candidate address \(candidate.address.debugDescription) with a colon is not IPv6")
    }
}
