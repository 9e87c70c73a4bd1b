package config

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// Listen opens the listening socket of an address setting: host:port, or fd:N for a
// socket the parent process opened and passed as file descriptor N (N ≥ 3), so that a
// supervisor or a test holds the port from before the process starts until after it ends
// and no other process can take it in between.
func Listen(addr string) (net.Listener, error) {
	fd, ok := strings.CutPrefix(addr, "fd:")
	if !ok {
		lis, err := net.Listen("tcp", addr)
		if err != nil {
			return nil, fmt.Errorf("listen %s: %w", addr, err)
		}
		return lis, nil
	}
	n, err := strconv.Atoi(fd)
	if err != nil || n < 3 {
		return nil, fmt.Errorf("listen %s: want fd:N with N ≥ 3", addr)
	}
	f := os.NewFile(uintptr(n), addr)
	if f == nil {
		return nil, fmt.Errorf("listen %s: no such file descriptor", addr)
	}
	defer f.Close() // FileListener holds its own copy of the descriptor.
	lis, err := net.FileListener(f)
	if err != nil {
		return nil, fmt.Errorf("listen %s: %w", addr, err)
	}
	return lis, nil
}

// Reserve opens a listening socket on a free loopback port and keeps it open as a bare file
// descriptor, for a server in this process to take over with Listen(setting): the port is
// never free between the pick and the server's start, so no other process can take it.
// release closes the descriptor when no server took it; once Listen took it, the server owns
// it and release must not be called.
func Reserve() (addr, setting string, release func(), err error) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", "", nil, fmt.Errorf("reserve a port: %w", err)
	}
	defer lis.Close()
	raw, err := lis.(*net.TCPListener).SyscallConn()
	if err != nil {
		return "", "", nil, fmt.Errorf("reserve a port: %w", err)
	}
	fd, dupErr := -1, error(nil)
	if err := raw.Control(func(f uintptr) { fd, dupErr = syscall.Dup(int(f)) }); err != nil {
		return "", "", nil, fmt.Errorf("reserve a port: %w", err)
	}
	if dupErr != nil {
		return "", "", nil, fmt.Errorf("reserve a port: %w", dupErr)
	}
	return lis.Addr().String(), "fd:" + strconv.Itoa(fd), func() { _ = syscall.Close(fd) }, nil
}
