package main

import (
	"os/exec"
	"syscall"
)

// ownGroup puts a child in a process group of its own, so that a Ctrl-C in the terminal
// reaches -role all alone, which stops the children in order; and has the kernel stop
// it (SIGTERM) if -role all dies first.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}
