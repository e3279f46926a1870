// swift-tools-version:6.0
// The `peer` package: a headless WebRTC peer agent. Layout and dependency
// direction follow ../shared/DESIGN.md: lower modules never import higher ones;
// Bytes, SDP and RTP are pure Swift; each C library enters through one system-library
// target (Sources/C/*) holding only a module map and a small header.
import PackageDescription

/// A SwiftPM system-library target for one Debian `-dev` package.
/// With `pkgConfig` nil the library is not linked (its headers are on the standard
/// include path): its shim loads it with dlopen when first needed.
func system(_ name: String, pkgConfig: String?, apt: [String]) -> Target {
    .systemLibrary(name: name, path: "Sources/C/\(name)", pkgConfig: pkgConfig,
                   providers: [.apt(apt)])
}

let package = Package(
    name: "peer",
    products: [
        .executable(name: "peer", targets: ["peer"]),
        .library(name: "PeerAgent", targets: ["PeerAgent"]),
        .library(name: "PeerCall", targets: ["PeerCall"]),
        .library(name: "Bytes", targets: ["Bytes"]),
        .library(name: "SDP", targets: ["SDP"]),
        .library(name: "RTP", targets: ["RTP"]),
        .library(name: "ICE", targets: ["ICE"]),
        .library(name: "WampClient", targets: ["WampClient"]),
        .library(name: "DTLS", targets: ["DTLS"]),
        .library(name: "Media", targets: ["Media"]),
        .library(name: "SCTP", targets: ["SCTP"]),
        .library(name: "Hub", targets: ["Hub"]),
    ],
    targets: [
        // C libraries (Debian packages named as providers).
        system("CGLib", pkgConfig: "gio-2.0", apt: ["libglib2.0-dev"]),
        system("CNice", pkgConfig: "nice", apt: ["libnice-dev"]),
        system("CSoup", pkgConfig: "libsoup-3.0", apt: ["libsoup-3.0-dev", "glib-networking"]),
        system("COpenSSL", pkgConfig: "openssl", apt: ["libssl-dev"]),
        system("CSRTP", pkgConfig: "libsrtp2", apt: ["libsrtp2-dev"]),
        system("CVPX", pkgConfig: "vpx", apt: ["libvpx-dev"]),
        // Not linked: loaded on the first WebM/Matroska recording (Sources/C/CAVFormat/shim.h).
        system("CAVFormat", pkgConfig: nil, apt: ["libavformat-dev", "libavcodec-dev", "libavutil-dev"]),
        system("COpus", pkgConfig: "opus", apt: ["libopus-dev"]),
        system("COgg", pkgConfig: "ogg", apt: ["libogg-dev"]),
        system("CUsrsctp", pkgConfig: "usrsctp", apt: ["libusrsctp-dev"]),
        // Linux scheduler system calls (libc and kernel headers only).
        .systemLibrary(name: "CLinux", path: "Sources/C/CLinux"),

        // Library modules, lowest first.
        .target(name: "EventLoop", dependencies: ["CGLib", "CLinux", "Bytes"]),
        .target(name: "Bytes"),
        .target(name: "SDP", dependencies: ["Bytes"]),
        .target(name: "RTP", dependencies: ["Bytes"]),
        .target(name: "ICE", dependencies: ["EventLoop", "SDP", "CGLib", "CNice"]),
        .target(name: "WampClient", dependencies: ["EventLoop", "CGLib", "CSoup", "COpenSSL"]),
        .target(name: "DTLS", dependencies: ["EventLoop", "COpenSSL", "CSRTP"]),
        .target(name: "Media", dependencies: ["EventLoop", "Bytes", "CVPX", "COpus", "COgg", "CAVFormat"]),
        .target(name: "SCTP", dependencies: ["EventLoop", "Bytes", "CUsrsctp"]),
        // The media hub: shared sources, encoders and packetized frames for many connections.
        .target(name: "Hub", dependencies: ["EventLoop", "RTP", "Media"]),
        .target(name: "PeerAgent",
                dependencies: ["EventLoop", "Bytes", "SDP", "RTP", "ICE", "WampClient", "DTLS", "Media", "SCTP", "Hub"]),
        // The application layer over the W3C objects: calls and their signaling profiles,
        // loopback, SDP inspection, options (as aiortc keeps contrib/ apart).
        .target(name: "PeerCall", dependencies: ["PeerAgent", "WampClient", "SDP", "Media", "ICE", "DTLS", "EventLoop", "Bytes", "Hub"]),
        .executableTarget(name: "peer", dependencies: ["PeerCall", "PeerAgent", "Bytes", "Media", "EventLoop", "ICE"]),
        .executableTarget(name: "peer-bench", dependencies: ["WampClient", "DTLS", "RTP", "CSRTP", "Media", "PeerAgent", "PeerCall", "EventLoop", "SCTP", "Hub"]),
        .executableTarget(name: "ice-probe", dependencies: ["ICE"]),
        .executableTarget(name: "media-probe", dependencies: ["Media"]),

        // Test support: the real router and STUN/TURN server, started through
        // scripts/services (one implementation for tests, demo and benchmarks).
        .target(name: "TestSupport", path: "Tests/TestSupport"),

        .testTarget(name: "EventLoopTests", dependencies: ["EventLoop", "CGLib"]),
        .testTarget(name: "BytesTests", dependencies: ["Bytes"]),
        .testTarget(name: "SDPTests", dependencies: ["SDP"], exclude: ["Fixtures"]),
        .testTarget(name: "RTPTests", dependencies: ["Bytes", "RTP", "TestSupport"], exclude: ["Fixtures"]),
        .testTarget(name: "ICETests", dependencies: ["ICE", "EventLoop", "TestSupport"]),
        .testTarget(name: "WampClientTests", dependencies: ["WampClient", "TestSupport"], exclude: ["Support"]),
        .testTarget(name: "DTLSTests", dependencies: ["DTLS", "TestSupport"]),
        .testTarget(name: "SCTPTests", dependencies: ["SCTP", "EventLoop"]),
        .testTarget(name: "MediaTests", dependencies: ["Bytes", "Media", "TestSupport"]),
        .testTarget(name: "HubTests", dependencies: ["Hub", "Bytes", "RTP", "Media", "EventLoop", "DTLS", "TestSupport"]),
        .testTarget(name: "PeerAgentTests", dependencies: ["PeerAgent", "PeerCall", "EventLoop", "Hub", "TestSupport"], exclude: ["Support"]),
    ],
    swiftLanguageModes: [.v6]
)
