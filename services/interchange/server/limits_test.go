package server_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/platform/events"
	interchangev1 "github.com/zcustody/suite/proto/interchange/v1"
	servicedeskv1 "github.com/zcustody/suite/proto/servicedesk/v1"
	"github.com/zcustody/suite/services/interchange/app"
	"github.com/zcustody/suite/services/interchange/withdrawal"
	"github.com/zcustody/suite/services/trading"
	tradingstore "github.com/zcustody/suite/services/trading/store"
)

// policyLimits stands in for the service desk's GetCompanyLimits: the limits of ZTEST's
// policy in force (the e2e test TestWithdrawalLimits reads them from the real service desk).
type policyLimits []*servicedeskv1.PolicyLimit

func (p policyLimits) CompanyLimits(_ context.Context, companyID string) (int64, []*servicedeskv1.PolicyLimit, error) {
	if companyID != ztest {
		return 0, nil, nil
	}
	return 1, p, nil
}

// refusedForLimit checks err is a 409 naming the limit and what is left of it.
func refusedForLimit(t *testing.T, what string, err error, parts ...string) {
	t.Helper()
	var ae *apperr.Error
	if !errors.As(err, &ae) || ae.Code != apperr.CodeConflict {
		t.Fatalf("%s: %v, want a 409 refusal for a limit", what, err)
	}
	for _, p := range parts {
		if !strings.Contains(ae.Message, p) {
			t.Errorf("%s: %q does not say %q", what, ae.Message, p)
		}
	}
}

