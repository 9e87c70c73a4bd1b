package journal_test

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/zcustody/suite/services/internal/journal"
)

func TestTransferAndRetries(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "W1", "W2")
	f.deposit("dep-1", "W1", "BTC", "10")

	if _, err := f.j.Record(f.ctx, transfer("t-1", "W1", "W2", "BTC", "2.5")); err != nil {
		t.Fatal(err)
	}
	res, err := f.j.Record(f.ctx, transfer("t-1", "W1", "W2", "BTC", "2.5"))
	if err != nil || !res.Replayed {
		t.Fatalf("retry of t-1 = %+v, %v; want a replay", res, err)
	}
	var exists *journal.ExistsError
	if _, err := f.j.Record(f.ctx, transfer("t-1", "W1", "W2", "BTC", "3")); !errors.As(err, &exists) || exists.Field != "legs[0].amount" {
		t.Fatalf("t-1 with another amount: %v; want ExistsError naming legs[0].amount", err)
	}
	if got, want := f.balance("W1", "BTC"), "7.5/7.5/0/0"; got != want {
		t.Errorf("W1 = %s, want %s", got, want)
	}
	if got, want := f.balance("W2", "BTC"), "2.5/2.5/0/0"; got != want {
		t.Errorf("W2 = %s, want %s", got, want)
	}
	f.reconciled()
}

func TestRefusals(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "W1", "W2")
	f.deposit("dep-1", "W1", "ETH", "1")
	tests := []struct {
		name string
		give journal.Entry
		want error
	}{
		{"overdraft", transfer("t-over", "W1", "W2", "ETH", "1.000000000000000001"), journal.ErrInsufficient},
		{"unknown wallet", transfer("t-unknown", "W1", "W9", "ETH", "0.1"), journal.ErrAccountNotFound},
		{"unbalanced", journal.Entry{ID: "t-unbalanced", Kind: journal.Single, Legs: []journal.Leg{
			{Holder: "W1", Currency: "ETH", Side: journal.Debit, Amount: amt("1")},
			{Holder: "W2", Currency: "ETH", Side: journal.Credit, Amount: amt("0.9")}}}, journal.ErrUnbalanced},
		{"two currencies", journal.Entry{ID: "t-fx", Kind: journal.Single, Legs: []journal.Leg{
			{Holder: "W1", Currency: "ETH", Side: journal.Debit, Amount: amt("1")},
			{Holder: "W2", Currency: "BTC", Side: journal.Credit, Amount: amt("1")}}}, journal.ErrUnbalanced},
		{"one leg", journal.Entry{ID: "t-one", Kind: journal.Single, Legs: []journal.Leg{
			{Holder: "W1", Currency: "ETH", Side: journal.Debit, Amount: amt("1")}}}, journal.ErrInvalidEntry},
		{"zero amount", transfer("t-zero", "W1", "W2", "ETH", "0"), journal.ErrInvalidEntry},
		{"post through Record", journal.Entry{ID: "t-post", Kind: journal.Post, HoldRef: "h"}, journal.ErrInvalidEntry},
	}
	for _, tt := range tests {
		if _, err := f.j.Record(f.ctx, tt.give); !errors.Is(err, tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, err, tt.want)
		}
	}
	if got, want := f.balance("W1", "ETH"), "1/1/0/0"; got != want {
		t.Errorf("W1 after refusals = %s, want %s (unchanged)", got, want)
	}
	// Voiding a hold that was never placed blocks its id: the hold can no longer be placed
	// (a slow runner of it arriving after the release).
	if _, err := f.j.Resolve(f.ctx, "h-late:void", "h-late", journal.Void, "test.void"); !errors.Is(err, journal.ErrHoldNotFound) {
		t.Errorf("void of an absent hold: %v, want ErrHoldNotFound", err)
	}
	if _, err := f.j.Record(f.ctx, hold("h-late", "W1", "clr:S1", "ETH", "0.5")); !errors.Is(err, journal.ErrEntryExists) {
		t.Errorf("the hold after its void: %v, want it refused (ErrEntryExists)", err)
	}
	// A refusal for lack of funds stays: once funded, the same id is still refused (a slow
	// runner of it can never apply it later); a new attempt takes a new id.
	f.deposit("dep-2", "W1", "ETH", "1")
	if _, err := f.j.Record(f.ctx, transfer("t-over", "W1", "W2", "ETH", "1.000000000000000001")); !errors.Is(err, journal.ErrInsufficient) {
		t.Fatalf("t-over once funded: %v, want the first refusal again", err)
	}
	if _, err := f.j.Record(f.ctx, transfer("t-over-2", "W1", "W2", "ETH", "1.000000000000000001")); err != nil {
		t.Fatalf("a new attempt once funded: %v", err)
	}
	f.reconciled()
}

func TestHoldPostVoidExpire(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "W1", "W2")
	f.deposit("dep-1", "W1", "BTC", "5")
	for _, h := range []journal.Entry{hold("h-post", "W1", "clr:S1", "BTC", "2"), hold("h-void", "W1", "clr:S1", "BTC", "1")} {
		if _, err := f.j.Record(f.ctx, h); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := f.balance("W1", "BTC"), "2/5/3/0"; got != want {
		t.Fatalf("W1 with two holds = %s, want %s", got, want)
	}
	if _, err := f.j.Record(f.ctx, hold("h-over", "W1", "clr:S1", "BTC", "2.00000001")); !errors.Is(err, journal.ErrInsufficient) {
		t.Fatalf("a hold beyond available: %v, want ErrInsufficient", err)
	}
	steps := []struct {
		name       string
		id, holdID string
		kind       journal.Kind
		want       error
	}{
		{"post", "h-post:post", "h-post", journal.Post, nil},
		{"post again", "h-post:post", "h-post", journal.Post, nil},
		{"void after post", "h-post:void", "h-post", journal.Void, journal.ErrHoldAlreadyPosted},
		{"void", "h-void:void", "h-void", journal.Void, nil},
		{"post after void", "h-void:post", "h-void", journal.Post, journal.ErrHoldAlreadyVoided},
		{"no such hold", "x:post", "h-none", journal.Post, journal.ErrHoldNotFound},
		{"refused hold", "h-over:post", "h-over", journal.Post, journal.ErrHoldNotFound},
		{"a transfer is no hold", "dep-1:post", "dep-1", journal.Post, journal.ErrHoldNotFound},
	}
	for _, s := range steps {
		if _, err := f.j.Resolve(f.ctx, s.id, s.holdID, s.kind, "test."+string(s.kind)); !errors.Is(err, s.want) {
			t.Errorf("%s: %v, want %v", s.name, err, s.want)
		}
	}
	if got, want := f.balance("W1", "BTC"), "3/3/0/0"; got != want {
		t.Errorf("W1 = %s, want %s", got, want)
	}
	if got, want := f.balance("clr:S1", "BTC"), "2/2/0/0"; got != want {
		t.Errorf("clearing = %s, want %s", got, want)
	}

	expiring := hold("h-exp", "W1", "clr:S1", "BTC", "1")
	expiring.ExpiresAt = f.now.Add(time.Minute)
	if _, err := f.j.Record(f.ctx, expiring); err != nil {
		t.Fatal(err)
	}
	f.now = f.now.Add(2 * time.Minute)
	r, err := f.j.Recover(f.ctx, f.now)
	if err != nil || r.Expired != 1 {
		t.Fatalf("recovery = %+v, %v; want one hold expired", r, err)
	}
	if _, err := f.j.Resolve(f.ctx, "h-exp:post", "h-exp", journal.Post, "test.post"); !errors.Is(err, journal.ErrHoldExpired) {
		t.Errorf("post of an expired hold: %v, want ErrHoldExpired", err)
	}
	if got, want := f.balance("W1", "BTC"), "3/3/0/0"; got != want {
		t.Errorf("W1 after the expiry = %s, want %s", got, want)
	}
	f.reconciled()
}

