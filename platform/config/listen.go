package config

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
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
