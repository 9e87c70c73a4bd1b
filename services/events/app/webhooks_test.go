package app_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/zcustody/suite/platform/principal"
	"github.com/zcustody/suite/platform/webhook"
	eventsv1 "github.com/zcustody/suite/proto/events/v1"
	"github.com/zcustody/suite/services/events"
	"github.com/zcustody/suite/services/events/app"
	"github.com/zcustody/suite/services/events/server"
	internalapp "github.com/zcustody/suite/services/internal/app"
	"github.com/zcustody/suite/services/internal/chaintest"
)

// person is an API user of company with one role and an e-mail of its own.
func person(company, role, name string) principal.Principal {
	p := chaintest.User(company, role)
	p.UserEmail = name + "@" + strings.ToLower(company) + ".example"
	return p
}

type hooks struct {
	*suite
	client eventsv1.WebhookServiceClient
	raw    func(t *testing.T, id string) bson.M
}

func startHooks(t *testing.T) *hooks {
	t.Helper()
	h := &hooks{suite: &suite{}}
	h.c = chaintest.Start(t, server.Policy(), func(ctx context.Context, deps *internalapp.Deps, cfg app.Config) error {
		h.raw = func(t *testing.T, id string) bson.M {
			t.Helper()
			var m bson.M
			if err := deps.DB.Collection("subscriptions").FindOne(context.Background(), bson.D{{Key: "_id", Value: id}}).Decode(&m); err != nil {
				t.Fatal(err)
			}
			return m
		}
		return app.Register(ctx, deps, cfg)
	}, config())
	h.client = eventsv1.NewWebhookServiceClient(h.c.Conn())
	return h
}

func (h *hooks) as(t *testing.T, p principal.Principal) context.Context {
	return h.c.AsCaller(t, context.Background(), p)
}

