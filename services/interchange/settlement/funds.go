package settlement

import (
	"context"
	"errors"
	"fmt"

	tradingv1 "github.com/zcustody/suite/proto/trading/v1"
	"github.com/zcustody/suite/services/internal/amount"
	"github.com/zcustody/suite/services/principal"
)

// MovementSystem is interchange's identity towards trading's ledger API.
const MovementSystem = "interchange"

var (
	// errLedger is a ledger answer that contradicts the settlement's own record (a hold
	// posted that the settlement never posted, a clearing account short of what it holds):
	// an internal error, never papered over.
	errLedger = errors.New("ledger disagrees with the settlement")
)

// funds drives trading's journal for settlements and withdrawals. Interchange holds no
// balances: every step is one journal entry with a deterministic id, so a retried, resumed
// or concurrent step is the same entry and moves nothing twice.
type funds struct {
	ledger tradingv1.TradingLedgerServiceClient
	signer *principal.Signer
}

// Entry ids of a settlement.
func payInID(s Settlement) string {
	return fmt.Sprintf("stl:%s:payin:%d", s.TrackingID, max(s.PayInAttempt, 1))
}
func payOutID(s Settlement) string { return "stl:" + s.TrackingID + ":payout" }
func reverseID(s Settlement) string {
	return fmt.Sprintf("stl:%s:reverse:%d", s.TrackingID, max(s.ReverseAttempt, 1))
}

// clearing is the settlement's clearing account in trading's journal.
func clearing(s Settlement) string { return "clearing:" + s.TrackingID }

// holdPayIn places PAY_IN's hold: every payer's share moves from available to pending, into
// the settlement's clearing account, in one entry (all or nothing). It reports false when a
// payer lacks the funds (nothing held).
func (f funds) holdPayIn(ctx context.Context, s Settlement) (bool, error) {
	payers := s.ofRole(RolePayer)
	if len(payers) == 0 {
		return true, nil
	}
	legs := sharesLegs(payers, tradingv1.LegSide_LEG_SIDE_DEBIT)
	legs = append(legs, clearingLegs(s, payers, tradingv1.LegSide_LEG_SIDE_CREDIT)...)
	return f.record(ctx, &tradingv1.RecordEntryRequest{EntryId: payInID(s), Kind: tradingv1.EntryKind_ENTRY_KIND_HOLD,
		Legs: legs, Code: "settlement.payin", BusinessKey: s.TrackingID})
}

// payOut posts PAY_IN's hold into the clearing account and pays every payee out of it.
func (f funds) payOut(ctx context.Context, s Settlement) error {
	if s.PayInHold != "" {
		out, err := f.resolve(ctx, s.PayInHold, s.PayInHold+":post", tradingv1.ResolveKind_RESOLVE_KIND_POST, "settlement.post")
		if err != nil {
			return err
		}
		if !done(out) {
			return fmt.Errorf("%w: post of %s answered %s", errLedger, s.PayInHold, out)
		}
	}
	payees := s.ofRole(RolePayee)
	if len(payees) == 0 {
		return nil
	}
	legs := clearingLegs(s, payees, tradingv1.LegSide_LEG_SIDE_DEBIT)
	legs = append(legs, sharesLegs(payees, tradingv1.LegSide_LEG_SIDE_CREDIT)...)
	ok, err := f.record(ctx, &tradingv1.RecordEntryRequest{EntryId: payOutID(s), Kind: tradingv1.EntryKind_ENTRY_KIND_TRANSFER,
		Legs: legs, Code: "settlement.payout", BusinessKey: s.TrackingID})
	if err == nil && !ok {
		return fmt.Errorf("%w: the clearing account of %s cannot pay its payees", errLedger, s.TrackingID)
	}
	return err
}

// release voids PAY_IN's hold, if one was placed and not posted: the payers get back
// exactly what was held. A hold of the current attempt that was never applied is nothing
// to release.
func (f funds) release(ctx context.Context, s Settlement) error {
	for _, hold := range []string{s.PayInHold, payInID(s)} {
		if hold == "" {
			continue
		}
		out, err := f.resolve(ctx, hold, hold+":void", tradingv1.ResolveKind_RESOLVE_KIND_VOID, "settlement.release")
		if err != nil {
			return err
		}
		if out == tradingv1.EntryOutcome_ENTRY_OUTCOME_HOLD_ALREADY_POSTED {
			return fmt.Errorf("%w: %s is posted, it cannot be released", errLedger, hold)
		}
	}
	return nil
}

// reverse undoes a paid-out settlement by a new entry: every payee pays back its share and
// every payer gets its share back. It reports false when a payee no longer holds it.
func (f funds) reverse(ctx context.Context, s Settlement) (bool, error) {
	legs := sharesLegs(s.ofRole(RolePayee), tradingv1.LegSide_LEG_SIDE_DEBIT)
	legs = append(legs, sharesLegs(s.ofRole(RolePayer), tradingv1.LegSide_LEG_SIDE_CREDIT)...)
	if len(legs) == 0 {
		return true, nil
	}
	return f.record(ctx, &tradingv1.RecordEntryRequest{EntryId: reverseID(s), Kind: tradingv1.EntryKind_ENTRY_KIND_TRANSFER,
		Legs: legs, Code: "settlement.reverse", BusinessKey: s.TrackingID})
}

func sharesLegs(shares []Share, side tradingv1.LegSide) []*tradingv1.JournalLeg {
	out := make([]*tradingv1.JournalLeg, 0, len(shares))
	for _, sh := range shares {
		out = append(out, &tradingv1.JournalLeg{CompanyId: sh.CompanyID, Account: sh.WalletID, Currency: sh.Currency, Side: side, Amount: sh.Amount})
	}
	return out
}

