//go:build unix

package testdb

import (
	"os"
	"strconv"
	"syscall"
)

// detached puts the watcher in its own session so that a signal to the test
// binary's process group does not take it down before it has cleaned up.
func detached() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }

// closeInheritedOnExec marks every descriptor this process inherited above
// stderr close-on-exec, so the servers it starts do not hold them. A fuzzing
// worker inherits its coordinator's pipes as descriptors 3 and 4: a postgres
// the worker started kept them open after the worker ended, and the
// coordinator, which reads a worker's pipe to its end before reaping it,
// waited forever.
func closeInheritedOnExec() {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return
	}
	for _, e := range entries {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
			syscall.CloseOnExec(fd)
		}
	}
}
