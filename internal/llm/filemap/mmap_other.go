//go:build !(linux || darwin || freebsd || netbsd || openbsd)

package filemap

import "os"

// mapFile reads the whole file where memory mapping is not available.
func mapFile(f *os.File, size int64) (data []byte, release func() error, err error) {
	return readFile(f, size)
}