// TestWithdrawalLimits: ZTEST's policy allows at most 0.9 BTC per withdrawal and 1 BTC a day
// per wallet, and 1.5 BTC an hour for the company. A withdrawal over a limit is refused naming
// the limit and what is left, with nothing held (the wallet and every limit keep their
// allowance); a decline gives the allowance back at once; the window's end gives it back by
// itself (trading's recovery pass expires the reservation, on a clock the test moves).
func TestWithdrawalLimits(t *testing.T) {
	t.Parallel()
	limits := policyLimits{
		{Name: "daily BTC", Scope: "WALLET", Currency: "BTC", MaxPerTransaction: "0.9", Amount: "1", Window: "24h0m0s"},
		{Name: "hourly company", Scope: "COMPANY", Currency: "BTC", Amount: "1.5", Window: "1h0m0s"},
		{Name: "ether", Scope: "COMPANY", Currency: "ETH", Amount: "0.000001", Window: "1h0m0s"}, // another currency: never applies
	}
	f := newFixture(t, func(p *app.Parts) { p.Limits = limits })
	f.ledger.fund(t, ztest, btcWallet, "BTC", "3")
	f.ledger.fund(t, ztest, btcWallet2, "BTC", "3")
	create := func(id, wallet, amount string) error {
		r := withdrawalReq(id, amount)
		r.WalletId = wallet
		_, err := f.engine.CreateWithdrawal(engineCtx(), r)
		return err
	}

	refusedForLimit(t, "0.95 BTC at once", create("WD-BIG", btcWallet, "0.95"), `"daily BTC"`, "at most 0.9 BTC")
	if err := create("WD-1", btcWallet, "0.6"); err != nil {
		t.Fatal(err)
	}
	refusedForLimit(t, "0.6 BTC more the same day", create("WD-2", btcWallet, "0.6"), `"daily BTC"`, "0.4 BTC left of 1")
	refusedForLimit(t, "the refusal again", create("WD-2", btcWallet, "0.6"), `"daily BTC"`)
	if got := f.ledger.get(t, btcWallet, "BTC"); got != [3]string{"2.4", "3", "0.6"} {
		t.Errorf("wallet = %v, want only WD-1 held", got)
	}
	// The company's hourly limit: 0.6 used by WD-1, 0.5 by WD-3; WD-4 does not fit. WD-2's
	// refusal left nothing on it.
	if err := create("WD-3", btcWallet2, "0.5"); err != nil {
		t.Fatal(err)
	}
	refusedForLimit(t, "a third withdrawal within the hour", create("WD-4", btcWallet2, "0.5"), `"hourly company"`, "0.4 BTC left of 1.5")
	if got := f.ledger.get(t, btcWallet2, "BTC"); got != [3]string{"2.5", "3", "0.5"} {
		t.Errorf("second wallet = %v, want only WD-3 held (WD-4's daily reservation released)", got)
	}

	// Declining WD-1 gives both allowances back at once.
	if err := confirm(f, f.venueCtx(), "WD-1", "DECLINE", "not today"); err != nil {
		t.Fatal(err)
	}
	if err := create("WD-5", btcWallet, "0.9"); err != nil {
		t.Errorf("0.9 BTC after WD-1 was declined: %v, want it to fit", err)
	}

	// After the windows, the reservations expire by themselves: a trading journal on the
	// test's clock runs its recovery pass.
	refusedForLimit(t, "more within the hour", create("WD-6", btcWallet2, "0.5"), `"hourly company"`)
	clocked := tradingstore.NewWithClock(f.db, f.clock.Now)
	f.clock.advance(25 * time.Hour)
	if _, err := clocked.Journal().Recover(context.Background(), f.clock.Now().Add(-time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := create("WD-7", btcWallet2, "0.9"); err != nil {
		t.Errorf("0.9 BTC once the windows passed: %v, want it to fit", err)
	}
	resp, err := f.svc.SearchWithdrawals(f.companyCtx(ztest), &interchangev1.SearchWithdrawalsRequest{TransferIds: []string{"WD-2", "WD-4"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range resp.GetItems() {
		if w.GetStatus() != withdrawal.StatusDeclined || !strings.HasPrefix(w.GetReason(), withdrawal.ReasonLimitPrefix) {
			t.Errorf("%s is %s (%q), want declined at creation for its limit", w.GetTransferId(), w.GetStatus(), w.GetReason())
		}
	}
	// The refusal is an event of its own, after the withdrawal's declined event.
	var doc struct {
		Outbox []bson.Raw `bson:"outbox"`
	}
	if err := f.db.Collection("withdrawals").FindOne(context.Background(), bson.D{{Key: "_id", Value: "WD-2"}}).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, raw := range doc.Outbox {
		e, err := events.Decode(raw)
		if err != nil {
			t.Fatal(err)
		}
		types = append(types, e.Type)
	}
	if fmt.Sprint(types) != "[withdrawal.pending_confirmation withdrawal.declined withdrawal.limit_refused]" {
		t.Errorf("events of WD-2 = %v, want its creation, its decline and the limit's refusal", types)
	}
}

// TestRacingWithdrawalsUnderOneLimit: ten withdrawals of 0.3 BTC race for an allowance of 1
// BTC: exactly three get it, the others are refused, and what is held is what passed.
func TestRacingWithdrawalsUnderOneLimit(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(p *app.Parts) {
		p.Limits = policyLimits{{Name: "daily BTC", Scope: "WALLET", Currency: "BTC", Amount: "1", Window: "24h0m0s"}}
	})
	f.ledger.fund(t, ztest, btcWallet, "BTC", "5")
	const n = 10
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			_, errs[i] = f.engine.CreateWithdrawal(engineCtx(), withdrawalReq(fmt.Sprintf("WD-R%d", i), "0.3"))
		})
	}
	wg.Wait()
	passed := 0
	for i, err := range errs {
		var ae *apperr.Error
		switch {
		case err == nil:
			passed++
		case errors.As(err, &ae) && ae.Code == apperr.CodeConflict && strings.Contains(ae.Message, `"daily BTC"`):
		default:
			t.Errorf("WD-R%d: %v", i, err)
		}
	}
	held := f.ledger.get(t, btcWallet, "BTC")[2]
	if passed != 3 || held != "0.9" {
		t.Errorf("%d withdrawals passed, %s BTC held; want 3 and 0.9", passed, held)
	}
}

// policyVersions stands in for the service desk across policy changes: the version and daily
// BTC allowance it answers can be changed, and the next answer can be an older one (a reader
// that fetched the policy just before a change).
type policyVersions struct {
	mu      sync.Mutex
	version int64
	amount  string
	stale   *staleAnswer // the next answer, once
}

// staleAnswer is an older version's answer.
type staleAnswer struct {
	version int64
	amount  string
}

func (p *policyVersions) set(version int64, amount string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.version, p.amount = version, amount
}

func (p *policyVersions) CompanyLimits(context.Context, string) (int64, []*servicedeskv1.PolicyLimit, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	version, amount := p.version, p.amount
	if p.stale != nil {
		version, amount, p.stale = p.stale.version, p.stale.amount, nil
	}
	return version, []*servicedeskv1.PolicyLimit{{Name: "daily BTC", Scope: "WALLET", Currency: "BTC", Amount: amount, Window: "24h0m0s"}}, nil
}

// TestLimitChangesFollowTheNewestPolicy: a raised allowance applies at once; a reservation
// that read the older policy reserves under the newer allowance and never puts the older one
// back; a lowering that more is reserved than it leaves refuses reservations until enough
// comes back, then applies.
func TestLimitChangesFollowTheNewestPolicy(t *testing.T) {
	t.Parallel()
	src := &policyVersions{version: 1, amount: "1"}
	f := newFixture(t, func(p *app.Parts) { p.Limits = src })
	f.ledger.fund(t, ztest, btcWallet, "BTC", "5")
	create := func(id, amount string) error {
		_, err := f.engine.CreateWithdrawal(engineCtx(), withdrawalReq(id, amount))
		return err
	}
	allowance := func() string {
		t.Helper()
		acc, err := f.ledger.store.Journal().Accounts(context.Background(), "limit:ZTEST:"+btcWallet+":BTC:86400")
		if err != nil {
			t.Fatal(err)
		}
		c := acc["BTC"]
		return c.CreditsPosted.Sub(c.DebitsPosted).String()
	}
	if err := create("WD-1", "0.6"); err != nil {
		t.Fatal(err)
	}
	src.set(2, "2")
	if err := create("WD-2", "1.2"); err != nil {
		t.Fatalf("1.2 BTC after the allowance was raised to 2: %v", err)
	}
	src.mu.Lock()
	src.stale = &staleAnswer{version: 1, amount: "1"}
	src.mu.Unlock()
	if err := create("WD-3", "0.1"); err != nil {
		t.Errorf("0.1 BTC by a reader of version 1: %v, want it reserved under version 2's allowance", err)
	}
	if got := allowance(); got != "2" {
		t.Fatalf("allowance after a reader of version 1 = %s, want version 2's 2", got)
	}
	refusedForLimit(t, "0.15 BTC with 0.1 left", create("WD-4", "0.15"), "0.1 BTC left of 2")

	src.set(3, "1") // lowered to 1 while 1.9 is reserved
	refusedForLimit(t, "a reservation while the lowering cannot apply", create("WD-5", "0.05"), "being lowered to 1 BTC")
	if err := confirm(f, f.venueCtx(), "WD-2", "DECLINE", "not today"); err != nil {
		t.Fatal(err)
	}
	if err := create("WD-6", "0.2"); err != nil {
		t.Errorf("0.2 BTC once 1.2 came back: %v, want the lowering applied and 0.2 to fit", err)
	}
	if got := allowance(); got != "1" {
		t.Errorf("allowance after the lowering applied = %s, want 1", got)
	}
	refusedForLimit(t, "0.2 BTC with 0.1 left", create("WD-7", "0.2"), "0.1 BTC left of 1")
}

// TestLimitInUSD: a company limit in US dollars (at most 50,000 a withdrawal, 100,000 a day)
// values each withdrawal at trading's price (BTC at 65,000): 0.8 BTC is over the maximum,
// 0.5 and 0.7 BTC fit, 0.4 more does not (22,000 USD left). A currency without a fresh price
// cannot be checked, so its withdrawal is refused, never let through.
func TestLimitInUSD(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(p *app.Parts) {
		p.Limits = policyLimits{{Name: "daily USD", Scope: "COMPANY", Currency: "USD", MaxPerTransaction: "50000", Amount: "100000", Window: "24h0m0s"}}
	})
	if err := f.ledger.store.PutPrice(context.Background(), trading.Price{Currency: "BTC", Price: "65000", UpdatedAt: f.clock.Now()}); err != nil {
		t.Fatal(err)
	}
	f.ledger.fund(t, ztest, btcWallet, "BTC", "3")
	f.ledger.fund(t, ztest, ethWallet, "ETH", "3")
	create := func(id, wallet, currency, amount string) error {
		r := withdrawalReq(id, amount)
		r.WalletId, r.Currency = wallet, currency
		if currency == "ETH" {
			r.DestinationAddress = "0x52908400098527886E0F7030069857D2E4169EE7"
		}
		_, err := f.engine.CreateWithdrawal(engineCtx(), r)
		return err
	}
	refusedForLimit(t, "0.8 BTC (52,000 USD)", create("WD-1", btcWallet, "BTC", "0.8"), `"daily USD"`, "at most 50000 USD per withdrawal")
	for _, id := range []string{"WD-2", "WD-3"} {
		amount := map[string]string{"WD-2": "0.5", "WD-3": "0.7"}[id]
		if err := create(id, btcWallet, "BTC", amount); err != nil {
			t.Fatalf("%s BTC: %v", amount, err)
		}
	}
	refusedForLimit(t, "0.4 BTC more (26,000 USD)", create("WD-4", btcWallet, "BTC", "0.4"), "22000 USD left of 100000")
	refusedForLimit(t, "ETH without a price", create("WD-5", ethWallet, "ETH", "0.1"), "ETH has no fresh USD price")
	if got := f.ledger.get(t, btcWallet, "BTC"); got != [3]string{"1.8", "3", "1.2"} {
		t.Errorf("wallet = %v, want only WD-2 and WD-3 held", got)
	}
}
