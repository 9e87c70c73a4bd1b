package e2e_test

import (
	"context"
	"crypto/ed25519"
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

// The webhook tests own ZDERIBIT's activations of the VASPs they register themselves
// (VASP-WH-…, restricted to ZDERIBIT), and ZDERIBIT's subscriptions.

// delivery is one request the receiver got.
type delivery struct {
	at     time.Time
	header http.Header
	body   []byte
	event  struct {
		ID        string `json:"id"`
		Type      string `json:"type"`
		CompanyID string `json:"companyId"`
		Entity    struct {
			Type    string `json:"type"`
			ID      string `json:"id"`
			Version int64  `json:"version"`
		} `json:"entity"`
		Data map[string]any `json:"data"`
	}
	status int // what the receiver answered
}

// receiver is a subscriber's endpoint: it records every request and answers what answer
// says for it.
type receiver struct {
	*httptest.Server
	mu     sync.Mutex
	got    []delivery
	answer func(d delivery, attempt int) int
	tries  map[string]int
}

func newReceiver(t *testing.T, answer func(d delivery, attempt int) int) *receiver {
	r := &receiver{answer: answer, tries: map[string]int{}}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		d := delivery{at: time.Now(), header: req.Header.Clone(), body: body}
		_ = json.Unmarshal(body, &d.event)
		r.mu.Lock()
		r.tries[d.event.ID]++
		d.status = r.answer(d, r.tries[d.event.ID])
		r.got = append(r.got, d)
		r.mu.Unlock()
		w.WriteHeader(d.status)
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *receiver) snapshot() []delivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]delivery(nil), r.got...)
}

func (r *receiver) setAnswer(f func(d delivery, attempt int) int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.answer = f
}

// delivered returns the deliveries answered 2xx.
func (r *receiver) delivered() []delivery {
	var out []delivery
	for _, d := range r.snapshot() {
		if d.status < 300 {
			out = append(out, d)
		}
	}
	return out
}

type subscriptionAnswer struct {
	Subscription struct {
		SubscriptionID string `json:"subscriptionId"`
		PublicKey      string `json:"publicKey"`
		Status         string `json:"status"`
		Pending        struct {
			ProposedAt string `json:"proposedAt"`
		} `json:"pending"`
	} `json:"subscription"`
	Secret string `json:"secret"`
}

// subscribe has ZDERIBIT's maker subscribe url and its checker approve it.
func subscribe(t *testing.T, url string, types ...string) subscriptionAnswer {
	t.Helper()
	return subscribeAs(t, demo.CompanyZDERIBIT, url, types...)
}

// subscribeAs has company's maker subscribe url and its checker approve it; the subscription
// is deleted when the test ends.
func subscribeAs(t *testing.T, company, url string, types ...string) subscriptionAnswer {
	t.Helper()
	var sub subscriptionAnswer
	wantOK(t, do(t, newClient(company, maker), http.MethodPost, "/v3/api/events/subscriptions", mustJSON(t, map[string]any{"url": url, "types": types})), &sub)
	var approved struct{ Subscription struct{ Status string } }
	wantOK(t, do(t, newClient(company, checker), http.MethodPost, "/v3/api/events/subscriptions/"+sub.Subscription.SubscriptionID+"/approve",
		mustJSON(t, map[string]any{"proposedAt": sub.Subscription.Pending.ProposedAt})), &approved)
	if approved.Subscription.Status != "ACTIVE" {
		t.Fatalf("approved subscription is %s, want ACTIVE", approved.Subscription.Status)
	}
	t.Cleanup(func() {
		var gone struct {
			SubscriptionID string `json:"subscriptionId"`
		}
		wantOK(t, do(t, newClient(company, maker), http.MethodPost, "/v3/api/events/subscriptions/"+sub.Subscription.SubscriptionID+"/delete", nil), &gone)
		if gone.SubscriptionID != sub.Subscription.SubscriptionID {
			t.Errorf("deleted %q, want %s", gone.SubscriptionID, sub.Subscription.SubscriptionID)
		}
	})
	return sub
}

