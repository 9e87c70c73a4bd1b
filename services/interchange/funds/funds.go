// Package funds moves interchange's money in trading's journal, over trading's ledger API.
// Interchange holds no balances: every step of a settlement or a withdrawal is one journal
// entry with the deterministic id its aggregate names, so a retried, resumed or concurrent
// step is the same entry and moves nothing twice. It also reads trading wallets for the
// settlement checks, and trading's prices to value service requests (Prices).
package funds

import (
	"context"
	"errors"
	"fmt"

	"github.com/zcustody/suite/platform/principal"
	tradingv1 "github.com/zcustody/suite/proto/trading/v1"
	"github.com/zcustody/suite/services/internal/amount"
	"github.com/zcustody/suite/services/internal/catalog"
)

// System is interchange's identity towards trading's ledger API.
const System = catalog.Interchange

// errLedger is a ledger answer that contradicts the aggregate's own record (a hold posted
// that the settlement never posted, a clearing account short of what it holds): an internal
// error, never papered over.
var errLedger = errors.New("ledger disagrees with interchange's record")

// ledger sends entries to trading under interchange's own principal.
type ledger struct {
	client tradingv1.TradingLedgerServiceClient
	signer *principal.Signer
}

// record sends one entry; it reports false for a lack of funds.
func (l ledger) record(ctx context.Context, req *tradingv1.RecordEntryRequest) (bool, error) {
	ctx, err := l.signer.OutgoingContext(ctx, principal.Principal{Kind: principal.KindSystem, System: System})
	if err != nil {
		return false, err
	}
	resp, err := l.client.RecordEntry(ctx, req)
	if err != nil {
		return false, fmt.Errorf("entry %s: %w", req.GetEntryId(), err)
	}
	return resp.GetOutcome() != tradingv1.EntryOutcome_ENTRY_OUTCOME_INSUFFICIENT_FUNDS, nil
}

// resolve posts or voids a hold and answers the outcome; a post naming posted posts those
// amounts and releases the rest.
func (l ledger) resolve(ctx context.Context, hold, id string, kind tradingv1.ResolveKind, code string, posted ...*tradingv1.JournalLeg) (tradingv1.EntryOutcome, error) {
	ctx, err := l.signer.OutgoingContext(ctx, principal.Principal{Kind: principal.KindSystem, System: System})
	if err != nil {
		return 0, err
	}
	resp, err := l.client.ResolveHold(ctx, &tradingv1.ResolveHoldRequest{EntryId: id, HoldId: hold, Kind: kind, Code: code, Posted: posted})
	if err != nil {
		return 0, fmt.Errorf("resolve %s: %w", hold, err)
	}
	return resp.GetOutcome(), nil
}

// post posts a hold; anything but a post in place is errLedger.
func (l ledger) post(ctx context.Context, hold, code string) error {
	return l.postPartial(ctx, hold, code)
}

// postPartial posts the amounts posted names of a hold and releases the rest in the same
// entry (none named: the whole hold); anything but a post in place is errLedger.
func (l ledger) postPartial(ctx context.Context, hold, code string, posted ...*tradingv1.JournalLeg) error {
	out, err := l.resolve(ctx, hold, hold+":post", tradingv1.ResolveKind_RESOLVE_KIND_POST, code, posted...)
	if err == nil && !done(out) {
		return fmt.Errorf("%w: post of %s answered %s", errLedger, hold, out)
	}
	return err
}

// void voids a hold (or blocks its id when it was never placed); a posted hold is errLedger.
func (l ledger) void(ctx context.Context, hold, code string) error {
	out, err := l.resolve(ctx, hold, hold+":void", tradingv1.ResolveKind_RESOLVE_KIND_VOID, code)
	if err == nil && out == tradingv1.EntryOutcome_ENTRY_OUTCOME_HOLD_ALREADY_POSTED {
		return fmt.Errorf("%w: %s is posted, it cannot be released", errLedger, hold)
	}
	return err
}

// done reports whether a resolution is in place (by this call or an earlier one).
func done(o tradingv1.EntryOutcome) bool {
	return o == tradingv1.EntryOutcome_ENTRY_OUTCOME_APPLIED || o == tradingv1.EntryOutcome_ENTRY_OUTCOME_REPLAYED
}

// addDecimal adds two canonical decimal strings ("" is zero).
func addDecimal(a, b string) string { return amount.MustStored(a).Add(amount.MustStored(b)).String() }
