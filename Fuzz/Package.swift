// swift-tools-version:5.4
// libFuzzer targets for the parsers of outside data (SDP, RTP/RTCP, WAMP, signaling
// payloads, media files, ICE URLs and candidates, the RFC 7983 demultiplexer, DCEP, SCTP packets before libusrsctp), kept
// out of the main package so that `swift build` there is unaffected. Build and run with
// ./run (see the comments there); needs a toolchain with -sanitize=fuzzer (Linux).
//
// Tools version 5.4 on purpose: from 5.5 on, SwiftPM links executables with
// `--defsym main=FuzzSDP_main`, which fails ("undefined symbol FuzzSDP_main")
// because with -parse-as-library there is no Swift main; libFuzzer's main is
// wanted instead. The target still compiles in Swift 6 mode (-swift-version 6).
import PackageDescription

let package = Package(
    name: "peer-fuzz",
    dependencies: [
        .package(name: "peer", path: ".."),
    ],
    targets: [
        // No main.swift: built with -parse-as-library, libFuzzer supplies main().
        .executableTarget(
            name: "FuzzSDP",
            dependencies: [.product(name: "SDP", package: "peer")],
            swiftSettings: [.unsafeFlags(["-swift-version", "6"])]
        ),
        .executableTarget(
            name: "FuzzRTP",
            dependencies: [.product(name: "Bytes", package: "peer"), .product(name: "RTP", package: "peer")],
            swiftSettings: [.unsafeFlags(["-swift-version", "6"])]
        ),
        .executableTarget(
            name: "FuzzWAMP",
            dependencies: [.product(name: "WampClient", package: "peer")],
            swiftSettings: [.unsafeFlags(["-swift-version", "6"])]
        ),
        .executableTarget(
            name: "FuzzSignaling",
            dependencies: [.product(name: "PeerCall", package: "peer"), .product(name: "WampClient", package: "peer")],
            swiftSettings: [.unsafeFlags(["-swift-version", "6"])]
        ),
        .executableTarget(
            name: "FuzzMedia",
            dependencies: [.product(name: "Media", package: "peer")],
            swiftSettings: [.unsafeFlags(["-swift-version", "6"])]
        ),
        .executableTarget(
            name: "FuzzICE",
            dependencies: [.product(name: "ICE", package: "peer"), .product(name: "SDP", package: "peer")],
            swiftSettings: [.unsafeFlags(["-swift-version", "6"])]
        ),
        .executableTarget(
            name: "FuzzDCEP",
            dependencies: [.product(name: "SCTP", package: "peer")],
            swiftSettings: [.unsafeFlags(["-swift-version", "6"])]
        ),
        .executableTarget(
            name: "FuzzSCTP",
            dependencies: [.product(name: "SCTP", package: "peer")],
            swiftSettings: [.unsafeFlags(["-swift-version", "6"])]
        ),
        .executableTarget(
            name: "FuzzDemux",
            dependencies: [.product(name: "DTLS", package: "peer")],
            swiftSettings: [.unsafeFlags(["-swift-version", "6"])]
        ),
    ]
)
