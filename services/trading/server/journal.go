package server

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/zcustody/suite/platform/apperr"
	tradingv1 "github.com/zcustody/suite/proto/trading/v1"
	"github.com/zcustody/suite/services/internal/amount"
	"github.com/zcustody/suite/services/internal/journal"
	"github.com/zcustody/suite/services/trading"
	"github.com/zcustody/suite/services/trading/store"
)

// RecordEntry records one journal entry at most once (journal.Journal.Record). A lack of
// funds is an outcome, not an error: nothing changed.
func (l *Ledger) RecordEntry(ctx context.Context, req *tradingv1.RecordEntryRequest) (*tradingv1.RecordEntryResponse, error) {
	e, wallets, err := parseEntry(req)
	if err != nil {
		return nil, err
	}
	res, err := l.store.RecordEntry(ctx, e, wallets)
	out := &tradingv1.RecordEntryResponse{EntryId: e.ID}
	var short *journal.InsufficientError
	if errors.As(err, &short) {
		out.Outcome, out.Account, out.Currency = tradingv1.EntryOutcome_ENTRY_OUTCOME_INSUFFICIENT_FUNDS, short.Holder, short.Currency
		return out, nil
	}
	if err != nil {
		return nil, journalError(err)
	}
	out.Outcome = outcome(res)
	return out, nil
}

// ResolveHold posts or voids a hold in full, at most once; a post naming amounts (posted)
// posts them and releases the rest of the hold in the same entry (journal.ResolvePartial).
func (l *Ledger) ResolveHold(ctx context.Context, req *tradingv1.ResolveHoldRequest) (*tradingv1.ResolveHoldResponse, error) {
	kind := map[tradingv1.ResolveKind]journal.Kind{tradingv1.ResolveKind_RESOLVE_KIND_POST: journal.Post, tradingv1.ResolveKind_RESOLVE_KIND_VOID: journal.Void}[req.GetKind()]
	switch {
	case req.GetEntryId() == "":
		return nil, apperr.Missing("entryId")
	case req.GetHoldId() == "":
		return nil, apperr.Missing("holdId")
	case kind == "":
		return nil, apperr.Invalid(apperr.CodeFormat, "kind", "kind must be RESOLVE_KIND_POST or RESOLVE_KIND_VOID")
	case len(req.GetEntryId()) > journal.MaxIDLength || len(req.GetCode()) > journal.MaxCode:
		return nil, apperr.Invalid(apperr.CodeLength, "entryId", "entryId or code too long")
	}
	posted, err := parsePosted(kind, req.GetPosted())
	if err != nil {
		return nil, err
	}
	var res journal.Result
	if posted != nil {
		res, err = l.store.Journal().ResolvePartial(ctx, req.GetEntryId(), req.GetHoldId(), posted, req.GetCode())
		if errors.Is(err, journal.ErrPostExceedsHold) || errors.Is(err, journal.ErrUnbalanced) || errors.Is(err, journal.ErrInvalidEntry) {
			return nil, apperr.Invalid(apperr.CodeFormat, "posted", "%s", err.Error())
		}
	} else {
		res, err = l.store.ResolveHold(ctx, req.GetEntryId(), req.GetHoldId(), kind, req.GetCode())
	}
	out := &tradingv1.ResolveHoldResponse{EntryId: req.GetEntryId()}
	for sentinel, o := range map[error]tradingv1.EntryOutcome{
		journal.ErrHoldAlreadyPosted: tradingv1.EntryOutcome_ENTRY_OUTCOME_HOLD_ALREADY_POSTED,
		journal.ErrHoldAlreadyVoided: tradingv1.EntryOutcome_ENTRY_OUTCOME_HOLD_ALREADY_VOIDED,
		journal.ErrHoldExpired:       tradingv1.EntryOutcome_ENTRY_OUTCOME_HOLD_EXPIRED,
		journal.ErrHoldNotFound:      tradingv1.EntryOutcome_ENTRY_OUTCOME_HOLD_NOT_FOUND,
	} {
		if errors.Is(err, sentinel) {
			out.Outcome = o
			return out, nil
		}
	}
	if err != nil {
		return nil, journalError(err)
	}
	out.Outcome = outcome(res)
	return out, nil
}

