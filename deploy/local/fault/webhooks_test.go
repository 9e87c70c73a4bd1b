package fault_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/zcustody/suite/deploy/local/demo"
	"github.com/zcustody/suite/platform/mongodb"
	"github.com/zcustody/suite/platform/webhook"
	"github.com/zcustody/suite/services/compliance"
	compliancestore "github.com/zcustody/suite/services/compliance/store"
)

// hookReceiver records each request of a subscriber's endpoint and answers 204 after a
// pause, so that a process stopped meanwhile is stopped in the middle of a delivery.
type hookReceiver struct {
	*httptest.Server
	mu  sync.Mutex
	got []hookDelivery
}

type hookDelivery struct {
	id      string
	entity  string
	version int64
	header  http.Header
	body    []byte
	at      time.Time
}

func newHookReceiver(t *testing.T, pause time.Duration) *hookReceiver {
	r := &hookReceiver{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		var e struct {
			ID     string `json:"id"`
			Entity struct {
				ID      string `json:"id"`
				Version int64  `json:"version"`
			} `json:"entity"`
		}
		_ = json.Unmarshal(body, &e)
		d := hookDelivery{id: e.ID, entity: e.Entity.ID, version: e.Entity.Version, header: req.Header.Clone(), body: body, at: time.Now()}
		time.Sleep(pause)
		r.mu.Lock()
		r.got = append(r.got, d)
		r.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *hookReceiver) deliveries() []hookDelivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]hookDelivery(nil), r.got...)
}

// TestWebhooksSurviveTheDispatcherAndAServiceStopping: a stream of state changes of two
// entities while the dispatcher and the service that makes the changes are stopped in the
// middle of deliveries and started again: the subscriber receives every event, each
// verified, and each entity's events in version order (a repeat of one just received is
// allowed; it dedupes by webhook-id).
func TestWebhooksSurviveTheDispatcherAndAServiceStopping(t *testing.T) {
	t.Parallel()
	s := newSuite(t, setup{})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	client, err := mongodb.Connect(ctx, s.direct)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = client.Disconnect(context.Background()) }()
	var vasps []string
	for range 2 {
		id := "VASP-FAULT-" + strings.ToUpper(uuid.NewString()[:8])
		if err := compliancestore.New(client.Database("compliance")).PutVASP(ctx, compliance.VASP{ID: id, Name: id, TravelRuleMethod: compliance.TravelRuleManual,
			Country: "CH", Active: true, RestrictedCompanies: []string{demo.CompanyZACME}}); err != nil {
			t.Fatal(err)
		}
		vasps = append(vasps, id)
	}
	var sub struct {
		Subscription struct {
			SubscriptionID string
			Pending        struct{ ProposedAt string }
		} `json:"subscription"`
		Secret string `json:"secret"`
	}
	rcv := newHookReceiver(t, 150*time.Millisecond)
	mustOK(t, call(s.client(demo.CompanyZACME, maker), http.MethodPost, "/v3/api/events/subscriptions",
		mustJSON(t, map[string]any{"url": rcv.URL + "/hooks", "types": []string{"vasp.activated", "vasp.deactivated"}})), &sub)
	secret, err := webhook.ParseSecret(sub.Secret)
	if err != nil {
		t.Fatal(err)
	}
	mustOK(t, call(s.client(demo.CompanyZACME, "checker"), http.MethodPost, "/v3/api/events/subscriptions/"+sub.Subscription.SubscriptionID+"/approve",
		mustJSON(t, map[string]any{"proposedAt": sub.Subscription.Pending.ProposedAt})), &struct{}{})

	toggles := 0
	change := func(n int) {
		for range n {
			for _, v := range vasps {
				mustOK(t, call(s.client(demo.CompanyZACME, maker), http.MethodPost, fmt.Sprintf("/v3/api/compliance/vasps/%s/activate/%v", v, toggles%2 == 1), nil), &struct{}{})
			}
			toggles++
		}
	}
	change(6)
	waitFor(t, 30*time.Second, "a first delivery", func() bool { return len(rcv.deliveries()) > 0 })
	// Stop the dispatcher in the middle of the stream, and compliance (whose relay may hold
	// events not yet handed over).
	if err := s.stack.StopService("dispatcher"); err != nil {
		t.Fatalf("stop dispatcher: %v", err)
	}
	if err := s.stack.StopService("compliance"); err != nil {
		t.Fatalf("stop compliance: %v", err)
	}
	if err := s.stack.StartService(ctx, "compliance"); err != nil {
		t.Fatalf("start compliance: %v", err)
	}
	change(6)
	if err := s.stack.StartService(ctx, "dispatcher"); err != nil {
		t.Fatalf("start dispatcher: %v", err)
	}
	want := toggles
	waitFor(t, 90*time.Second, "every event delivered", func() bool {
		seen := map[string]bool{}
		for _, d := range rcv.deliveries() {
			seen[d.id] = true
		}
		return len(seen) == want*len(vasps)
	})
	last := map[string]int64{}
	for _, d := range rcv.deliveries() {
		if err := webhook.Verify(d.header, d.body, secret, nil, d.at); err != nil {
			t.Errorf("delivery of %s does not verify: %v", d.id, err)
		}
		prev := last[d.entity]
		switch {
		case d.version == prev+1:
			last[d.entity] = d.version
		case d.version <= prev:
			// A repeat of one received (a dispatcher stopped before it recorded the answer).
		default:
			t.Errorf("%s: version %d arrived after %d: out of order or a gap", d.entity, d.version, prev)
		}
	}
	for _, v := range vasps {
		if got := last[demo.CompanyZACME+":"+v]; got != int64(want) {
			t.Errorf("%s: versions up to %d arrived in order, want %d", v, got, want)
		}
	}
}
