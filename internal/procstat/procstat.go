// Package procstat reads what Linux's /proc tells of a process, for the
// tools and tests that watch a server they started.
package procstat

import (
	"fmt"
	"os"
	"strconv"
	"strings"
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