// parsePosted reads the amounts of a partial post (nil: none named, the hold is posted in
// full); each names an account of the hold, its currency, side and amount.
func parsePosted(kind journal.Kind, legs []*tradingv1.JournalLeg) ([]journal.Leg, error) {
	if len(legs) == 0 {
		return nil, nil
	}
	if kind != journal.Post {
		return nil, apperr.Invalid(apperr.CodeFormat, "posted", "posted amounts belong to a POST")
	}
	if len(legs) > trading.MaxLegsPerEntry {
		return nil, apperr.Invalid(apperr.CodeLength, "posted", "posted names at most %d accounts", trading.MaxLegsPerEntry)
	}
	out := make([]journal.Leg, 0, len(legs))
	for i, l := range legs {
		field := func(name string) string { return fmt.Sprintf("posted[%d].%s", i, name) }
		side := map[tradingv1.LegSide]journal.Side{tradingv1.LegSide_LEG_SIDE_DEBIT: journal.Debit, tradingv1.LegSide_LEG_SIDE_CREDIT: journal.Credit}[l.GetSide()]
		switch {
		case l.GetAccount() == "":
			return nil, apperr.Missing(field("account"))
		case side == "":
			return nil, apperr.Invalid(apperr.CodeFormat, field("side"), "%s must be LEG_SIDE_DEBIT or LEG_SIDE_CREDIT", field("side"))
		}
		places, ok := trading.CurrencyDecimals(l.GetCurrency())
		if !ok {
			return nil, apperr.Invalid(apperr.CodeCurrency, field("currency"), "currency %q is not supported", l.GetCurrency())
		}
		a, err := amount.ParseAmount(l.GetAmount(), places) // zero: the account posts nothing
		if err != nil || a.Sign() < 0 {
			return nil, apperr.Invalid(apperr.CodeFormat, field("amount"), "%s must be a canonical decimal of zero or more (got %q)", field("amount"), l.GetAmount())
		}
		out = append(out, journal.Leg{Holder: l.GetAccount(), Currency: l.GetCurrency(), Side: side, Amount: a})
	}
	return out, nil
}

// RecordDeposit credits a trading wallet from the world outside, once per deposit id.
func (l *Ledger) RecordDeposit(ctx context.Context, req *tradingv1.RecordDepositRequest) (*tradingv1.RecordDepositResponse, error) {
	for _, f := range []struct{ name, value string }{{"depositId", req.GetDepositId()}, {"companyId", req.GetCompanyId()},
		{"walletId", req.GetWalletId()}, {"currency", req.GetCurrency()}} {
		if f.value == "" {
			return nil, apperr.Missing(f.name)
		}
	}
	if len(req.GetDepositId()) > trading.MaxEntryIDLength {
		return nil, apperr.Invalid(apperr.CodeLength, "depositId", "depositId must be at most %d characters", trading.MaxEntryIDLength)
	}
	a, err := legAmount("amount", req.GetCurrency(), req.GetAmount())
	if err != nil {
		return nil, err
	}
	res, err := l.store.Deposit(ctx, req.GetDepositId(), req.GetCompanyId(), req.GetWalletId(), req.GetCurrency(), a)
	if err != nil {
		return nil, journalError(err)
	}
	return &tradingv1.RecordDepositResponse{EntryId: trading.DepositEntryID(req.GetDepositId()), Outcome: outcome(res)}, nil
}

// Reconcile recomputes every balance of trading's journal.
func (l *Ledger) Reconcile(ctx context.Context, _ *tradingv1.ReconcileRequest) (*tradingv1.ReconcileResponse, error) {
	r, err := l.store.Journal().Reconcile(ctx)
	if err != nil {
		return nil, err
	}
	out := &tradingv1.ReconcileResponse{Holders: int32(r.Holders), Postings: int32(r.Postings), InFlight: int32(r.InFlight),
		Violations: r.Violations}
	for _, cur := range slices.Sorted(maps.Keys(r.Totals)) {
		t := r.Totals[cur]
		out.Totals = append(out.Totals, &tradingv1.CurrencyTotals{Currency: cur, DebitsPending: t.DebitsPending.String(),
			DebitsPosted: t.DebitsPosted.String(), CreditsPending: t.CreditsPending.String(), CreditsPosted: t.CreditsPosted.String()})
	}
	return out, nil
}

