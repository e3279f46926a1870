// Linux calls for the event loop: the scheduler calls glibc 2.36 has no wrapper for (sched_setattr(2), sched_getattr(2)),
// for giving the event-loop thread a short EEVDF slice, and eventfd(2) for waking it.
#include <stdint.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/sched.h>
#include <linux/sched/types.h>

/// Sets the calling thread's EEVDF slice (sched_attr.sched_runtime, ns; the kernel
/// clamps it to 0.1–100 ms), keeping its policy and nice value; only for a SCHED_OTHER
/// thread (others are left alone: returns -1). Returns 0, or -1 with errno set (EINVAL on
/// kernels before 6.12, which have no custom slices).
static inline int peer_set_thread_slice(uint64_t slice_ns) {
    struct sched_attr attr = {0};
    if (syscall(SYS_sched_getattr, 0, &attr, sizeof attr, 0) != 0) return -1;
    if (attr.sched_policy != SCHED_NORMAL) return -1;
    attr.size = sizeof attr;
    attr.sched_flags = 0;
    attr.sched_runtime = slice_ns;
    return (int)syscall(SYS_sched_setattr, 0, &attr, 0);
}

/// The calling thread's EEVDF slice (ns) as the kernel reports it, or 0 when it cannot say.
static inline uint64_t peer_thread_slice(void) {
    struct sched_attr attr = {0};
    if (syscall(SYS_sched_getattr, 0, &attr, sizeof attr, 0) != 0) return 0;
    return attr.sched_runtime;
}

#include <sys/eventfd.h>

/// A non-blocking, close-on-exec eventfd(2) with count 0, or -1 with errno set.
static inline int peer_eventfd(void) { return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC); }

/// The calling thread's kernel thread id (gettid(2); glibc 2.36 declares it only with _GNU_SOURCE).
static inline int peer_gettid(void) { return (int)syscall(SYS_gettid); }

#include <sys/prctl.h>

/// Names the calling thread in the kernel (prctl(2) PR_SET_NAME: /proc/PID/task/TID/comm,
/// ps, perf; the first 15 bytes). Returns 0, or -1 with errno set.
static inline int peer_set_thread_name(const char *name) { return prctl(PR_SET_NAME, (unsigned long)name, 0, 0, 0); }
