package procstat

import (
	"os"
	"testing"
	"time"
)

// This test process holds at least the buffer it just touched.
func TestPeakRSS(t *testing.T) {
	buf := make([]byte, 16<<20)
	for i := range buf {
		buf[i] = 1
	}
	rss, err := PeakRSS(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if rss < int64(len(buf)) {
		t.Fatalf("peak RSS %d bytes, below the %d just touched", rss, len(buf))
	}
	if _, err := PeakRSS(-1); err == nil {
		t.Fatal("no error for a process that does not exist")
	}
}

// Work this process does shows in its CPU time.
func TestCPUTime(t *testing.T) {
	before := CPUTime()
	for start := time.Now(); time.Since(start) < 50*time.Millisecond; {
	}
	if after := CPUTime(); after <= before {
		t.Fatalf("CPU time %v after a busy loop, %v before", after, before)
	}
}