// GetSystemAccount reads one system account's counters (interchange reads transit:custody
// to reconcile it with custody's in-transit account). A name that is no system account is
// 400; one never used has no counters.
func (l *Ledger) GetSystemAccount(ctx context.Context, req *tradingv1.GetSystemAccountRequest) (*tradingv1.GetSystemAccountResponse, error) {
	if !trading.IsSystemAccount(req.GetAccount()) {
		return nil, apperr.Invalid(apperr.CodeFormat, "account", "account %q is not a system account of trading's journal", req.GetAccount())
	}
	accounts, err := l.store.Journal().Accounts(ctx, req.GetAccount())
	var missing *journal.AccountError
	if err != nil && !errors.As(err, &missing) {
		return nil, err
	}
	out := &tradingv1.GetSystemAccountResponse{Account: req.GetAccount()}
	for _, cur := range slices.Sorted(maps.Keys(accounts)) {
		c := accounts[cur]
		out.Counters = append(out.Counters, &tradingv1.AccountCounters{Currency: cur, DebitsPending: c.DebitsPending.String(),
			DebitsPosted: c.DebitsPosted.String(), CreditsPending: c.CreditsPending.String(), CreditsPosted: c.CreditsPosted.String()})
	}
	return out, nil
}

func outcome(res journal.Result) tradingv1.EntryOutcome {
	if res.Replayed {
		return tradingv1.EntryOutcome_ENTRY_OUTCOME_REPLAYED
	}
	return tradingv1.EntryOutcome_ENTRY_OUTCOME_APPLIED
}

// journalError maps the journal's refusals to the caller's errors; anything else is the
// store's (an internal error at the edge).
func journalError(err error) error {
	var exists *journal.ExistsError
	switch {
	case errors.As(err, &exists):
		return &apperr.Error{Status: codes.AlreadyExists, Code: apperr.CodeExists, Field: exists.Field,
			Message: fmt.Sprintf("entry %s exists with a different %s", exists.ID, exists.Field)}
	case errors.Is(err, journal.ErrUnbalanced), errors.Is(err, journal.ErrInvalidEntry):
		return apperr.Invalid(apperr.CodeFormat, "legs", "%s", err.Error())
	case store.IsAccountMissing(err):
		return apperr.NotFound("legs", err.Error())
	}
	return err
}

// parseEntry validates a RecordEntry request into a journal entry and the wallets its legs
// name (each must belong to the company the leg names).
func parseEntry(req *tradingv1.RecordEntryRequest) (journal.Entry, []store.WalletRef, error) {
	kind := map[tradingv1.EntryKind]journal.Kind{tradingv1.EntryKind_ENTRY_KIND_TRANSFER: journal.Single, tradingv1.EntryKind_ENTRY_KIND_HOLD: journal.Pending}[req.GetKind()]
	switch {
	case req.GetEntryId() == "":
		return journal.Entry{}, nil, apperr.Missing("entryId")
	case len(req.GetEntryId()) > trading.MaxEntryIDLength:
		return journal.Entry{}, nil, apperr.Invalid(apperr.CodeLength, "entryId", "entryId must be at most %d characters", trading.MaxEntryIDLength)
	case kind == "":
		return journal.Entry{}, nil, apperr.Invalid(apperr.CodeFormat, "kind", "kind must be ENTRY_KIND_TRANSFER or ENTRY_KIND_HOLD")
	case len(req.GetCode()) > journal.MaxCode || len(req.GetBusinessKey()) > journal.MaxKey:
		return journal.Entry{}, nil, apperr.Invalid(apperr.CodeLength, "code", "code or businessKey too long")
	case len(req.GetLegs()) > trading.MaxLegsPerEntry:
		return journal.Entry{}, nil, apperr.Invalid(apperr.CodeLength, "legs", "an entry has at most %d legs", trading.MaxLegsPerEntry)
	}
	e := journal.Entry{ID: req.GetEntryId(), Kind: kind, Code: req.GetCode(), BusinessKey: req.GetBusinessKey()}
	if t := req.GetExpiresAt(); t != "" {
		at, err := time.Parse(time.RFC3339Nano, t)
		if err != nil || kind != journal.Pending {
			return journal.Entry{}, nil, apperr.Invalid(apperr.CodeFormat, "expiresAt", "expiresAt is an RFC 3339 time, on holds only")
		}
		e.ExpiresAt = at
	}
	var wallets []store.WalletRef
	for i, l := range req.GetLegs() {
		leg, ref, err := parseLeg(i, l)
		if err != nil {
			return journal.Entry{}, nil, err
		}
		e.Legs = append(e.Legs, leg)
		if ref != nil {
			wallets = append(wallets, *ref)
		}
	}
	return e, wallets, nil
}

