// ThreadNaming: the calling thread's name set in the kernel (prctl PR_SET_NAME) and in Foundation.
import CLinux
import Foundation

/// Names the calling thread `name`: in the kernel (what /proc, ps, top and perf show; the
/// first 15 bytes) and as Foundation's `Thread.current.name`. The kernel name is set
/// directly: Foundation's setter on Linux did not always reach the kernel (a new thread
/// then kept the name it inherited from its creator, e.g. a Swift pool thread's).
public func nameCurrentThread(_ name: String) {
    Thread.current.name = name
    _ = peer_set_thread_name(name)
}
