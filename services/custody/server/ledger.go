package server

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"

	"github.com/zcustody/suite/platform/apperr"
	custodyv1 "github.com/zcustody/suite/proto/custody/v1"
	"github.com/zcustody/suite/services/custody"
	"github.com/zcustody/suite/services/internal/catalog"
	"github.com/zcustody/suite/services/internal/journal"
)

// InterchangeSystem is the one caller of the ledger API: interchange moves a withdrawal's
// money from trading's journal into custody's.
const InterchangeSystem = catalog.Interchange

// LedgerStore is what the ledger API needs from the store.
type LedgerStore interface {
	Wallet(ctx context.Context, companyID, id string) (custody.Wallet, error)
	CreditTransfer(ctx context.Context, transferID string, c custody.Credit) (journal.Result, error)
	Reconcile(ctx context.Context) (journal.Report, []journal.AccountCounters, error)
	SystemAccount(ctx context.Context, holder string) ([]journal.AccountCounters, error)
}

// Ledger implements custodyv1.CustodyLedgerServiceServer: custody's side of transfers from
// trading, and the reconciliation of custody's journal. Interchange only (Policy).
type Ledger struct {
	custodyv1.UnimplementedCustodyLedgerServiceServer
	store LedgerStore
}

var _ custodyv1.CustodyLedgerServiceServer = (*Ledger)(nil)

// NewLedger returns the ledger server.
func NewLedger(st LedgerStore) *Ledger { return &Ledger{store: st} }

// CheckTransferTarget checks that a transfer may credit the custody wallet and answers the
// currency id it would credit; it changes nothing.
func (l *Ledger) CheckTransferTarget(ctx context.Context, req *custodyv1.CheckTransferTargetRequest) (*custodyv1.CheckTransferTargetResponse, error) {
	w, err := l.target(ctx, req.GetCompanyId(), req.GetWalletId(), req.GetCurrency(), req.GetAmount())
	if err != nil {
		return nil, err
	}
	c, err := custody.CheckTransferTarget(w, req.GetCurrency(), req.GetAmount())
	if err != nil {
		return nil, err
	}
	return &custodyv1.CheckTransferTargetResponse{CurrencyId: c.Currency.CurrencyID}, nil
}

// CreditTransfer credits the custody wallet once per transfer id, whatever its status now
// (custody.CheckTransferCredit): a transfer already approved must land.
func (l *Ledger) CreditTransfer(ctx context.Context, req *custodyv1.CreditTransferRequest) (*custodyv1.CreditTransferResponse, error) {
	id := req.GetTransferId()
	switch {
	case strings.TrimSpace(id) == "":
		return nil, apperr.Missing("transferId")
	case len(id) > custody.MaxTransferIDLength:
		return nil, apperr.Invalid(apperr.CodeLength, "transferId", "transferId must be at most %d characters", custody.MaxTransferIDLength)
	}
	w, err := l.target(ctx, req.GetCompanyId(), req.GetWalletId(), req.GetCurrency(), req.GetAmount())
	if err != nil {
		return nil, err
	}
	c, err := custody.CheckTransferCredit(w, req.GetCurrency(), req.GetAmount())
	if err != nil {
		return nil, err
	}
	res, err := l.store.CreditTransfer(ctx, id, c)
	if err != nil {
		return nil, creditError(id, err)
	}
	return &custodyv1.CreditTransferResponse{EntryId: custody.CreditEntryID(id), Outcome: outcome(res)}, nil
}

// Reconcile recomputes every balance of custody's journal and lists its system accounts.
func (l *Ledger) Reconcile(ctx context.Context, _ *custodyv1.ReconcileRequest) (*custodyv1.ReconcileResponse, error) {
	r, system, err := l.store.Reconcile(ctx)
	if err != nil {
		return nil, err
	}
	out := &custodyv1.ReconcileResponse{Holders: int32(r.Holders), Postings: int32(r.Postings), InFlight: int32(r.InFlight),
		Violations: r.Violations}
	for _, cur := range slices.Sorted(maps.Keys(r.Totals)) {
		t := r.Totals[cur]
		out.Totals = append(out.Totals, &custodyv1.CurrencyTotals{CurrencyId: cur, DebitsPending: t.DebitsPending.String(),
			DebitsPosted: t.DebitsPosted.String(), CreditsPending: t.CreditsPending.String(), CreditsPosted: t.CreditsPosted.String()})
	}
	out.SystemAccounts = systemAccounts(system)
	return out, nil
}

// GetSystemAccount reads one system account's counters (interchange compares transit:trading
// with trading's transit:custody). A name that is no system account is 400; one never used
// has no counters.
func (l *Ledger) GetSystemAccount(ctx context.Context, req *custodyv1.GetSystemAccountRequest) (*custodyv1.GetSystemAccountResponse, error) {
	if !custody.IsSystemAccount(req.GetAccount()) {
		return nil, apperr.Invalid(apperr.CodeFormat, "account", "account %q is not a system account of custody's journal", req.GetAccount())
	}
	accounts, err := l.store.SystemAccount(ctx, req.GetAccount())
	if err != nil {
		return nil, err
	}
	return &custodyv1.GetSystemAccountResponse{Account: req.GetAccount(), Counters: systemAccounts(accounts)}, nil
}

func systemAccounts(in []journal.AccountCounters) []*custodyv1.SystemAccount {
	out := make([]*custodyv1.SystemAccount, 0, len(in))
	for _, a := range in {
		out = append(out, &custodyv1.SystemAccount{Holder: a.Holder, CurrencyId: a.Currency,
			DebitsPending: a.DebitsPending.String(), DebitsPosted: a.DebitsPosted.String(),
			CreditsPending: a.CreditsPending.String(), CreditsPosted: a.CreditsPosted.String()})
	}
	return out
}

// target checks that a transfer names every field and reads the company's wallet: an
// unknown wallet and another company's alike answer ER-102 on walletId.
func (l *Ledger) target(ctx context.Context, companyID, walletID, currency, amt string) (custody.Wallet, error) {
	for _, f := range []struct{ name, value string }{{"companyId", companyID}, {"walletId", walletID}, {"currency", currency}, {"amount", amt}} {
		if strings.TrimSpace(f.value) == "" {
			return custody.Wallet{}, apperr.Missing(f.name)
		}
	}
	w, err := l.store.Wallet(ctx, companyID, walletID)
	if errors.Is(err, apperr.ErrNotFound) {
		return custody.Wallet{}, apperr.NotFound("walletId", walletID)
	}
	return w, err
}

// creditError maps the journal's refusal of a transfer id credited before with other
// fields to ALREADY_EXISTS ER-104 on the request's field: the credit's legs are
// transit:trading's debit and the wallet's credit, so the entry differs in a leg's holder
// (the wallet), currency or amount. Anything else is the store's (internal at the edge).
func creditError(transferID string, err error) error {
	var exists *journal.ExistsError
	if !errors.As(err, &exists) {
		return err
	}
	field := "transferId"
	for suffix, name := range map[string]string{".holder": "walletId", ".currency": "currency", ".amount": "amount"} {
		if strings.HasSuffix(exists.Field, suffix) {
			field = name
		}
	}
	return apperr.Exists(field, "transfer %s was credited with a different %s", transferID, field)
}

func outcome(res journal.Result) custodyv1.EntryOutcome {
	if res.Replayed {
		return custodyv1.EntryOutcome_ENTRY_OUTCOME_REPLAYED
	}
	return custodyv1.EntryOutcome_ENTRY_OUTCOME_APPLIED
}
