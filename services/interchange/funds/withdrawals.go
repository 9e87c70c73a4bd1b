package funds

import (
	"context"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/zcustody/suite/platform/principal"
	tradingv1 "github.com/zcustody/suite/proto/trading/v1"
	"github.com/zcustody/suite/services/interchange/withdrawal"
	"github.com/zcustody/suite/services/internal/amount"
	"github.com/zcustody/suite/services/trading"
)

// Withdrawals moves withdrawals' money (withdrawal.Funds): in trading's journal, and in
// custody's for a withdrawal to a custody wallet.
type Withdrawals struct {
	ledger  ledger
	custody Custody
}

var _ withdrawal.Funds = Withdrawals{}

// NewWithdrawals returns the withdrawals' funds over trading's ledger client and custody.
func NewWithdrawals(client tradingv1.TradingLedgerServiceClient, custody Custody, signer *principal.Signer) Withdrawals {
	return Withdrawals{ledger: ledger{client: client, signer: signer}, custody: custody}
}

// Hold reserves w's amount on its wallet (available → pending out) for the world outside,
// or for trading's in-transit account when w goes to a custody wallet, under w's current
// attempt; it reports false when the wallet lacks it. A withdrawal holding a network fee
// limit reserves the limit too, for the network-fees account. A hold id a DECLINE already
// released is withdrawal.ErrHoldBlocked.
func (f Withdrawals) Hold(ctx context.Context, w withdrawal.Withdrawal) (bool, error) {
	held, err := f.ledger.record(ctx, &tradingv1.RecordEntryRequest{EntryId: withdrawal.HoldID(w, w.Attempt()), Kind: tradingv1.EntryKind_ENTRY_KIND_HOLD,
		Code: "withdrawal.hold", BusinessKey: w.TransferID, Legs: withdrawalLegs(w, w.Held().String(), w.NetworkFeeLimit)})
	if status.Code(err) == codes.AlreadyExists {
		return false, withdrawal.ErrHoldBlocked
	}
	return held, err
}

// Settle posts an accepted withdrawal's hold (its attempt is frozen by the decision): the
// amount leaves the wallet, for the world outside or for trading's in-transit account; one
// to a custody wallet is then credited there out of custody's in-transit account. Both
// steps are entries under fixed ids, so a repeat (the caller's or the sweeper's) after a
// crash between them completes the second without moving the first twice.
//
// A withdrawal holding a network fee limit is posted for its amount plus the fee the venue
// charged on ACCEPT (w.NetworkFee, recorded with the decision, so every repeat posts the
// same amounts), and the rest of the limit returns to the wallet in the same entry
// (a partial post).
func (f Withdrawals) Settle(ctx context.Context, w withdrawal.Withdrawal) error {
	hold := withdrawal.HoldID(w, w.Attempt())
	var err error
	if w.HoldsFee() {
		charged := amount.MustStored(w.Amount).Add(amount.MustStored(w.NetworkFee))
		err = f.ledger.postPartial(ctx, hold, "withdrawal.post", withdrawalLegs(w, charged.String(), w.NetworkFee)...)
	} else {
		err = f.ledger.post(ctx, hold, "withdrawal.post")
	}
	if err != nil || !w.ToCustody() {
		return err
	}
	return f.custody.Credit(ctx, w)
}

// withdrawalLegs are the legs of w's hold, or of what its post charges: the wallet pays
// debit, the world outside (or trading's in-transit account, for a custody wallet)
// receives the amount, and the network-fees account fee (no leg when w holds no fee).
func withdrawalLegs(w withdrawal.Withdrawal, debit, fee string) []*tradingv1.JournalLeg {
	to := trading.WorldWithdrawals
	if w.ToCustody() {
		to = trading.TransitCustody
	}
	legs := []*tradingv1.JournalLeg{
		{CompanyId: w.CompanyID, Account: w.WalletID, Currency: w.Currency, Side: tradingv1.LegSide_LEG_SIDE_DEBIT, Amount: debit},
		{Account: to, Currency: w.Currency, Side: tradingv1.LegSide_LEG_SIDE_CREDIT, Amount: w.Amount},
	}
	if w.HoldsFee() {
		legs = append(legs, &tradingv1.JournalLeg{Account: trading.WorldNetworkFees, Currency: w.Currency, Side: tradingv1.LegSide_LEG_SIDE_CREDIT, Amount: fee})
	}
	return legs
}

// Release voids the hold of a declined withdrawal's current attempt, the only one that can
// have been placed (an earlier attempt was refused for lack of funds, for good): a hold placed
// is released, one not placed yet, an ACCEPT's that lost the race to the DECLINE, is blocked,
// so it can never be placed after.
func (f Withdrawals) Release(ctx context.Context, w withdrawal.Withdrawal) error {
	return f.ledger.void(ctx, withdrawal.HoldID(w, w.Attempt()), "withdrawal.release")
}
