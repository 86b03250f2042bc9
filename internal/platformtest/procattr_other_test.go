//go:build !linux

package platformtest

import "syscall"

// procAttr is nothing where there is no parent-death signal: t.Cleanup
// stops workerd, but a test binary killed outright leaves it running.
func procAttr() *syscall.SysProcAttr { return nil }
