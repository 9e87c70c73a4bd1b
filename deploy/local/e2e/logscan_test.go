package e2e_test

import (
	"bytes"
	"strings"
	"sync"
)

// logs receives every log line of the stack during the run.
var logs lockedBuffer

type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// sent holds the request and approval signatures the tests sent.
var sent struct {
	mu   sync.Mutex
	sigs []string
}

// remember records a signature the run sent, to look for it in the logs.
func remember(sig string) {
	if len(sig) < 16 {
		return
	}
	sent.mu.Lock()
	sent.sigs = append(sent.sigs, sig)
	sent.mu.Unlock()
}

// secretMarkers betray key material or credentials: PEM blocks, principal tokens (base64url
// of `{"iss"`), and header values that carry signatures.
var secretMarkers = []string{"PRIVATE KEY", "BEGIN ", "eyJpc3Mi", "x-principal\":\"", "\"signature\":\"M"}

// secretsInLogs lists what of the run's secrets appears in its logs.
func secretsInLogs() []string {
	text := logs.String()
	var found []string
	for _, m := range secretMarkers {
		if strings.Contains(text, m) {
			found = append(found, "marker "+m)
		}
	}
	sent.mu.Lock()
	defer sent.mu.Unlock()
	for _, sig := range sent.sigs {
		if strings.Contains(text, sig) {
			found = append(found, "a signature the tests sent")
			break
		}
	}
	if len(text) == 0 {
		found = append(found, "no logs at all: the scan would prove nothing")
	}
	return found
}
