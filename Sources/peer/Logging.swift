// Logging: how much `peer` says (PEER_LOG, then -v, -q, --log-level on the command line) and the C libraries' messages routed into the log once the command line is read.
import Bytes
import EventLoop
import Foundation
import ICE

/// Sets the log's level from `PEER_LOG` (info when unset), its times counted from the
/// process's start; exits 2 naming `PEER_LOG` when it is not a level. Run before the
/// command line is read, whose `-v`, `-q` and `--log-level` come after it.
func configureLogFromEnvironment() {
    Log.configure(level: .info, start: processStart)
    guard let text = ProcessInfo.processInfo.environment["PEER_LOG"], !text.isEmpty else { return }
    guard let level = LogLevel(name: text) else {
        fail("PEER_LOG \"\(Untrusted.quoted(text))\": expected error, warn, info, debug or trace")
    }
    Log.configure(level: level)
}

/// Once the command line is read: GLib's messages (GIO, libsoup, libnice's warnings) go
/// to the log, and from `debug` libnice's own debug lines as `ice` (its candidate
/// gathering and connectivity checks; from `trace` its STUN messages too). libsrtp's and
/// OpenSSL's come through their modules (`srtp`, `dtls`).
func startLogging() {
    Log.setLineWriter { line in StatusLine.shared.emit(line) }  // apart from the status line
    Log.routeGLib()
    guard Log.enabled(.debug) else { return }
    // Each line about an agent with a connection name (peer load) carries it.
    _ = NiceLog(withStun: Log.enabled(.trace)) { line in Log.write(.debug, "ice", tag: NiceLog.tag(ofLine: line), line) }  // keeps itself until stop()
}
