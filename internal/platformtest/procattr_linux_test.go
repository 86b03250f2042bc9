package platformtest

import "syscall"

// procAttr makes the kernel kill workerd if the test binary dies without
// running its cleanups (a -timeout panic, a kill): no workerd outlives it.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
