package funds

import (
	"context"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/zcustody/suite/platform/principal"
	tradingv1 "github.com/zcustody/suite/proto/trading/v1"
	"github.com/zcustody/suite/services/interchange/withdrawal"
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
// attempt; it reports false when the wallet lacks it. A hold id a DECLINE already released
// is withdrawal.ErrHoldBlocked.
func (f Withdrawals) Hold(ctx context.Context, w withdrawal.Withdrawal) (bool, error) {
	to := trading.WorldWithdrawals
	if w.ToCustody() {
		to = trading.TransitCustody
	}
	held, err := f.ledger.record(ctx, &tradingv1.RecordEntryRequest{EntryId: withdrawal.HoldID(w, w.Attempt()), Kind: tradingv1.EntryKind_ENTRY_KIND_HOLD,
		Code: "withdrawal.hold", BusinessKey: w.TransferID, Legs: []*tradingv1.JournalLeg{
			{CompanyId: w.CompanyID, Account: w.WalletID, Currency: w.Currency, Side: tradingv1.LegSide_LEG_SIDE_DEBIT, Amount: w.Amount},
			{Account: to, Currency: w.Currency, Side: tradingv1.LegSide_LEG_SIDE_CREDIT, Amount: w.Amount},
		}})
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
func (f Withdrawals) Settle(ctx context.Context, w withdrawal.Withdrawal) error {
	if err := f.ledger.post(ctx, withdrawal.HoldID(w, w.Attempt()), "withdrawal.post"); err != nil || !w.ToCustody() {
		return err
	}
	return f.custody.Credit(ctx, w)
}

// Release voids the hold of a declined withdrawal's current attempt, the only one that can
// have been placed (an earlier attempt was refused for lack of funds, for good): a hold placed
// is released, one not placed yet, an ACCEPT's that lost the race to the DECLINE, is blocked,
// so it can never be placed after.
func (f Withdrawals) Release(ctx context.Context, w withdrawal.Withdrawal) error {
	return f.ledger.void(ctx, withdrawal.HoldID(w, w.Attempt()), "withdrawal.release")
}