// A refusal met while applying (the funds went between the check and the update) undoes
// what was applied, and the id stays refused.
func TestCompensation(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "W1", "W2", "W3")
	f.deposit("dep-1", "W1", "BTC", "5")
	f.deposit("dep-2", "W2", "BTC", "1")
	// Two payers, W1 applied first (holders in id order), W2 short: as if W2's funds left
	// after the precheck, written the way a crashed runner leaves it: recorded, not applied.
	e := journal.Entry{ID: "pay-in", Kind: journal.Pending, Code: "test.payin", Legs: []journal.Leg{
		{Holder: "W1", Currency: "BTC", Side: journal.Debit, Amount: amt("2")},
		{Holder: "W2", Currency: "BTC", Side: journal.Debit, Amount: amt("3")},
		{Holder: "clr:S1", Currency: "BTC", Side: journal.Credit, Amount: amt("5")},
	}}
	f.insertRecorded(e)
	r, err := f.j.Recover(f.ctx, f.now.Add(time.Second))
	if err != nil || r.Rejected != 1 {
		t.Fatalf("recovery = %+v, %v; want one entry rejected", r, err)
	}
	var short *journal.InsufficientError
	if _, err := f.j.Record(f.ctx, e); !errors.As(err, &short) || short.Holder != "W2" || short.Currency != "BTC" {
		t.Fatalf("retry of the refused entry: %v; want the same refusal naming W2 BTC", err)
	}
	for h, want := range map[string]string{"W1": "5/5/0/0", "W2": "1/1/0/0", "clr:S1": "0/0/0/0"} {
		if got := f.balanceOrZero(h, "BTC"); got != want {
			t.Errorf("%s = %s, want %s", h, got, want)
		}
	}
	hist, err := f.j.History(f.ctx, journal.HistoryQuery{Holder: "W1", Currency: "BTC", Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	var entries []string
	for _, p := range hist {
		entries = append(entries, p.Entry)
	}
	if fmt.Sprint(entries) != "[dep-1 pay-in pay-in~]" {
		t.Errorf("W1's history = %v, want the deposit, the hold and its compensation", entries)
	}
	f.reconciled()
}

func TestConcurrentHoldsNeverOverdraw(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "W1")
	f.deposit("dep-1", "W1", "USDC", "10")
	var wins atomic.Int64
	var wg sync.WaitGroup
	for i := range 25 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := f.j.Record(f.ctx, hold(fmt.Sprintf("h-%d", i), "W1", "sys:withdrawals", "USDC", "1"))
			switch {
			case err == nil:
				wins.Add(1)
			case !errors.Is(err, journal.ErrInsufficient):
				t.Errorf("hold %d: %v", i, err)
			}
		}()
	}
	wg.Wait()
	if wins.Load() != 10 {
		t.Errorf("%d holds of 1 went through on a balance of 10, want 10", wins.Load())
	}
	if got, want := f.balance("W1", "USDC"), "0/10/10/0"; got != want {
		t.Errorf("W1 = %s, want %s", got, want)
	}
	f.reconciled()
}

func TestConcurrentRetriesApplyOnce(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "W1", "W2")
	f.deposit("dep-1", "W1", "XRP", "100")
	var wg sync.WaitGroup
	for range 12 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := f.j.Record(f.ctx, transfer("t-same", "W1", "W2", "XRP", "30")); err != nil {
				t.Errorf("a runner of t-same: %v", err)
			}
			if _, err := f.j.Resolve(f.ctx, "never", "t-same", journal.Post, "x"); !errors.Is(err, journal.ErrHoldNotFound) {
				t.Errorf("resolving a transfer: %v", err)
			}
		}()
	}
	wg.Wait()
	if got, want := f.balance("W1", "XRP"), "70/70/0/0"; got != want {
		t.Errorf("W1 = %s, want %s", got, want)
	}
	f.reconciled()
}