func parseLeg(i int, l *tradingv1.JournalLeg) (journal.Leg, *store.WalletRef, error) {
	field := func(name string) string { return fmt.Sprintf("legs[%d].%s", i, name) }
	side := map[tradingv1.LegSide]journal.Side{tradingv1.LegSide_LEG_SIDE_DEBIT: journal.Debit, tradingv1.LegSide_LEG_SIDE_CREDIT: journal.Credit}[l.GetSide()]
	switch {
	case l.GetAccount() == "":
		return journal.Leg{}, nil, apperr.Missing(field("account"))
	case len(l.GetAccount()) > trading.MaxEntryIDLength:
		return journal.Leg{}, nil, apperr.Invalid(apperr.CodeLength, field("account"), "%s is too long", field("account"))
	case side == "":
		return journal.Leg{}, nil, apperr.Invalid(apperr.CodeFormat, field("side"), "%s must be LEG_SIDE_DEBIT or LEG_SIDE_CREDIT", field("side"))
	}
	var a amount.Amount
	var err error
	if l.GetCurrency() == trading.LimitUSD && trading.IsLimitHolder(l.GetAccount()) {
		// A limit valued in US dollars: its holders alone keep USD.
		if a, err = amount.ParsePositiveAmount(l.GetAmount(), trading.LimitUSDPlaces); err != nil {
			return journal.Leg{}, nil, apperr.Invalid(apperr.CodeFormat, field("amount"), "%s must be a positive canonical amount in cents", field("amount"))
		}
	} else if a, err = legAmount(field("amount"), l.GetCurrency(), l.GetAmount()); err != nil {
		return journal.Leg{}, nil, err
	}
	leg := journal.Leg{Holder: l.GetAccount(), Currency: l.GetCurrency(), Side: side, Amount: a}
	if trading.IsSystemAccount(l.GetAccount()) {
		if l.GetCompanyId() != "" {
			return journal.Leg{}, nil, apperr.Invalid(apperr.CodeFormat, field("companyId"), "a system account has no company")
		}
		return leg, nil, nil
	}
	if l.GetCompanyId() == "" {
		return journal.Leg{}, nil, apperr.Missing(field("companyId"))
	}
	return leg, &store.WalletRef{CompanyID: l.GetCompanyId(), WalletID: l.GetAccount(), Currency: l.GetCurrency(), Field: field("account"),
		CurrencyField: field("currency")}, nil
}

// legAmount reads a positive canonical amount of a supported currency.
func legAmount(field, currency, s string) (amount.Amount, error) {
	places, ok := trading.CurrencyDecimals(currency)
	if !ok {
		return amount.Zero, apperr.Invalid(apperr.CodeCurrency, "currency", "currency %q is not supported", currency)
	}
	a, err := amount.ParsePositiveAmount(s, places)
	if err != nil {
		return amount.Zero, apperr.Invalid(apperr.CodeFormat, field, "%s: %s (got %q)", field, err.Error(), s)
	}
	return a, nil
}