func TestSubscriptionNeedsACheckerForItsURLAndSecret(t *testing.T) {
	t.Parallel()
	h := startHooks(t)
	maker, checker := person(chaintest.ClientCompany, principal.RoleMaker, "mia"), person(chaintest.ClientCompany, principal.RoleChecker, "carl")
	makerChecker := person(chaintest.ClientCompany, principal.RoleMaker, "mia")
	makerChecker.Roles = []string{principal.RoleMaker, principal.RoleChecker}

	created, err := h.client.CreateSubscription(h.as(t, maker), &eventsv1.CreateSubscriptionRequest{Url: "http://127.0.0.1:9/hook", Types: []string{"settlement.complete"}})
	if err != nil {
		t.Fatalf("CreateSubscription: %v", err)
	}
	sub := created.GetSubscription()
	if _, err := webhook.ParseSecret(created.GetSecret()); err != nil {
		t.Fatalf("secret %q: %v", created.GetSecret(), err)
	}
	if _, err := webhook.ParsePublicKey(sub.GetPublicKey()); err != nil {
		t.Fatalf("public key %q: %v", sub.GetPublicKey(), err)
	}
	if sub.GetStatus() != "PENDING_APPROVAL" || sub.GetPending().GetKind() != "CREATE" || sub.GetPending().GetProposedBy() != maker.UserEmail {
		t.Fatalf("new subscription = %v, want PENDING_APPROVAL with the maker's CREATE", sub)
	}
	// The secret is at rest sealed, never in clear.
	if raw := h.raw(t, sub.GetSubscriptionId()); strings.Contains(bson.Raw(mustMarshal(t, raw)).String(), strings.TrimPrefix(created.GetSecret(), "whsec_")) {
		t.Fatal("the stored subscription holds the secret in clear")
	}
	decide := func(p principal.Principal, decision string) (*eventsv1.Subscription, error) {
		if decision == "reject" {
			r, err := h.client.RejectSubscriptionChange(h.as(t, p), &eventsv1.RejectSubscriptionChangeRequest{SubscriptionId: sub.GetSubscriptionId()})
			return r.GetSubscription(), err
		}
		// The checker reads the waiting change and approves that one.
		list, err := h.client.SearchSubscriptions(h.as(t, p), &eventsv1.SearchSubscriptionsRequest{})
		if err != nil {
			return nil, err
		}
		seen := ""
		for _, s := range list.GetItems() {
			if s.GetSubscriptionId() == sub.GetSubscriptionId() {
				seen = s.GetPending().GetProposedAt()
			}
		}
		r, err := h.client.ApproveSubscriptionChange(h.as(t, p), &eventsv1.ApproveSubscriptionChangeRequest{SubscriptionId: sub.GetSubscriptionId(), ProposedAt: seen})
		return r.GetSubscription(), err
	}
	// An approval names the change it approves: another time, or none, approves nothing.
	for _, seen := range []string{"2026-01-01T00:00:00.000Z", ""} {
		_, err := h.client.ApproveSubscriptionChange(h.as(t, checker), &eventsv1.ApproveSubscriptionChangeRequest{SubscriptionId: sub.GetSubscriptionId(), ProposedAt: seen})
		if want := map[bool]codes.Code{true: codes.InvalidArgument, false: codes.FailedPrecondition}[seen == ""]; status.Code(err) != want {
			t.Fatalf("approval of the change proposed at %q = %v, want %s", seen, err, want)
		}
	}
	if _, err := decide(makerChecker, "approve"); status.Code(err) != codes.PermissionDenied {
		t.Fatalf("the maker approving its own subscription = %v, want PermissionDenied", err)
	}
	if _, err := decide(maker, "approve"); status.Code(err) != codes.PermissionDenied {
		t.Fatalf("a maker without the checker role approving = %v, want PermissionDenied", err)
	}
	active, err := decide(checker, "approve")
	if err != nil || active.GetStatus() != "ACTIVE" || active.GetPending() != nil {
		t.Fatalf("checker's approval = %v, %v; want ACTIVE and nothing pending", active, err)
	}
	// A new URL waits for a checker; the old one stays in force.
	updated, err := h.client.UpdateSubscription(h.as(t, maker), &eventsv1.UpdateSubscriptionRequest{SubscriptionId: sub.GetSubscriptionId(), Url: ptr("http://127.0.0.1:10/new")})
	changed := updated.GetSubscription()
	if err != nil || changed.GetUrl() != "http://127.0.0.1:9/hook" || changed.GetPending().GetUrl() != "http://127.0.0.1:10/new" {
		t.Fatalf("URL change = %v, %v; want the old URL in force and the new one pending", changed, err)
	}
	if _, err := h.client.RotateSubscriptionSecret(h.as(t, maker), &eventsv1.RotateSubscriptionSecretRequest{SubscriptionId: sub.GetSubscriptionId()}); status.Code(err) != codes.FailedPrecondition {
		t.Fatalf("a second change while one waits = %v, want FailedPrecondition", err)
	}
	if changed, err = decide(checker, "approve"); err != nil || changed.GetUrl() != "http://127.0.0.1:10/new" {
		t.Fatalf("URL approval = %v, %v", changed, err)
	}
	rotated, err := h.client.RotateSubscriptionSecret(h.as(t, maker), &eventsv1.RotateSubscriptionSecretRequest{SubscriptionId: sub.GetSubscriptionId()})
	if err != nil || rotated.GetSecret() == created.GetSecret() || rotated.GetSubscription().GetPending().GetKind() != "SECRET" {
		t.Fatalf("rotation = %v, %v; want a new secret pending", rotated, err)
	}
	if changed, err = decide(checker, "approve"); err != nil || changed.GetPreviousSecretUntil() == "" {
		t.Fatalf("rotation approval = %v, %v; want the previous secret kept for the overlap", changed, err)
	}
	// The switch changes at once; wider types (every type, from one) wait for a checker.
	offAnswer, err := h.client.UpdateSubscription(h.as(t, maker), &eventsv1.UpdateSubscriptionRequest{SubscriptionId: sub.GetSubscriptionId(), SetTypes: true, Enabled: ptr(false)})
	off := offAnswer.GetSubscription()
	if err != nil || off.GetEnabled() || fmt.Sprint(off.GetTypes()) != "[settlement.complete]" || off.GetPending().GetKind() != "TYPES" {
		t.Fatalf("switch and wider types = %v, %v; want switched off, the old types in force, TYPES pending", off, err)
	}
	if widened, err := decide(checker, "approve"); err != nil || len(widened.GetTypes()) != 0 {
		t.Fatalf("types approval = %v, %v; want every type", widened, err)
	}
	// Narrowing needs nobody.
	narrowAnswer, err := h.client.UpdateSubscription(h.as(t, maker), &eventsv1.UpdateSubscriptionRequest{SubscriptionId: sub.GetSubscriptionId(), SetTypes: true, Types: []string{"withdrawal.accepted"}})
	if narrow := narrowAnswer.GetSubscription(); err != nil || fmt.Sprint(narrow.GetTypes()) != "[withdrawal.accepted]" || narrow.GetPending() != nil {
		t.Fatalf("narrowing = %v, %v; want it at once", narrow, err)
	}
	// While a creation waits, its types are what the checker sees.
	waiting, err := h.client.CreateSubscription(h.as(t, maker), &eventsv1.CreateSubscriptionRequest{Url: "http://127.0.0.1:11/x", Types: []string{"vasp.activated"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.client.UpdateSubscription(h.as(t, maker), &eventsv1.UpdateSubscriptionRequest{SubscriptionId: waiting.GetSubscription().GetSubscriptionId(), SetTypes: true}); status.Code(err) != codes.FailedPrecondition {
		t.Fatalf("changing a waiting creation's types = %v, want FailedPrecondition", err)
	}
	// Another company sees none of it.
	other := person(chaintest.OperatorCompany, principal.RoleMaker, "olga")
	list, err := h.client.SearchSubscriptions(h.as(t, other), &eventsv1.SearchSubscriptionsRequest{})
	if err != nil || len(list.GetItems()) != 0 {
		t.Fatalf("another company lists %v, %v", list, err)
	}
	if _, err := h.client.EnableSubscription(h.as(t, other), &eventsv1.EnableSubscriptionRequest{SubscriptionId: sub.GetSubscriptionId()}); status.Code(err) != codes.NotFound {
		t.Fatalf("another company enabling it = %v, want NotFound", err)
	}
	mine, err := h.client.SearchSubscriptions(h.as(t, chaintest.Company(chaintest.ClientCompany)), &eventsv1.SearchSubscriptionsRequest{})
	if err != nil || len(mine.GetItems()) != 2 {
		t.Fatalf("the company lists %v, %v", mine, err)
	}
}

func TestSubscriptionURLsTheDispatcherWouldRefuseAreRefused(t *testing.T) {
	t.Parallel()
	h := startHooks(t)
	maker := person(chaintest.ClientCompany, principal.RoleMaker, "mia")
	for _, u := range []string{"ftp://example.com/x", "not a url", "https://user:pw@example.com/x"} {
		if _, err := h.client.CreateSubscription(h.as(t, maker), &eventsv1.CreateSubscriptionRequest{Url: u}); status.Code(err) != codes.InvalidArgument {
			t.Errorf("URL %q = %v, want InvalidArgument", u, err)
		}
	}
}

func mustMarshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := bson.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestProductionRefusesPublishedWebhookKeys: every keyring written in the repository (the
// Kubernetes example, the local suite's, the tests') is refused with PRODUCTION=true.
func TestProductionRefusesPublishedWebhookKeys(t *testing.T) {
	t.Parallel()
	example, err := os.ReadFile("../../../deploy/k8s/base/secrets/webhook-keys.env")
	if err != nil {
		t.Fatal(err)
	}
	var keys, current string
	for line := range strings.SplitSeq(string(example), "\n") {
		if v, ok := strings.CutPrefix(line, "WEBHOOK_KEYS="); ok {
			keys = v
		}
		if v, ok := strings.CutPrefix(line, "WEBHOOK_KEY_CURRENT="); ok {
			current = v
		}
	}
	fresh := make([]byte, 32)
	fresh[0] = 42
	own := "fresh=" + base64.StdEncoding.EncodeToString(fresh)
	for name, cfg := range map[string]app.WebhookConfig{
		"the Kubernetes example":             {Keys: keys, KeyCurrent: current},
		"the tests' keyring":                 config().Webhooks,
		"a fresh key beside a published one": {Keys: own + "," + testKeys, KeyCurrent: "fresh"},
	} {
		if _, err := cfg.Keyring(true); err == nil || !strings.Contains(err.Error(), "published") {
			t.Errorf("%s in production: %v, want refused as published", name, err)
		}
		if k, err := cfg.Keyring(false); err != nil || k == nil {
			t.Errorf("%s outside production: %v", name, err)
		}
	}
	if k, err := (app.WebhookConfig{Keys: own, KeyCurrent: "fresh"}).Keyring(true); err != nil || k == nil {
		t.Errorf("a key of the deployment's own in production: %v", err)
	}
}

func TestNothingIsResentToASubscriptionBeforeItsApproval(t *testing.T) {
	t.Parallel()
	h := startHooks(t)
	maker := person(chaintest.ClientCompany, principal.RoleMaker, "mia")
	created, err := h.client.CreateSubscription(h.as(t, maker), &eventsv1.CreateSubscriptionRequest{Url: "http://127.0.0.1:9/hook"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = h.client.ResendEvents(h.as(t, maker), &eventsv1.ResendEventsRequest{SubscriptionId: created.GetSubscription().GetSubscriptionId(), FailedSince: "2026-01-01T00:00:00Z"})
	if status.Code(err) != codes.FailedPrecondition {
		t.Fatalf("resend to a subscription waiting for its checker = %v, want FailedPrecondition", err)
	}
}

// TestSubscriptionsAreCappedAndDeleted: a company has at most MaxSubscriptions, rejected
// ones aside; a maker deletes one (another company cannot, a checker alone cannot), and
// then it is gone from the list and makes room.
func TestSubscriptionsAreCappedAndDeleted(t *testing.T) {
	t.Parallel()
	h := startHooks(t)
	maker, checker := person(chaintest.ClientCompany, principal.RoleMaker, "mia"), person(chaintest.ClientCompany, principal.RoleChecker, "carl")
	stranger := person(chaintest.OperatorCompany, principal.RoleMaker, "sam")
	create := func() (*eventsv1.Subscription, error) {
		r, err := h.client.CreateSubscription(h.as(t, maker), &eventsv1.CreateSubscriptionRequest{Url: "http://127.0.0.1:9/hook"})
		return r.GetSubscription(), err
	}
	first, err := create()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.client.RejectSubscriptionChange(h.as(t, checker), &eventsv1.RejectSubscriptionChangeRequest{SubscriptionId: first.GetSubscriptionId()}); err != nil {
		t.Fatal(err)
	}
	var last *eventsv1.Subscription
	for i := range events.MaxSubscriptions {
		if last, err = create(); err != nil {
			t.Fatalf("subscription %d of %d (one rejected aside): %v", i+1, events.MaxSubscriptions, err)
		}
	}
	if _, err := create(); status.Code(err) != codes.FailedPrecondition {
		t.Fatalf("subscription %d = %v, want FailedPrecondition", events.MaxSubscriptions+1, err)
	}
	del := func(p principal.Principal, id string) error {
		_, err := h.client.DeleteSubscription(h.as(t, p), &eventsv1.DeleteSubscriptionRequest{SubscriptionId: id})
		return err
	}
	if err := del(stranger, last.GetSubscriptionId()); status.Code(err) != codes.NotFound {
		t.Fatalf("another company deleting = %v, want NotFound", err)
	}
	if err := del(checker, last.GetSubscriptionId()); status.Code(err) != codes.PermissionDenied {
		t.Fatalf("a checker deleting = %v, want PermissionDenied", err)
	}
	for _, id := range []string{last.GetSubscriptionId(), first.GetSubscriptionId()} {
		if err := del(maker, id); err != nil {
			t.Fatalf("the maker deleting %s: %v", id, err)
		}
	}
	list, err := h.client.SearchSubscriptions(h.as(t, maker), &eventsv1.SearchSubscriptionsRequest{})
	if err != nil || len(list.GetItems()) != events.MaxSubscriptions-1 {
		t.Fatalf("after two deletions: %d subscriptions, %v; want %d", len(list.GetItems()), err, events.MaxSubscriptions-1)
	}
	for _, s := range list.GetItems() {
		if s.GetSubscriptionId() == last.GetSubscriptionId() || s.GetSubscriptionId() == first.GetSubscriptionId() {
			t.Fatalf("deleted subscription %s is still listed", s.GetSubscriptionId())
		}
	}
	if _, err := create(); err != nil {
		t.Fatalf("a subscription after a deletion: %v", err)
	}
}
