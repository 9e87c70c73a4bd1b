package server_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/platform/principal"
	custodyv1 "github.com/zcustody/suite/proto/custody/v1"
	"github.com/zcustody/suite/services/custody"
	"github.com/zcustody/suite/services/custody/server"
)

const (
	applied  = custodyv1.EntryOutcome_ENTRY_OUTCOME_APPLIED
	replayed = custodyv1.EntryOutcome_ENTRY_OUTCOME_REPLAYED
)

// interchangeContext is the context of a call by interchange, with its own token.
func interchangeContext() context.Context {
	return principal.NewContext(context.Background(), principal.Principal{Issuer: "interchange", Kind: principal.KindSystem, System: "interchange"})
}

type ledgerFixture struct {
	fixture
	ledger *server.Ledger
	api    *server.Server
}

// newLedgerFixture stores the wallets of the transfer tests: ZTEST's BTC wallet holding 1
// BTC and an empty one, its XLM wallet holding 5 XLM with a USDC trustline (endpoint 13), an
// empty USDC wallet on Ethereum, a deactivated and a pending wallet; ZACME's BTC wallet
// holding 2 BTC.
func newLedgerFixture(t *testing.T) ledgerFixture {
	t.Helper()
	return newLedgerFixtureWithClock(t, nil)
}

// newLedgerFixtureWithClock is newLedgerFixture with the store's clock (its journal's
// included) now; nil is the real one.
func newLedgerFixtureWithClock(t *testing.T, now func() time.Time) ledgerFixture {
	t.Helper()
	f := ledgerFixture{fixture: newFixtureWithClock(t, now)}
	f.ledger, f.api = server.NewLedger(f.store), server.New(f.store, server.Options{})
	f.open(t, company, "ZTEST-NOBENF-BTC", "btc-btc", "1")
	f.open(t, company, "ZTEST-NOBENF-BTC2", "btc-btc", "")
	f.open(t, company, "ZTEST-NOBENF-XLM", "xlm-xlm", "5")
	f.open(t, company, "ZTEST-NOBENF-USDCETH", "usdc-eth", "")
	f.open(t, "ZACME", "ZACME-NOBENF-BTC", "btc-btc", "2")
	f.put(t, company, "ZTEST-NOBENF-OFF", func(w *custody.Wallet) { w.Status, w.Valid = custody.StatusDeactivated, false })
	f.put(t, company, "ZTEST-NOBENF-WAIT", func(w *custody.Wallet) { w.Status, w.Valid = custody.StatusPendingAuth, false })
	if _, err := f.api.ActivateTrustline(makerContext(), &custodyv1.ActivateTrustlineRequest{WalletId: "ZTEST-NOBENF-XLM", CurrencyId: "usdc-xlm"}); err != nil {
		t.Fatal(err)
	}
	return f
}

// open stores an ACTIVE wallet of companyID in currencyID holding balance (available and
// ledger; "" is empty).
func (f fixture) open(t *testing.T, companyID, id, currencyID, balance string) {
	t.Helper()
	w, err := custody.Open(custody.Opening{ID: id, Name: "Wallet " + id, CompanyID: companyID, CreatedBy: maker, CurrencyID: currencyID,
		Balance: custody.Amounts{Available: balance, Ledger: balance}})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.store.PutWallet(context.Background(), w); err != nil {
		t.Fatal(err)
	}
}

