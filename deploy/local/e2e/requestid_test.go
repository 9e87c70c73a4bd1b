package e2e_test

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/zcustody/suite/deploy/local/demo"
	"github.com/zcustody/suite/platform/signing"
)

// TestRequestFoundByItsIdentifier: support finds a request in every process's log by the
// request-identifier the client sent, and in one W3C trace: the client's traceparent reaches
// the gateway, the service that answers (custody) and the service custody asks in turn (the
// service desk, for the caller's identity), each line naming the request id and the client's
// trace id, each process its own span. The gateway echoes the id.
func TestRequestFoundByItsIdentifier(t *testing.T) {
	t.Parallel()
	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	c := newClient(demo.CompanyZTEST, checker)
	req, err := c.NewRequest(http.MethodGet, "/v2/api/core/wallets/"+demo.PendingWalletID+"/proposal", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("traceparent", "00-"+traceID+"-00f067aa0ba902b7-01")
	id := req.Header.Get(signing.HeaderRequestID)
	r := send(t, req)
	if r.status != http.StatusOK {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	if got := r.header.Get(signing.HeaderRequestID); got != id {
		t.Errorf("request-identifier echoed as %q, want %q", got, id)
	}

	services := map[string]bool{}
	spans := map[string]bool{}
	sc := bufio.NewScanner(strings.NewReader(logs.String()))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var line struct {
			Service   string `json:"service"`
			RequestID string `json:"request_id"`
			TraceID   string `json:"trace_id"`
			SpanID    string `json:"span_id"`
			Msg       string `json:"msg"`
		}
		if json.Unmarshal(sc.Bytes(), &line) != nil || line.RequestID != id {
			continue
		}
		if line.TraceID != traceID {
			t.Errorf("%s logged %q with trace %s, want the client's %s", line.Service, line.Msg, line.TraceID, traceID)
		}
		services[line.Service] = true
		spans[line.SpanID] = true
	}
	for _, s := range []string{"gateway", "custody", "servicedesk"} {
		if !services[s] {
			t.Errorf("no %s line names request %s (found %v)", s, id, services)
		}
	}
	if len(spans) < 3 {
		t.Errorf("spans %v, want one per process", spans)
	}
}
