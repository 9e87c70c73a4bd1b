package fault_test

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/zcustody/suite/deploy/local/demo"
)

// loggedEvent is an event as the events search lists it.
type loggedEvent struct {
	ID     string `json:"id"`
	Type   string `json:"type"`
	Entity struct {
		Type, ID, Version string
	} `json:"entity"`
	Sequence string `json:"sequence"`
}

// companyLog pages through companyID's whole event log through the gateway.
func (s *suite) companyLog(t *testing.T, companyID string) []loggedEvent {
	t.Helper()
	var all []loggedEvent
	after := ""
	for range 100 {
		r := call(s.client(companyID, maker), http.MethodPost, "/v3/api/events/search", mustJSON(t, map[string]any{"after": after, "limit": 500}))
		var page struct {
			Items     []loggedEvent `json:"items"`
			NextToken string        `json:"nextToken"`
			HasMore   bool          `json:"hasMore"`
		}
		mustOK(t, r, &page)
		all = append(all, page.Items...)
		if !page.HasMore {
			return all
		}
		after = page.NextToken
	}
	t.Fatal("the events search did not end")
	return nil
}

// TestEventsWaitWhileTheEventsServiceIsDown: state changes made while the events service is
// stopped wait in the services' outboxes; once it is back every one arrives, once, each
// entity's events in version order without gaps, and the company's positions without gaps.
func TestEventsWaitWhileTheEventsServiceIsDown(t *testing.T) {
	t.Parallel()
	s := newSuite(t, setup{})
	if err := s.stack.StopService("events"); err != nil {
		t.Fatalf("stop events: %v", err)
	}
	c := s.client(demo.CompanyZTEST, maker)
	want := map[string]bool{}
	for i := range 4 {
		o := newOp(t, "events down", i)
		if r, id := send(c, o); id == "" {
			t.Fatalf("create while events is down: %d %s %v", r.status, r.body, r.err)
		} else {
			want[id] = true
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := s.stack.StartService(ctx, "events"); err != nil {
		t.Fatalf("start events: %v", err)
	}
	// Each wallet request waits for its maker's confirmation: its one event so far is
	// service_request.created.
	var log []loggedEvent
	waitFor(t, 30*time.Second, "every request's event in the log", func() bool {
		log = s.companyLog(t, demo.CompanyZTEST)
		done := 0
		for _, e := range log {
			if want[e.Entity.ID] && e.Type == "service_request.created" {
				done++
			}
		}
		return done == len(want)
	})
	versions := map[string][]string{}
	seen := map[string]bool{}
	for i, e := range log {
		if seq, _ := strconv.Atoi(e.Sequence); seq != i+1 {
			t.Fatalf("event %d is at position %s: positions have a gap or a repeat", i+1, e.Sequence)
		}
		if seen[e.ID] {
			t.Fatalf("event %s is in the log twice", e.ID)
		}
		seen[e.ID] = true
		if want[e.Entity.ID] {
			versions[e.Entity.ID] = append(versions[e.Entity.ID], e.Entity.Version+":"+e.Type)
		}
	}
	for id := range want {
		got := versions[id]
		if len(got) == 0 || got[0] != "1:service_request.created" {
			t.Errorf("request %s's events = %v, want created first", id, got)
		}
		for i, v := range got {
			if want := fmt.Sprint(i + 1); v[:len(want)+1] != want+":" {
				t.Errorf("request %s's events = %v: versions out of order or with a gap", id, got)
				break
			}
		}
	}
}
