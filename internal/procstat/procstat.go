// Package procstat reads what Linux's /proc tells of a process, for the
// tools and tests that watch a server they started.
package procstat

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// PeakRSS is the most resident memory process pid has held so far, in
// bytes (VmHWM of /proc/<pid>/status).
func PeakRSS(pid int) (int64, error) {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(status), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kib, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("procstat: VmHWM %q: %w", rest, err)
			}
			return kib << 10, nil
		}
	}
	return 0, fmt.Errorf("procstat: no VmHWM in /proc/%d/status", pid)
}

// CPUTime is the CPU time this process has used, all its threads, user and
// system; 0 where the system does not say. A benchmark reads it around a
// piece of work to weigh it by the CPU it took, which other processes on
// the machine do not inflate as they inflate the time it took.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
