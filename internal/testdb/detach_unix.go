//go:build unix

package testdb

import "syscall"

// detached puts the watcher in its own session so that a signal to the test
// binary's process group does not take it down before it has cleaned up.
func detached() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }
