package journal_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/zcustody/suite/platform/testdb"
	"github.com/zcustody/suite/services/internal/amount"
	"github.com/zcustody/suite/services/internal/journal"
)

// Holders of the tests: W… are customer wallets (documents that must exist, constrained),
// clr:… clearing accounts (created on use, constrained), sys:… the world outside (created on
// use, unconstrained).
func policy(h string) journal.HolderPolicy {
	switch {
	case strings.HasPrefix(h, "W"):
		return journal.HolderPolicy{Collection: "wallets", Constrained: true}
	case strings.HasPrefix(h, "clr:"):
		return journal.HolderPolicy{Collection: "journal_accounts", Create: true, Constrained: true}
	}
	return journal.HolderPolicy{Collection: "journal_accounts", Create: true}
}

type fixture struct {
	t   testing.TB
	ctx context.Context
	db  *mongo.Database
	j   *journal.Journal
	now time.Time
}

func newFixture(t testing.TB, wallets ...string) *fixture {
	t.Helper()
	f := &fixture{t: t, ctx: context.Background(), db: testdb.New(t), now: time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)}
	f.j = journal.New(journal.Config{DB: f.db, Policy: policy, Collections: []string{"wallets"}, Now: func() time.Time { return f.now }})
	if err := f.j.EnsureIndexes(f.ctx); err != nil {
		t.Fatal(err)
	}
	for _, w := range wallets {
		// A wallet document as its owner writes it: the journal's fields come later.
		if _, err := f.db.Collection("wallets").InsertOne(f.ctx, bson.D{{Key: "_id", Value: w}, {Key: "name", Value: "wallet " + w}}); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

func amt(s string) amount.Amount { return amount.MustStored(s) }

func transfer(id, from, to, cur, a string) journal.Entry {
	return journal.Entry{ID: id, Kind: journal.Single, Code: "test.transfer", BusinessKey: id, Legs: []journal.Leg{
		{Holder: from, Currency: cur, Side: journal.Debit, Amount: amt(a)},
		{Holder: to, Currency: cur, Side: journal.Credit, Amount: amt(a)},
	}}
}

func hold(id, from, to, cur, a string) journal.Entry {
	e := transfer(id, from, to, cur, a)
	e.Kind, e.Code = journal.Pending, "test.hold"
	return e
}

// deposit funds w from the world outside.
func (f *fixture) deposit(id, w, cur, a string) {
	f.t.Helper()
	if _, err := f.j.Record(f.ctx, transfer(id, "sys:external", w, cur, a)); err != nil {
		f.t.Fatalf("deposit %s: %v", id, err)
	}
}

// balance is one account's derived balances, as "available/ledger/pendingOut/pendingIn".
func (f *fixture) balance(h, cur string) string {
	f.t.Helper()
	acc, err := f.j.Accounts(f.ctx, h)
	if err != nil {
		f.t.Fatalf("accounts of %s: %v", h, err)
	}
	c := acc[cur]
	return c.Available().String() + "/" + c.Ledger().String() + "/" + c.PendingOut().String() + "/" + c.PendingIn().String()
}

// reconciled fails the test unless reconciliation finds nothing.
func (f *fixture) reconciled() journal.Report {
	f.t.Helper()
	r, err := f.j.Reconcile(f.ctx)
	if err != nil {
		f.t.Fatalf("reconcile: %v", err)
	}
	if !r.Clean() {
		f.t.Fatalf("reconciliation found differences:\n%s", strings.Join(r.Violations, "\n"))
	}
	return r
}
