//go:build linux || darwin || freebsd || netbsd || openbsd

package filemap

import (
	"fmt"
	"os"
	"syscall"
)

// mapFile maps the whole file read-only. The mapping outlives the file
// descriptor; release unmaps it.
func mapFile(f *os.File, size int64) (data []byte, release func() error, err error) {
	if size == 0 {
		return nil, func() error { return nil }, nil
	}
	if int64(int(size)) != size {
		return nil, nil, fmt.Errorf("%s: %d bytes do not fit in memory", f.Name(), size)
	}
	data, err = syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		// Some file systems cannot map; reading serves them.
		return readFile(f, size)
	}
	return data, func() error { return syscall.Munmap(data) }, nil
}
