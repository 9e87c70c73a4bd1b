package config_test

import (
	"net"
	"strings"
	"testing"

	"github.com/zcustody/suite/platform/config"
)

func TestListenOnAReservedSocket(t *testing.T) {
	addr, setting, _, err := config.Reserve()
	if err != nil {
		t.Fatal(err)
	}
	// The port stays taken after Reserve returned: the descriptor holds it.
	if lis, err := net.Listen("tcp", addr); err == nil {
		lis.Close()
		t.Fatalf("%s was free while its socket was held", addr)
	}
	lis, err := config.Listen(setting)
	if err != nil {
		t.Fatal(err)
	}
	defer lis.Close()
	if lis.Addr().String() != addr {
		t.Fatalf("listening on %s, want %s", lis.Addr(), addr)
	}
	go func() {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
		}
	}()
	conn, err := lis.Accept()
	if err != nil {
		t.Fatalf("accept on the passed socket: %v", err)
	}
	conn.Close()
}

func TestReleaseFreesAnUntakenReservation(t *testing.T) {
	addr, _, release, err := config.Reserve()
	if err != nil {
		t.Fatal(err)
	}
	release()
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("%s still taken after release: %v", addr, err)
	}
	lis.Close()
}

func TestListenRefuses(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	for _, addr := range []string{taken.Addr().String(), "fd:x", "fd:1", "fd:999999"} {
		lis, err := config.Listen(addr)
		if err == nil {
			lis.Close()
			t.Errorf("Listen(%q) succeeded", addr)
			continue
		}
		if !strings.Contains(err.Error(), addr) {
			t.Errorf("Listen(%q): %v does not name the address", addr, err)
		}
	}
}