// A holder's document stays bounded however many entries it takes; its history pages by
// sequence.
func TestMarkersStayBoundedAndHistoryPages(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "W1", "W2")
	f.deposit("dep", "W1", "BTC", "1000")
	const n = 100
	for i := range n {
		if _, err := f.j.Record(f.ctx, transfer(fmt.Sprintf("t-%03d", i), "W1", "W2", "BTC", "1")); err != nil {
			t.Fatal(err)
		}
	}
	var doc struct {
		Markers []bson.Raw `bson:"ledgerMarkers"`
	}
	if err := f.db.Collection("wallets").FindOne(f.ctx, bson.D{{Key: "_id", Value: "W1"}}).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Markers) > journal.DefaultMaxMarkers {
		t.Errorf("W1 carries %d markers after %d entries, want at most %d", len(doc.Markers), n+1, journal.DefaultMaxMarkers)
	}
	var seen []string
	after := int64(0)
	for {
		page, err := f.j.History(f.ctx, journal.HistoryQuery{Holder: "W1", AfterSeq: after, Limit: 40})
		if err != nil {
			t.Fatal(err)
		}
		if len(page) == 0 {
			break
		}
		for _, p := range page {
			seen = append(seen, p.Entry)
		}
		after = page[len(page)-1].Seq
	}
	if len(seen) != n+1 || seen[0] != "dep" || seen[n] != fmt.Sprintf("t-%03d", n-1) {
		t.Fatalf("W1's history has %d postings (%v … ), want %d in order", len(seen), seen[:min(3, len(seen))], n+1)
	}
	last, err := f.j.History(f.ctx, journal.HistoryQuery{Holder: "W1", AfterSeq: n, Limit: 5})
	if err != nil || len(last) != 1 || last[0].After.Available().String() != "900" {
		t.Fatalf("last posting of W1 = %+v, %v; want one with 900 available after it", last, err)
	}
	if r := f.reconciled(); r.Postings < 2*n {
		t.Errorf("reconciliation folded %d postings, want at least %d", r.Postings, 2*n)
	}
}

func TestReconcileFindsTampering(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "W1", "W2")
	f.deposit("dep", "W1", "ETH", "3")
	if _, err := f.j.Record(f.ctx, transfer("t", "W1", "W2", "ETH", "1")); err != nil {
		t.Fatal(err)
	}
	f.reconciled()
	// Someone with database access credits W2 outside the journal.
	if _, err := f.db.Collection("wallets").UpdateOne(f.ctx, bson.D{{Key: "_id", Value: "W2"}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "accounts.ETH.cPost", Value: "100"}}}}); err != nil {
		t.Fatal(err)
	}
	r, err := f.j.Reconcile(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Violations) < 2 {
		t.Fatalf("reconciliation of a tampered balance found %v; want W2's counters and the ETH trial balance", r.Violations)
	}
}

func (f *fixture) insertRecorded(e journal.Entry) {
	f.t.Helper()
	var legs bson.A
	for _, l := range e.Legs {
		legs = append(legs, bson.D{{Key: "h", Value: l.Holder}, {Key: "cur", Value: l.Currency}, {Key: "side", Value: string(l.Side)}, {Key: "amt", Value: l.Amount.String()}})
	}
	doc := bson.D{{Key: "_id", Value: e.ID}, {Key: "kind", Value: string(e.Kind)}, {Key: "legs", Value: legs},
		{Key: "fp", Value: journal.Fingerprint(e)}, {Key: "state", Value: "recorded"}, {Key: "code", Value: e.Code},
		{Key: "businessKey", Value: e.BusinessKey}, {Key: "createdAt", Value: f.now}, {Key: "updatedAt", Value: f.now}}
	if _, err := f.db.Collection("journal_entries").InsertOne(f.ctx, doc); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) balanceOrZero(h, cur string) string {
	f.t.Helper()
	acc, err := f.j.Accounts(f.ctx, h)
	if errors.Is(err, journal.ErrAccountNotFound) {
		return "0/0/0/0"
	}
	if err != nil {
		f.t.Fatal(err)
	}
	c := acc[cur]
	return c.Available().String() + "/" + c.Ledger().String() + "/" + c.PendingOut().String() + "/" + c.PendingIn().String()
}
