//go:build unix

package main

import (
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/sys/unix"
)

// foreground makes this process the terminal's foreground process group when it runs in the
// foreground of one, so that Ctrl-C interrupts the suite alone: it stops cleanly and exits 0,
// and the `make run` or `go run` above it, which no longer get the interrupt, exit 0 with it.
// The returned function gives the terminal back to the group it had. Without a terminal (CI,
// a background job) it does nothing.
func foreground() (restore func()) {
	tty, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
	if err != nil {
		return func() {}
	}
	fd := int(tty.Fd())
	owner, err := unix.IoctlGetInt(fd, unix.TIOCGPGRP)
	if err != nil || owner != syscall.Getpgrp() {
		tty.Close()
		return func() {}
	}
	// A background group that sets the foreground group gets SIGTTOU: ignore it for the
	// switch and for the switch back.
	signal.Ignore(syscall.SIGTTOU)
	if err := syscall.Setpgid(0, 0); err != nil {
		tty.Close()
		return func() {}
	}
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPGRP, syscall.Getpgrp()); err != nil {
		_ = syscall.Setpgid(0, owner)
		tty.Close()
		return func() {}
	}
	return func() {
		_ = unix.IoctlSetPointerInt(fd, unix.TIOCSPGRP, owner)
		tty.Close()
	}
}
