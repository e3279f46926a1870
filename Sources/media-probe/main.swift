// media-probe: the Media module's file readers and writers driven from the command line, for tests that need them in a process of their own.
import Foundation
import Media

// `media-probe`: the Media module's file readers and writers driven from the command
// line, for tests that need them in a process of their own (e.g. to SIGKILL it).
//
//   media-probe ivf-copy IN.ivf OUT.ivf INTERVAL_MS
//       Reads IN with IVFReader and writes each frame to OUT with IVFWriter, sleeping
//       INTERVAL_MS between frames. Never closes OUT: when IN runs out it starts over
//       with timestamps continuing after the last frame, forever. After each frame it
//       prints "wrote N" (N = frames in OUT so far) on stdout.
//
// Errors: one line on stderr, exit status 1 (2 for bad usage).

/// Prints `line` on stdout at once (stdout is a pipe in tests: no buffering).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

/// Prints `message` on stderr and exits with `status`.
func fail(_ message: String, status: Int32 = 1) -> Never {
    FileHandle.standardError.write(Data(("media-probe: " + message + "\n").utf8))
    exit(status)
}

/// `ivf-copy IN OUT INTERVAL_MS`: see the comment at the top.
func ivfCopy(_ input: String, _ output: String, intervalMs: Int) throws -> Never {
    let writer = try IVFWriter(path: output)
    var reader = try IVFReader(path: input)
    var offset: Int64 = 0  // added to IN's timestamps on each pass (90 kHz)
    var last: Int64 = 0
    var step: Int64 = 3000  // one frame at 30 fps until two frames show the real step
    while true {
        guard let frame = try reader.next() else {
            guard reader.framesRead > 0 else { fail("\(input) has no frames") }
            offset = last + step
            reader = try IVFReader(path: input)
            continue
        }
        var copy = frame
        copy.timestamp = frame.timestamp + offset
        if reader.framesRead > 1, copy.timestamp > last { step = copy.timestamp - last }
        last = copy.timestamp
        try writer.write(copy)
        say("wrote \(writer.framesWritten)")
        if intervalMs > 0 { usleep(useconds_t(intervalMs) * 1000) }
    }
}

let args = Array(CommandLine.arguments.dropFirst())
switch args.first {
case "ivf-copy":
    guard args.count == 4, let interval = Int(args[3]), interval >= 0 else {
        fail("usage: media-probe ivf-copy IN.ivf OUT.ivf INTERVAL_MS", status: 2)
    }
    do { try ivfCopy(args[1], args[2], intervalMs: interval) } catch { fail("\(error)") }
default:
    fail("usage: media-probe ivf-copy IN.ivf OUT.ivf INTERVAL_MS", status: 2)
}