// shown is what endpoint 14 shows of ZTEST's wallet id: per currency code,
// "available/ledger/pendingOut/pendingIn".
func (f ledgerFixture) shown(t *testing.T, id string) map[string]string {
	t.Helper()
	list, err := f.api.ListLegacyWallets(companyContext(company), &custodyv1.ListLegacyWalletsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range list.GetWallets() {
		if w.GetWalletId() != id {
			continue
		}
		out := map[string]string{}
		for _, b := range w.GetAssetBalances() {
			out[b.GetCurrency()] = strings.Join([]string{b.GetAvailableBalance(), b.GetLedgerBalance(), b.GetPendingOutBalance(), b.GetPendingInBalance()}, "/")
		}
		return out
	}
	t.Fatalf("endpoint 14 does not list %s", id)
	return nil
}

// systemHolders lists the system accounts of custody's journal as holder/currency.
func (f ledgerFixture) systemHolders(t *testing.T) []string {
	t.Helper()
	r, err := f.ledger.Reconcile(interchangeContext(), &custodyv1.ReconcileRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, a := range r.GetSystemAccounts() {
		out = append(out, a.GetHolder()+"/"+a.GetCurrencyId())
	}
	return out
}

func TestCheckTransferTarget(t *testing.T) {
	t.Parallel()
	f := newLedgerFixture(t)
	tests := []struct {
		name, walletID, currency, amount string
		want                             string
	}{
		{"bitcoin, one satoshi", "ZTEST-NOBENF-BTC", "BTC", "0.00000001", "btc-btc"},
		{"stellar native", "ZTEST-NOBENF-XLM", "XLM", "1.5", "xlm-xlm"},
		{"stellar USDC by its trustline, one stroop fine", "ZTEST-NOBENF-XLM", "USDC", "12.3456789", "usdc-xlm"},
		{"ethereum USDC", "ZTEST-NOBENF-USDCETH", "USDC", "1000.123456", "usdc-eth"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := f.ledger.CheckTransferTarget(interchangeContext(), &custodyv1.CheckTransferTargetRequest{
				CompanyId: company, WalletId: tt.walletID, Currency: tt.currency, Amount: tt.amount})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(&custodyv1.CheckTransferTargetResponse{CurrencyId: tt.want}, got, protocmp.Transform()); diff != "" {
				t.Errorf("CheckTransferTarget() mismatch (-want +got):\n%s", diff)
			}
		})
	}
	// A check moves nothing.
	if got := f.shown(t, "ZTEST-NOBENF-BTC")["BTC"]; got != "1/1/0/0" {
		t.Errorf("BTC wallet after checks = %s, want 1/1/0/0", got)
	}
	if diff := cmp.Diff([]string{"world:deposits/btc-btc", "world:deposits/xlm-xlm"}, f.systemHolders(t)); diff != "" {
		t.Errorf("system accounts after checks (-want +got):\n%s", diff)
	}
}

func TestCheckTransferTargetRefuses(t *testing.T) {
	t.Parallel()
	f := newLedgerFixture(t)
	req := func(walletID, currency, amount string) *custodyv1.CheckTransferTargetRequest {
		return &custodyv1.CheckTransferTargetRequest{CompanyId: company, WalletId: walletID, Currency: currency, Amount: amount}
	}
	tests := []struct {
		name string
		give *custodyv1.CheckTransferTargetRequest
		want wantErr
	}{
		{"no company", &custodyv1.CheckTransferTargetRequest{WalletId: "ZTEST-NOBENF-BTC", Currency: "BTC", Amount: "1"}, wantErr{codes.InvalidArgument, "ER-101", "companyId"}},
		{"no wallet", req(" ", "BTC", "1"), wantErr{codes.InvalidArgument, "ER-101", "walletId"}},
		{"no currency", req("ZTEST-NOBENF-BTC", "", "1"), wantErr{codes.InvalidArgument, "ER-101", "currency"}},
		{"no amount", req("ZTEST-NOBENF-BTC", "BTC", ""), wantErr{codes.InvalidArgument, "ER-101", "amount"}},
		{"unknown wallet", req("ZTEST-NOBENF-NONE", "BTC", "1"), wantErr{codes.NotFound, "ER-102", "walletId"}},
		{"other company's wallet", req("ZACME-NOBENF-BTC", "BTC", "1"), wantErr{codes.NotFound, "ER-102", "walletId"}},
		{"deactivated wallet", req("ZTEST-NOBENF-OFF", "BTC", "1"), wantErr{codes.FailedPrecondition, "ER-113", "walletId"}},
		{"wallet awaiting approval", req("ZTEST-NOBENF-WAIT", "BTC", "1"), wantErr{codes.FailedPrecondition, "ER-409", "walletId"}},
		{"currency of another ledger", req("ZTEST-NOBENF-BTC", "ETH", "1"), wantErr{codes.InvalidArgument, "ER-111", "currency"}},
		{"stellar asset without its trustline", req("ZTEST-NOBENF-XLM", "EURC", "1"), wantErr{codes.InvalidArgument, "ER-111", "currency"}},
		{"native XLM on a USDC-only wallet", req("ZTEST-NOBENF-USDCETH", "ETH", "1"), wantErr{codes.InvalidArgument, "ER-111", "currency"}},
		{"currency id instead of code", req("ZTEST-NOBENF-BTC", "btc-btc", "1"), wantErr{codes.InvalidArgument, "ER-111", "currency"}},
		{"unsupported currency", req("ZTEST-NOBENF-BTC", "DOGE", "1"), wantErr{codes.InvalidArgument, "ER-111", "currency"}},
		{"finer than a satoshi", req("ZTEST-NOBENF-BTC", "BTC", "0.000000001"), wantErr{codes.InvalidArgument, "ER-108", "amount"}},
		{"ethereum USDC finer than its 6 decimals", req("ZTEST-NOBENF-USDCETH", "USDC", "1.1234567"), wantErr{codes.InvalidArgument, "ER-108", "amount"}},
		{"zero", req("ZTEST-NOBENF-BTC", "BTC", "0"), wantErr{codes.InvalidArgument, "ER-108", "amount"}},
		{"negative", req("ZTEST-NOBENF-BTC", "BTC", "-1"), wantErr{codes.InvalidArgument, "ER-108", "amount"}},
		{"trailing zero", req("ZTEST-NOBENF-BTC", "BTC", "1.50"), wantErr{codes.InvalidArgument, "ER-108", "amount"}},
		{"exponent", req("ZTEST-NOBENF-BTC", "BTC", "1e2"), wantErr{codes.InvalidArgument, "ER-108", "amount"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := f.ledger.CheckTransferTarget(interchangeContext(), tt.give)
			checkErr(t, err, tt.want)
		})
	}
}

// notFound is the status a client receives for a wallet id it may not see.
func notFound(t *testing.T, id string) *status.Status {
	t.Helper()
	st, err := status.New(codes.NotFound, "Entity with id: "+id+" does not exist").WithDetails(
		&errdetails.ErrorInfo{Reason: "ER-102", Domain: apperr.Domain, Metadata: map[string]string{"field": "walletId"}})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestOtherCompanysWalletLooksUnknown: nothing in the answer tells a wallet of another
// company from a wallet that does not exist.
func TestOtherCompanysWalletLooksUnknown(t *testing.T) {
	t.Parallel()
	f := newLedgerFixture(t)
	for _, id := range []string{"ZACME-NOBENF-BTC", "ZACME-NOBENF-NONE"} {
		_, checkErr := f.ledger.CheckTransferTarget(interchangeContext(), &custodyv1.CheckTransferTargetRequest{
			CompanyId: company, WalletId: id, Currency: "BTC", Amount: "1"})
		_, creditErr := f.ledger.CreditTransfer(interchangeContext(), &custodyv1.CreditTransferRequest{
			TransferId: "T-" + id, CompanyId: company, WalletId: id, Currency: "BTC", Amount: "1"})
		for method, err := range map[string]error{"CheckTransferTarget": checkErr, "CreditTransfer": creditErr} {
			got := status.Convert(apperr.ToStatus(err))
			if diff := cmp.Diff(notFound(t, id).Proto(), got.Proto(), protocmp.Transform()); diff != "" {
				t.Errorf("%s(%s) status mismatch (-want +got):\n%s", method, id, diff)
			}
		}
	}
	w, err := f.store.Wallet(context.Background(), "ZACME", "ZACME-NOBENF-BTC")
	if err != nil || w.AssetBalances[0].LedgerBalance != "2" {
		t.Errorf("ZACME's wallet = %+v, %v; want its 2 BTC untouched", w.AssetBalances, err)
	}
}

func TestCreditTransfer(t *testing.T) {
	t.Parallel()
	f := newLedgerFixture(t)
	req := &custodyv1.CreditTransferRequest{TransferId: "T-1", CompanyId: company, WalletId: "ZTEST-NOBENF-BTC", Currency: "BTC", Amount: "0.25"}
	for _, want := range []custodyv1.EntryOutcome{applied, replayed} {
		got, err := f.ledger.CreditTransfer(interchangeContext(), req)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(&custodyv1.CreditTransferResponse{EntryId: "wd:T-1:credit", Outcome: want}, got, protocmp.Transform()); diff != "" {
			t.Errorf("CreditTransfer() mismatch (-want +got):\n%s", diff)
		}
		if got := f.shown(t, "ZTEST-NOBENF-BTC")["BTC"]; got != "1.25/1.25/0/0" {
			t.Errorf("BTC wallet after a %s credit = %s, want 1.25/1.25/0/0", want, got)
		}
	}
	// The same transfer id with other fields is refused, naming the field; nothing moves.
	tests := []struct {
		name                       string
		walletID, currency, amount string
		want                       wantErr
	}{
		{"another amount", "ZTEST-NOBENF-BTC", "BTC", "0.26", wantErr{codes.AlreadyExists, "ER-104", "amount"}},
		{"another wallet", "ZTEST-NOBENF-BTC2", "BTC", "0.25", wantErr{codes.AlreadyExists, "ER-104", "walletId"}},
		{"another currency", "ZTEST-NOBENF-XLM", "XLM", "0.25", wantErr{codes.AlreadyExists, "ER-104", "currency"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := f.ledger.CreditTransfer(interchangeContext(), &custodyv1.CreditTransferRequest{TransferId: "T-1", CompanyId: company,
				WalletId: tt.walletID, Currency: tt.currency, Amount: tt.amount})
			checkErr(t, err, tt.want)
		})
	}
	for id, want := range map[string]map[string]string{
		"ZTEST-NOBENF-BTC":  {"BTC": "1.25/1.25/0/0"},
		"ZTEST-NOBENF-BTC2": {"BTC": "0/0/0/0"},
		"ZTEST-NOBENF-XLM":  {"XLM": "5/5/0/0", "USDC": "0/0/0/0"},
	} {
		if diff := cmp.Diff(want, f.shown(t, id)); diff != "" {
			t.Errorf("%s after the refusals (-want +got):\n%s", id, diff)
		}
	}
}

// TestConcurrentCredits: interchange's retries may race; the wallet is credited once.
func TestConcurrentCredits(t *testing.T) {
	t.Parallel()
	f := newLedgerFixture(t)
	req := &custodyv1.CreditTransferRequest{TransferId: "T-RACE", CompanyId: company, WalletId: "ZTEST-NOBENF-XLM", Currency: "USDC", Amount: "10.5"}
	outcomes := make([]custodyv1.EntryOutcome, 8)
	errs := make([]error, len(outcomes))
	var wg sync.WaitGroup
	for i := range outcomes {
		wg.Go(func() {
			resp, err := f.ledger.CreditTransfer(interchangeContext(), req)
			outcomes[i], errs[i] = resp.GetOutcome(), err
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil || (outcomes[i] != applied && outcomes[i] != replayed) {
			t.Errorf("credit %d = %s, %v; want APPLIED or REPLAYED", i, outcomes[i], err)
		}
	}
	if diff := cmp.Diff(map[string]string{"XLM": "5/5/0/0", "USDC": "10.5/10.5/0/0"}, f.shown(t, "ZTEST-NOBENF-XLM")); diff != "" {
		t.Errorf("XLM wallet after racing credits (-want +got):\n%s", diff)
	}
}

// TestCreditAfterDeactivation: a transfer checked while the wallet was ACTIVE lands even if
// the wallet was deactivated meanwhile; a new check is refused.
func TestCreditAfterDeactivation(t *testing.T) {
	t.Parallel()
	f := newLedgerFixture(t)
	check := &custodyv1.CheckTransferTargetRequest{CompanyId: company, WalletId: "ZTEST-NOBENF-BTC2", Currency: "BTC", Amount: "0.5"}
	if _, err := f.ledger.CheckTransferTarget(interchangeContext(), check); err != nil {
		t.Fatal(err)
	}
	w, err := f.store.Wallet(context.Background(), company, "ZTEST-NOBENF-BTC2")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.store.Deactivate(context.Background(), company, w.ID, w.Version, "REQ-OFF"); err != nil {
		t.Fatal(err)
	}
	_, err = f.ledger.CheckTransferTarget(interchangeContext(), check)
	checkErr(t, err, wantErr{codes.FailedPrecondition, "ER-113", "walletId"})
	got, err := f.ledger.CreditTransfer(interchangeContext(), &custodyv1.CreditTransferRequest{TransferId: "T-OFF", CompanyId: company,
		WalletId: "ZTEST-NOBENF-BTC2", Currency: "BTC", Amount: "0.5"})
	if err != nil || got.GetOutcome() != applied {
		t.Fatalf("credit of a deactivated wallet = %v, %v; want APPLIED", got, err)
	}
	if got := f.shown(t, "ZTEST-NOBENF-BTC2")["BTC"]; got != "0.5/0.5/0/0" {
		t.Errorf("deactivated wallet after the credit = %s, want 0.5/0.5/0/0", got)
	}
}

func TestCreditTransferRefuses(t *testing.T) {
	t.Parallel()
	f := newLedgerFixture(t)
	req := func(transferID, walletID, currency, amount string) *custodyv1.CreditTransferRequest {
		return &custodyv1.CreditTransferRequest{TransferId: transferID, CompanyId: company, WalletId: walletID, Currency: currency, Amount: amount}
	}
	tests := []struct {
		name string
		give *custodyv1.CreditTransferRequest
		want wantErr
	}{
		{"no transfer id", req("", "ZTEST-NOBENF-BTC", "BTC", "1"), wantErr{codes.InvalidArgument, "ER-101", "transferId"}},
		{"transfer id too long", req(strings.Repeat("T", 129), "ZTEST-NOBENF-BTC", "BTC", "1"), wantErr{codes.InvalidArgument, "ER-103", "transferId"}},
		{"no company", &custodyv1.CreditTransferRequest{TransferId: "T-X", WalletId: "ZTEST-NOBENF-BTC", Currency: "BTC", Amount: "1"}, wantErr{codes.InvalidArgument, "ER-101", "companyId"}},
		{"unknown wallet", req("T-X", "ZTEST-NOBENF-NONE", "BTC", "1"), wantErr{codes.NotFound, "ER-102", "walletId"}},
		{"other company's wallet", req("T-X", "ZACME-NOBENF-BTC", "BTC", "1"), wantErr{codes.NotFound, "ER-102", "walletId"}},
		{"wallet never approved", req("T-X", "ZTEST-NOBENF-WAIT", "BTC", "1"), wantErr{codes.FailedPrecondition, "ER-409", "walletId"}},
		{"currency not carried", req("T-X", "ZTEST-NOBENF-BTC", "XRP", "1"), wantErr{codes.InvalidArgument, "ER-111", "currency"}},
		{"stellar asset without its trustline", req("T-X", "ZTEST-NOBENF-XLM", "EURC", "1"), wantErr{codes.InvalidArgument, "ER-111", "currency"}},
		{"finer than a stroop", req("T-X", "ZTEST-NOBENF-XLM", "USDC", "0.00000001"), wantErr{codes.InvalidArgument, "ER-108", "amount"}},
		{"not a decimal", req("T-X", "ZTEST-NOBENF-BTC", "BTC", "one"), wantErr{codes.InvalidArgument, "ER-108", "amount"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := f.ledger.CreditTransfer(interchangeContext(), tt.give)
			checkErr(t, err, tt.want)
		})
	}
	if got := f.shown(t, "ZTEST-NOBENF-BTC")["BTC"]; got != "1/1/0/0" {
		t.Errorf("BTC wallet after refused credits = %s, want 1/1/0/0", got)
	}
	if diff := cmp.Diff([]string{"world:deposits/btc-btc", "world:deposits/xlm-xlm"}, f.systemHolders(t)); diff != "" {
		t.Errorf("system accounts after refused credits (-want +got):\n%s", diff)
	}
}

func TestReconcileAfterCredits(t *testing.T) {
	t.Parallel()
	f := newLedgerFixture(t)
	for _, r := range []*custodyv1.CreditTransferRequest{
		{TransferId: "T-1", CompanyId: company, WalletId: "ZTEST-NOBENF-BTC", Currency: "BTC", Amount: "0.25"},
		{TransferId: "T-1", CompanyId: company, WalletId: "ZTEST-NOBENF-BTC", Currency: "BTC", Amount: "0.25"}, // a replay
		{TransferId: "T-2", CompanyId: company, WalletId: "ZTEST-NOBENF-BTC2", Currency: "BTC", Amount: "0.5"},
		{TransferId: "T-3", CompanyId: company, WalletId: "ZTEST-NOBENF-XLM", Currency: "USDC", Amount: "10.5"},
	} {
		if _, err := f.ledger.CreditTransfer(interchangeContext(), r); err != nil {
			t.Fatal(err)
		}
	}
	got, err := f.ledger.Reconcile(interchangeContext(), &custodyv1.ReconcileRequest{})
	if err != nil {
		t.Fatal(err)
	}
	// Funding: 1 BTC (ZTEST), 2 BTC (ZACME) and 5 XLM from world:deposits. Credits: 0.25 + 0.5
	// BTC and 10.5 USDC from transit:trading. Holders: four funded or credited wallets and the
	// two system accounts; postings: one per wallet leg (3 fundings, 3 credits) and one per
	// system leg (3 + 3).
	account := func(holder, currencyID, debitsPosted string) *custodyv1.SystemAccount {
		return &custodyv1.SystemAccount{Holder: holder, CurrencyId: currencyID, DebitsPending: "0", DebitsPosted: debitsPosted, CreditsPending: "0", CreditsPosted: "0"}
	}
	totals := func(currencyID, posted string) *custodyv1.CurrencyTotals {
		return &custodyv1.CurrencyTotals{CurrencyId: currencyID, DebitsPending: "0", DebitsPosted: posted, CreditsPending: "0", CreditsPosted: posted}
	}
	want := &custodyv1.ReconcileResponse{Holders: 6, Postings: 12,
		Totals: []*custodyv1.CurrencyTotals{totals("btc-btc", "3.75"), totals("usdc-xlm", "10.5"), totals("xlm-xlm", "5")},
		SystemAccounts: []*custodyv1.SystemAccount{
			account("transit:trading", "btc-btc", "0.75"), account("transit:trading", "usdc-xlm", "10.5"),
			account("world:deposits", "btc-btc", "3"), account("world:deposits", "xlm-xlm", "5"),
		}}
	if diff := cmp.Diff(want, got, protocmp.Transform()); diff != "" {
		t.Errorf("Reconcile() mismatch (-want +got):\n%s", diff)
	}
}

func TestGetSystemAccount(t *testing.T) {
	t.Parallel()
	f := newLedgerFixture(t)
	get := func(account string) (*custodyv1.GetSystemAccountResponse, error) {
		return f.ledger.GetSystemAccount(interchangeContext(), &custodyv1.GetSystemAccountRequest{Account: account})
	}
	// Never used yet: no counters.
	got, err := get("transit:trading")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(&custodyv1.GetSystemAccountResponse{Account: "transit:trading"}, got, protocmp.Transform()); diff != "" {
		t.Errorf("GetSystemAccount() before any credit mismatch (-want +got):\n%s", diff)
	}
	for _, r := range []*custodyv1.CreditTransferRequest{
		{TransferId: "T-1", CompanyId: company, WalletId: "ZTEST-NOBENF-XLM", Currency: "USDC", Amount: "10.5"},
		{TransferId: "T-2", CompanyId: company, WalletId: "ZTEST-NOBENF-BTC", Currency: "BTC", Amount: "0.1"},
		{TransferId: "T-3", CompanyId: company, WalletId: "ZTEST-NOBENF-BTC2", Currency: "BTC", Amount: "0.2"},
	} {
		if _, err := f.ledger.CreditTransfer(interchangeContext(), r); err != nil {
			t.Fatal(err)
		}
	}
	got, err = get("transit:trading")
	if err != nil {
		t.Fatal(err)
	}
	want := &custodyv1.GetSystemAccountResponse{Account: "transit:trading", Counters: []*custodyv1.SystemAccount{
		{Holder: "transit:trading", CurrencyId: "btc-btc", DebitsPending: "0", DebitsPosted: "0.3", CreditsPending: "0", CreditsPosted: "0"},
		{Holder: "transit:trading", CurrencyId: "usdc-xlm", DebitsPending: "0", DebitsPosted: "10.5", CreditsPending: "0", CreditsPosted: "0"},
	}}
	if diff := cmp.Diff(want, got, protocmp.Transform()); diff != "" {
		t.Errorf("GetSystemAccount() after credits mismatch (-want +got):\n%s", diff)
	}
	// A wallet is no system account: its balances are its company's to read.
	for _, account := range []string{"ZTEST-NOBENF-BTC", "", "transit:custody"} {
		_, err := get(account)
		checkErr(t, err, wantErr{codes.InvalidArgument, "ER-108", "account"})
	}
}