// subscriberKeys are what a subscriber verifies deliveries with: the secret shown once and
// the subscription's public key.
func subscriberKeys(t *testing.T, sub subscriptionAnswer) (webhook.Secret, ed25519.PublicKey) {
	t.Helper()
	secret, err := webhook.ParseSecret(sub.Secret)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := webhook.ParsePublicKey(sub.Subscription.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	return secret, pub
}

// webhookVASP registers a VASP only ZDERIBIT sees, so that this test alone changes its
// activation.
func webhookVASP(t *testing.T) string {
	t.Helper()
	client, err := mongodb.Connect(context.Background(), env.stack.MongoURI)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = client.Disconnect(context.Background()) }()
	id := "VASP-WH-" + strings.ToUpper(uuid.NewString()[:8])
	v := compliance.VASP{ID: id, Name: "Webhook test " + id, TravelRuleMethod: compliance.TravelRuleManual, Country: "CH", Active: true,
		RestrictedCompanies: []string{demo.CompanyZDERIBIT}}
	if err := compliancestore.New(client.Database("compliance")).PutVASP(context.Background(), v); err != nil {
		t.Fatal(err)
	}
	return id
}

func toggle(t *testing.T, vasp string, valid bool) {
	t.Helper()
	var a vaspAnswer
	wantOK(t, do(t, newClient(demo.CompanyZDERIBIT, maker), http.MethodPost, vaspPath(vasp, fmt.Sprint(valid)), nil), &a)
}

