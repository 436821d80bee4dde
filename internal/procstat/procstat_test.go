package procstat

import (
	"os"
	"testing"
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
