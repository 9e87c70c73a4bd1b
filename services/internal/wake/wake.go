// Package wake lets a part of a process tell its pollers that work may be waiting, so that
// they can poll slowly while idle and still answer at once.
package wake

import "sync"

// Signal is a broadcast: every waiter of C hears each Notify.
type Signal struct {
	mu sync.Mutex
	ch chan struct{}
}

// New returns a signal nobody has notified yet.
func New() *Signal { return &Signal{ch: make(chan struct{})} }

// C returns a channel that is closed at the next Notify.
func (s *Signal) C() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ch
}

// Notify wakes every waiter of C; it never blocks.
func (s *Signal) Notify() {
	s.mu.Lock()
	defer s.mu.Unlock()
	close(s.ch)
	s.ch = make(chan struct{})
}
