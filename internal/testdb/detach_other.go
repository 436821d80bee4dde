//go:build !unix

package testdb

import "syscall"

func detached() *syscall.SysProcAttr { return nil }

func closeInheritedOnExec() {}
