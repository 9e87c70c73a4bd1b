package funds

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/zcustody/suite/platform/principal"
	tradingv1 "github.com/zcustody/suite/proto/trading/v1"
	"github.com/zcustody/suite/services/interchange/settlement"
	"github.com/zcustody/suite/services/internal/amount"
)

// Settlements moves settlements' money (settlement.Funds).
type Settlements struct{ ledger ledger }

var _ settlement.Funds = Settlements{}

// NewSettlements returns the settlements' funds over trading's ledger client.
func NewSettlements(client tradingv1.TradingLedgerServiceClient, signer *principal.Signer) Settlements {
	return Settlements{ledger: ledger{client: client, signer: signer}}
}

// HoldPayIn places PAY_IN's hold: every payer's share moves from available to pending, into
// the settlement's clearing account, in one entry (all or nothing). It reports false when a
// payer lacks the funds (nothing held).
func (f Settlements) HoldPayIn(ctx context.Context, s settlement.Settlement) (bool, error) {
	payers := s.OfRole(settlement.RolePayer)
	if len(payers) == 0 {
		return true, nil
	}
	legs := sharesLegs(payers, tradingv1.LegSide_LEG_SIDE_DEBIT)
	legs = append(legs, clearingLegs(s, payers, tradingv1.LegSide_LEG_SIDE_CREDIT)...)
	return f.ledger.record(ctx, &tradingv1.RecordEntryRequest{EntryId: settlement.PayInID(s), Kind: tradingv1.EntryKind_ENTRY_KIND_HOLD,
		Legs: legs, Code: "settlement.payin", BusinessKey: s.TrackingID})
}

// PayOut posts PAY_IN's hold into the clearing account and pays every payee out of it.
func (f Settlements) PayOut(ctx context.Context, s settlement.Settlement) error {
	if s.PayInHold != "" {
		if err := f.ledger.post(ctx, s.PayInHold, "settlement.post"); err != nil {
			return err
		}
	}
	payees := s.OfRole(settlement.RolePayee)
	if len(payees) == 0 {
		return nil
	}
	legs := clearingLegs(s, payees, tradingv1.LegSide_LEG_SIDE_DEBIT)
	legs = append(legs, sharesLegs(payees, tradingv1.LegSide_LEG_SIDE_CREDIT)...)
	ok, err := f.ledger.record(ctx, &tradingv1.RecordEntryRequest{EntryId: settlement.PayOutID(s), Kind: tradingv1.EntryKind_ENTRY_KIND_TRANSFER,
		Legs: legs, Code: "settlement.payout", BusinessKey: s.TrackingID})
	if err == nil && !ok {
		return fmt.Errorf("%w: the clearing account of %s cannot pay its payees", errLedger, s.TrackingID)
	}
	return err
}

// Release voids PAY_IN's hold, if one was placed and not posted: the payers get back
// exactly what was held. A hold of the current attempt that was never applied is blocked,
// so it can never be applied after.
func (f Settlements) Release(ctx context.Context, s settlement.Settlement) error {
	for _, hold := range []string{s.PayInHold, settlement.PayInID(s)} {
		if hold == "" {
			continue
		}
		if err := f.ledger.void(ctx, hold, "settlement.release"); err != nil {
			return err
		}
	}
	return nil
}

// Reverse undoes a paid-out settlement by a new entry: every payee pays back its share and
// every payer gets its share back. It reports false when a payee no longer holds it.
func (f Settlements) Reverse(ctx context.Context, s settlement.Settlement) (bool, error) {
	legs := sharesLegs(s.OfRole(settlement.RolePayee), tradingv1.LegSide_LEG_SIDE_DEBIT)
	legs = append(legs, sharesLegs(s.OfRole(settlement.RolePayer), tradingv1.LegSide_LEG_SIDE_CREDIT)...)
	if len(legs) == 0 {
		return true, nil
	}
	return f.ledger.record(ctx, &tradingv1.RecordEntryRequest{EntryId: settlement.ReverseID(s), Kind: tradingv1.EntryKind_ENTRY_KIND_TRANSFER,
		Legs: legs, Code: "settlement.reverse", BusinessKey: s.TrackingID})
}

// Uncleared reads the settlement's clearing account in trading's journal and names every
// currency whose balance, pending or posted, is not zero ("" when none is).
func (f Settlements) Uncleared(ctx context.Context, s settlement.Settlement) (string, error) {
	ctx, err := f.ledger.signer.OutgoingContext(ctx, principal.Principal{Kind: principal.KindSystem, System: System})
	if err != nil {
		return "", err
	}
	account := settlement.ClearingAccount(s)
	resp, err := f.ledger.client.GetSystemAccount(ctx, &tradingv1.GetSystemAccountRequest{Account: account})
	if err != nil {
		return "", fmt.Errorf("read %s: %w", account, err)
	}
	var left []string
	for _, c := range resp.GetCounters() {
		net := func(credits, debits string) (amount.Amount, error) {
			cr, err := amount.FromStored(credits)
			if err != nil {
				return amount.Zero, err
			}
			dr, err := amount.FromStored(debits)
			return cr.Sub(dr), err
		}
		posted, err1 := net(c.GetCreditsPosted(), c.GetDebitsPosted())
		pending, err2 := net(c.GetCreditsPending(), c.GetDebitsPending())
		if err := errors.Join(err1, err2); err != nil {
			return "", fmt.Errorf("%s %s: %w", account, c.GetCurrency(), err)
		}
		if !posted.IsZero() || !pending.IsZero() {
			left = append(left, fmt.Sprintf("%s %s posted, %s pending", c.GetCurrency(), posted, pending))
		}
	}
	return strings.Join(left, "; "), nil
}

func sharesLegs(shares []settlement.Share, side tradingv1.LegSide) []*tradingv1.JournalLeg {
	out := make([]*tradingv1.JournalLeg, 0, len(shares))
	for _, sh := range shares {
		out = append(out, &tradingv1.JournalLeg{CompanyId: sh.CompanyID, Account: sh.WalletID, Currency: sh.Currency, Side: side, Amount: sh.Amount})
	}
	return out
}

// clearingLegs are the clearing account's side of shares: one leg per currency.
func clearingLegs(s settlement.Settlement, shares []settlement.Share, side tradingv1.LegSide) []*tradingv1.JournalLeg {
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
		out = append(out, &tradingv1.JournalLeg{Account: settlement.ClearingAccount(s), Currency: cur, Side: side, Amount: totals[cur]})
	}
	return out
}