// clearingLegs are the clearing account's side of shares: one leg per currency.
func clearingLegs(s Settlement, shares []Share, side tradingv1.LegSide) []*tradingv1.JournalLeg {
	totals := map[string]string{}
	var order []string
	for _, sh := range shares {
		if _, ok := totals[sh.Currency]; !ok {
			order = append(order, sh.Currency)
		}
		totals[sh.Currency] = addDecimal(totals[sh.Currency], sh.Amount)
	}
	out := make([]*tradingv1.JournalLeg, 0, len(order))
	for _, cur := range order {
		out = append(out, &tradingv1.JournalLeg{Account: clearing(s), Currency: cur, Side: side, Amount: totals[cur]})
	}
	return out
}

// record sends one entry; it reports false for a lack of funds.
func (f funds) record(ctx context.Context, req *tradingv1.RecordEntryRequest) (bool, error) {
	ctx, err := f.signer.OutgoingContext(ctx, principal.Principal{Kind: principal.KindSystem, System: MovementSystem})
	if err != nil {
		return false, err
	}
	resp, err := f.ledger.RecordEntry(ctx, req)
	if err != nil {
		return false, fmt.Errorf("entry %s: %w", req.GetEntryId(), err)
	}
	return resp.GetOutcome() != tradingv1.EntryOutcome_ENTRY_OUTCOME_INSUFFICIENT_FUNDS, nil
}

// resolve posts or voids a hold and answers the outcome.
func (f funds) resolve(ctx context.Context, hold, id string, kind tradingv1.ResolveKind, code string) (tradingv1.EntryOutcome, error) {
	ctx, err := f.signer.OutgoingContext(ctx, principal.Principal{Kind: principal.KindSystem, System: MovementSystem})
	if err != nil {
		return 0, err
	}
	resp, err := f.ledger.ResolveHold(ctx, &tradingv1.ResolveHoldRequest{EntryId: id, HoldId: hold, Kind: kind, Code: code})
	if err != nil {
		return 0, fmt.Errorf("resolve %s: %w", hold, err)
	}
	return resp.GetOutcome(), nil
}

// done reports whether a resolution is in place (by this call or an earlier one).
func done(o tradingv1.EntryOutcome) bool {
	return o == tradingv1.EntryOutcome_ENTRY_OUTCOME_APPLIED || o == tradingv1.EntryOutcome_ENTRY_OUTCOME_REPLAYED
}

// addDecimal adds two canonical decimal strings ("" is zero).
func addDecimal(a, b string) string { return amount.MustStored(a).Add(amount.MustStored(b)).String() }

// holdAttempt is w's current hold attempt (1 for withdrawals stored before attempts).
func holdAttempt(w Withdrawal) int { return max(w.HoldAttempt, 1) }

// withdrawalHold is the hold of withdrawal w's amount at attempt n.
func withdrawalHold(w Withdrawal, n int) string { return fmt.Sprintf("wd:%s:hold:%d", w.TransferID, n) }

// holdWithdrawal reserves w's amount on its wallet (available → pending out) for the world
// outside, under w's current attempt; it reports false when the wallet lacks it. A hold id
// a DECLINE already released (blocked) is AlreadyExists.
func (f funds) holdWithdrawal(ctx context.Context, w Withdrawal) (bool, error) {
	return f.record(ctx, &tradingv1.RecordEntryRequest{EntryId: withdrawalHold(w, holdAttempt(w)), Kind: tradingv1.EntryKind_ENTRY_KIND_HOLD,
		Code: "withdrawal.hold", BusinessKey: w.TransferID, Legs: []*tradingv1.JournalLeg{
			{CompanyId: w.CompanyID, Account: w.WalletID, Currency: w.Currency, Side: tradingv1.LegSide_LEG_SIDE_DEBIT, Amount: w.Amount},
			{Account: "world:withdrawals", Currency: w.Currency, Side: tradingv1.LegSide_LEG_SIDE_CREDIT, Amount: w.Amount},
		}})
}

// settleWithdrawal posts an accepted withdrawal's hold (its attempt is frozen by the
// decision): the amount leaves the wallet.
func (f funds) settleWithdrawal(ctx context.Context, w Withdrawal) error {
	hold := withdrawalHold(w, holdAttempt(w))
	out, err := f.resolve(ctx, hold, hold+":post", tradingv1.ResolveKind_RESOLVE_KIND_POST, "withdrawal.post")
	if err == nil && !done(out) {
		return fmt.Errorf("%w: post of %s answered %s", errLedger, hold, out)
	}
	return err
}

// releaseWithdrawal voids every hold an ACCEPT may have placed on a declined withdrawal (one
// that lost the race to the DECLINE): a hold placed is released, one not placed yet is
// blocked, so it can never be placed after.
func (f funds) releaseWithdrawal(ctx context.Context, w Withdrawal) error {
	for n := 1; n <= holdAttempt(w); n++ {
		hold := withdrawalHold(w, n)
		out, err := f.resolve(ctx, hold, hold+":void", tradingv1.ResolveKind_RESOLVE_KIND_VOID, "withdrawal.release")
		if err != nil {
			return err
		}
		if out == tradingv1.EntryOutcome_ENTRY_OUTCOME_HOLD_ALREADY_POSTED {
			return fmt.Errorf("%w: %s is posted, it cannot be released", errLedger, hold)
		}
	}
	return nil
}
