import Foundation
import PeerAgent

#if canImport(Glibc)
import Glibc
#endif

/// `peer` command line. This first slice knows `--version` and `--help`;
/// the call subcommands arrive with their issues.
let arguments = Array(CommandLine.arguments.dropFirst())
let usage = """
    peer — headless WebRTC peer agent (WAMP signaling, ICE, DTLS-SRTP, VP8, Opus)

    usage: peer --version      print the version of peer and of each C library
           peer --help         this text

    exit codes: 0 done; 2 bad arguments
    """

switch arguments.first {
case "--version", "version":
    print(PeerVersion.text)
case "--help", "-h", "help", nil:
    print(usage)
case let other?:
    FileHandle.standardError.write(Data("peer: unknown argument \"\(other)\" (try peer --help)\n".utf8))
    exit(2)
}
