//go:build !linux

package tensor

import "runtime"

// yieldThread gives way to other goroutines; without sched_yield the
// thread keeps its core.
func yieldThread() { runtime.Gosched() }