func waitUntil(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, limit)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestWebhooksDeliverSignedInOrderAndRecover: a subscriber written from the README receives
// every event of its company, signed (v1 with its secret, v1a with the public key), each
// entity's events in version order even while one of them is retried after 500s, without
// holding up other entities; the attempts are listed; a resend arrives again with the same
// webhook-id; a 410 suspends a subscription at once, which the company's other subscription
// hears about, and enabling it again delivers what waited.
func TestWebhooksDeliverSignedInOrderAndRecover(t *testing.T) {
	t.Parallel()
	a, b := webhookVASP(t), webhookVASP(t)
	entityA, entityB := demo.CompanyZDERIBIT+":"+a, demo.CompanyZDERIBIT+":"+b
	rcv := newReceiver(t, func(d delivery, attempt int) int {
		if d.event.Entity.ID == entityA && d.event.Entity.Version == 1 && attempt <= 2 {
			return http.StatusInternalServerError
		}
		return http.StatusNoContent
	})
	sub := subscribe(t, rcv.URL+"/hooks", "vasp.activated", "vasp.deactivated", "webhook_subscription.suspended")
	secret, pub := subscriberKeys(t, sub)
	toggle(t, a, false)
	toggle(t, a, true)
	toggle(t, a, false)
	toggle(t, b, false)

	versionsOf := func(entity string) []int64 {
		var out []int64
		for _, d := range rcv.delivered() {
			if d.event.Entity.ID == entity {
				out = append(out, d.event.Entity.Version)
			}
		}
		return out
	}
	waitUntil(t, 60*time.Second, "A's three events and B's one delivered", func() bool { return len(versionsOf(entityA)) == 3 && len(versionsOf(entityB)) == 1 })
	if got := fmt.Sprint(versionsOf(entityA)); got != "[1 2 3]" {
		t.Errorf("A's events arrived as versions %s, want [1 2 3]", got)
	}
	var firstOfA, bDone time.Time
	doc := webhookDocument(t)
	for _, d := range rcv.snapshot() {
		checkWebhookBody(t, doc, d.event.Type, d.body)
		if d.event.CompanyID != demo.CompanyZDERIBIT {
			t.Fatalf("the subscriber received an event of %s", d.event.CompanyID)
		}
		if err := webhook.Verify(d.header, d.body, secret, nil, time.Now()); err != nil {
			t.Errorf("v1 of %s: %v", d.event.ID, err)
		}
		if err := webhook.Verify(d.header, d.body, nil, pub, time.Now()); err != nil {
			t.Errorf("v1a of %s: %v", d.event.ID, err)
		}
		if d.header.Get("webhook-id") != d.event.ID {
			t.Errorf("webhook-id %q, event id %q", d.header.Get("webhook-id"), d.event.ID)
		}
		switch {
		case d.event.Entity.ID == entityA && d.event.Entity.Version == 1 && d.status < 300:
			firstOfA = d.at
		case d.event.Entity.ID == entityA && d.event.Entity.Version > 1 && firstOfA.IsZero():
			t.Errorf("A's version %d was sent before version 1 was delivered", d.event.Entity.Version)
		case d.event.Entity.ID == entityB && d.status < 300:
			bDone = d.at
		}
	}
	if !bDone.Before(firstOfA) {
		t.Errorf("B was delivered at %s, after A's retried first event (%s): another entity was held up", bDone, firstOfA)
	}

	// The attempt history shows A's first event: two 500s, then delivered.
	var a1 string
	for _, d := range rcv.delivered() {
		if d.event.Entity.ID == entityA && d.event.Entity.Version == 1 {
			a1 = d.event.ID
		}
	}
	var attempts struct {
		Items []struct {
			Outcome    string `json:"outcome"`
			HTTPStatus int    `json:"httpStatus"`
			Trigger    string `json:"trigger"`
		} `json:"items"`
	}
	wantOK(t, do(t, newClient(demo.CompanyZDERIBIT, viewer), http.MethodPost, "/v3/api/events/deliveries/search", mustJSON(t, map[string]any{"eventId": a1})), &attempts)
	var outcomes []string
	for _, at := range attempts.Items {
		outcomes = append(outcomes, fmt.Sprintf("%s/%d/%s", at.Outcome, at.HTTPStatus, at.Trigger))
	}
	if got := strings.Join(outcomes, " "); got != "DELIVERED/204/SCHEDULED HTTP_ERROR/500/SCHEDULED HTTP_ERROR/500/SCHEDULED" {
		t.Errorf("attempts of A's first event, newest first = %s", got)
	}
	// Another company sees none of them.
	var foreign struct{ Items []any }
	wantOK(t, do(t, newClient(demo.CompanyZTEST, viewer), http.MethodPost, "/v3/api/events/deliveries/search", mustJSON(t, map[string]any{"eventId": a1})), &foreign)
	if len(foreign.Items) != 0 {
		t.Errorf("ZTEST lists %d attempts of ZDERIBIT's event", len(foreign.Items))
	}

	// A resend of one event arrives again under the same webhook-id, newly signed.
	before := len(rcv.snapshot())
	var resent struct{ Scheduled int }
	wantOK(t, do(t, newClient(demo.CompanyZDERIBIT, maker), http.MethodPost, "/v3/api/events/subscriptions/"+sub.Subscription.SubscriptionID+"/resend", mustJSON(t, map[string]any{"eventId": a1})), &resent)
	if resent.Scheduled != 1 {
		t.Fatalf("resend scheduled %d deliveries, want 1", resent.Scheduled)
	}
	waitUntil(t, 30*time.Second, "the resent event", func() bool {
		for _, d := range rcv.snapshot()[before:] {
			if d.event.ID == a1 && d.header.Get("webhook-id") == a1 {
				return true
			}
		}
		return false
	})

	// A second endpoint answers 410 Gone: suspended at once; the first endpoint hears of it.
	gone := newReceiver(t, func(delivery, int) int { return http.StatusGone })
	second := subscribe(t, gone.URL+"/gone", "vasp.activated", "vasp.deactivated")
	toggle(t, b, true)
	waitUntil(t, 30*time.Second, "the suspension event at the first endpoint", func() bool {
		for _, d := range rcv.delivered() {
			if d.event.Type == "webhook_subscription.suspended" && d.event.Entity.ID == second.Subscription.SubscriptionID {
				return true
			}
		}
		return false
	})
	if n := len(gone.snapshot()); n != 1 {
		t.Errorf("the gone endpoint got %d requests, want 1: a 410 suspends at once", n)
	}
	var list struct {
		Items []struct {
			SubscriptionID  string `json:"subscriptionId"`
			Status          string `json:"status"`
			SuspendedReason string `json:"suspendedReason"`
		} `json:"items"`
	}
	wantOK(t, do(t, newClient(demo.CompanyZDERIBIT, viewer), http.MethodPost, "/v3/api/events/subscriptions/search", []byte(`{}`)), &list)
	for _, s := range list.Items {
		if s.SubscriptionID == second.Subscription.SubscriptionID && (s.Status != "SUSPENDED" || s.SuspendedReason == "") {
			t.Errorf("the gone subscription is %s (%q), want SUSPENDED with a reason", s.Status, s.SuspendedReason)
		}
	}
	// The endpoint is fixed; enabling the subscription again delivers what waited.
	gone.setAnswer(func(delivery, int) int { return http.StatusOK })
	var enabled struct{ Subscription struct{ Status string } }
	wantOK(t, do(t, newClient(demo.CompanyZDERIBIT, maker), http.MethodPost, "/v3/api/events/subscriptions/"+second.Subscription.SubscriptionID+"/enable", nil), &enabled)
	if enabled.Subscription.Status != "ACTIVE" {
		t.Fatalf("enabled subscription is %s", enabled.Subscription.Status)
	}
	waitUntil(t, 30*time.Second, "the waiting event after enabling", func() bool {
		for _, d := range gone.delivered() {
			if d.event.Entity.ID == entityB && d.event.Entity.Version == 2 {
				return true
			}
		}
		return false
	})
}
