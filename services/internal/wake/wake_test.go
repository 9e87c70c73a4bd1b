package wake_test

import (
	"testing"
	"time"

	"github.com/zcustody/suite/services/internal/wake"
)

// TestNotifyWakesEveryWaiter: every waiter that took C before a Notify hears it; one that
// takes C after waits for the next.
func TestNotifyWakesEveryWaiter(t *testing.T) {
	t.Parallel()
	s := wake.New()
	a, b := s.C(), s.C()
	s.Notify()
	for i, c := range []<-chan struct{}{a, b} {
		select {
		case <-c:
		case <-time.After(time.Second):
			t.Fatalf("waiter %d did not hear the notification", i)
		}
	}
	select {
	case <-s.C():
		t.Fatal("a waiter after the notification heard it")
	default:
	}
}
