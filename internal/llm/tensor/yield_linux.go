package tensor

import "syscall"

// yieldThread gives the calling thread's core to another runnable thread,
// if any (sched_yield; raw: it returns at once, so the runtime need not
// hand the goroutine's processor on).
func yieldThread() { syscall.RawSyscall(syscall.SYS_SCHED_YIELD, 0, 0, 0) }
