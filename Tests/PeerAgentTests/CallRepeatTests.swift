// `peer answer --repeat N`: calls one after another in one process, numbered files, the
// run's exit code, and no growth of open files or threads from call to call.
import Foundation
import Media
import Testing
import TestSupport

@Suite struct CallRepeatTests {
    /// One answerer with `--repeat 4` takes four offerers in turn; the third sends an IVF
    /// without frames, so that call fails `--min-frames` (7) and the run goes on. The run
    /// exits 7 (its first failure), each call's files are numbered and hold what that
    /// offerer sent, every call ends with a `callEnded` event, and the process holds no
    /// more open files and threads after the fourth call than after the second (±1).
    @Test func anAnswererTakesCallsOneAfterAnother() async throws {
        try await CallSlots.with(peers: 2) {
            let services = try await TestServices.shared()
            let h = CallHarness("repeat")
            let empty = h.path("empty.ivf")
            try CallChecks.writeInterFramesOnly(to: empty)
            let args = try CallHarness.common(services, duration: 1.5, timeout: 20)
            async let answerer = h.run("answerer", "answer", args + ["--repeat", "4"], timeout: 90)
            var offers: [PeerRun] = []
            for n in 1...4 {
                #expect(await h.waitFor("answerer") { e in
                    CallHarness.isState("ringing")(e) && e["call"] as? Int == n
                }, "call \(n) never rang: \(h.liveEvents("answerer").suffix(5))")
                var offerArgs = args
                if n == 3, let video = offerArgs.firstIndex(of: "--video") { offerArgs[video + 1] = "ivf:" + empty }
                offers.append(try await h.run("offerer\(n)", "offer", offerArgs))
            }
            let a = try await answerer
            for o in offers { #expect(o.status == 0, "\(o.log)") }
            #expect(a.status == 7, "the first failure (call 3, no frames) is the run's code: \(a.log)")
            let ended = a.events("callEnded")
            #expect(ended.map { $0["call"] as? Int } == [1, 2, 3, 4], "\(a.log)")
            #expect(ended.map { $0["code"] as? Int } == [0, 0, 7, 0], "\(a.log)")
            let exit = a.events("exit").last
            #expect(exit?["calls"] as? Int == 4 && exit?["passed"] as? Int == 3, "\(a.log)")
            let summary = exit?["reason"] as? String ?? ""
            #expect(summary.contains("first failure: call 3, exit 7"), "\(a.log)")
            // Every event of a call carries its number; the established ones are 1…4.
            let established = a.events("state").filter { $0["state"] as? String == "established" }
            #expect(established.compactMap { $0["call"] as? Int } == [1, 2, 3, 4], "\(a.log)")
            for n in [1, 2, 4] {
                let frames = try IVFReader(path: h.path("answerer-\(n).ivf")).countFrames()
                #expect(frames >= 10, "call \(n): \(frames) frames")
                #expect(FileManager.default.fileExists(atPath: h.path("answerer-\(n).ogg")))
            }
            // Call 3's offerer sent no frame: no IVF is started (its size comes from the
            // first key frame), but its audio went to the third Ogg.
            #expect(!FileManager.default.fileExists(atPath: h.path("answerer-3.ivf")))
            #expect(FileManager.default.fileExists(atPath: h.path("answerer-3.ogg")))
            #expect(!FileManager.default.fileExists(atPath: h.path("answerer.ivf")), "with --repeat every file is numbered")
            let fds = ended.compactMap { $0["openFiles"] as? Int }, threads = ended.compactMap { $0["threads"] as? Int }
            print("open files after each call: \(fds), threads: \(threads), RSS: \(ended.compactMap { $0["rssBytes"] as? Int })")
            #expect(fds.count == 4 && threads.count == 4)
            if fds.count == 4, threads.count == 4 {
                // One descriptor and one pool thread may come and go between calls (seen
                // over 500 calls: 13–14 open files, 12–13 threads); one per call would be
                // two more by call 4.
                #expect(fds[3] <= fds[1] + 1, "open files grew from call 2 to 4: \(fds)")
                #expect(threads[3] <= threads[1] + 1, "threads grew from call 2 to 4: \(threads)")
            }
            h.remove()
        }
    }
}
