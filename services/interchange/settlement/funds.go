package settlement

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	tradingv1 "github.com/zcustody/suite/proto/trading/v1"
	"github.com/zcustody/suite/services/principal"
)

// MovementSystem is interchange's identity towards trading's ledger API.
const MovementSystem = "interchange"

// errInsufficient marks a movement trading refused because a balance would go negative.
var errInsufficient = errors.New("insufficient funds")

// Venue settlement wallets, trading's convention (trading.VenueWalletID): one per venue and
// currency, `<venueId>-ISW-<currency>`, owned by `VENUE-<venueId>`.
func venueWallet(venueID, currency string) (companyID, walletID string) {
	return "VENUE-" + venueID, venueID + "-ISW-" + currency
}

// funds moves money on trading wallets through trading's ledger API. Every movement has a
// deterministic id, so a retried or concurrent step never moves twice.
type funds struct {
	ledger tradingv1.TradingLedgerServiceClient
	signer *principal.Signer
}

// side is one wallet of a movement.
type side struct{ companyID, walletID string }

// parties returns who pays and who is paid for o of settlement s.
func parties(s Settlement, o Obligation) (payer, payee side) {
	venueCompany, venueID := venueWallet(s.VenueID, o.Currency)
	client, venue := side{s.CompanyID, o.WalletID}, side{venueCompany, venueID}
	if o.Direction == DirectionOut {
		return venue, client
	}
	return client, venue
}

// run moves the obligations of one phase: first a hold on every payer (available →
// pendingOut), which is the funds check; only when all are held, each is settled (the payer's
// ledger and pendingOut go down) and credited to the payee. It reports false when a hold is
// refused for lack of funds: the holds made stay open (Settlement.OpenHolds).
func (f funds) run(ctx context.Context, s Settlement, phase string, obs []Obligation) (bool, error) {
	for _, o := range obs {
		payer, _ := parties(s, o)
		err := f.move(ctx, s, o, phase, "hold", payer, "-"+o.Amount, "", o.Amount)
		if errors.Is(err, errInsufficient) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
	}
	for _, o := range obs {
		payer, payee := parties(s, o)
		if err := f.move(ctx, s, o, phase, "settle", payer, "", "-"+o.Amount, "-"+o.Amount); err != nil {
			return false, err
		}
		if err := f.move(ctx, s, o, phase, "credit", payee, o.Amount, o.Amount, ""); err != nil {
			return false, err
		}
	}
	return true, nil
}

// release gives back the holds a phase may have left open. A hold is asked for again first
// (a no-op when it was made, or one made now): only a hold that exists is released, so a
// hold that was never made is never "released" out of other funds.
func (f funds) release(ctx context.Context, s Settlement, phase string) error {
	direction := map[string]string{phaseOf(StatusPayIn): DirectionIn, phaseOf(StatusPayOut): DirectionOut}[phase]
	for _, o := range s.obligations(direction) {
		payer, _ := parties(s, o)
		err := f.move(ctx, s, o, phase, "hold", payer, "-"+o.Amount, "", o.Amount)
		if neverHeld(err) {
			continue
		}
		if err != nil {
			return err
		}
		if err := f.move(ctx, s, o, "FAILED", "release", payer, o.Amount, "", "-"+o.Amount); err != nil {
			return err
		}
	}
	return nil
}

// neverHeld reports whether a hold asked for again was refused: a hold that cannot be made
// now (no funds, no such wallet or currency) was never made, as a repeat of one that was
// made is answered as applied.
func neverHeld(err error) bool {
	c := status.Code(err)
	return errors.Is(err, errInsufficient) || c == codes.NotFound || c == codes.InvalidArgument
}

// move applies one movement of settlement s, id <trackingId>:<phase>:<obligation>:<step>.
func (f funds) move(ctx context.Context, s Settlement, o Obligation, phase, step string, w side, available, ledger, pendingOut string) error {
	id := fmt.Sprintf("%s:%s:%s:%s", s.TrackingID, phase, o.Key, step)
	return f.apply(ctx, id, w, o.Currency, "settlement "+s.TrackingID+" "+step, available, ledger, pendingOut)
}

// withdraw applies one step of withdrawal w, id WD:<transferId>:<step>: hold (available →
// pendingOut), settle (the held amount leaves: ledger and pendingOut go down) or release
// (pendingOut → available).
func (f funds) withdraw(ctx context.Context, w Withdrawal, step string) error {
	a, minus := w.Amount, "-"+w.Amount
	d := map[string][3]string{"hold": {minus, "", a}, "settle": {"", minus, minus}, "release": {a, "", minus}}[step]
	return f.apply(ctx, "WD:"+w.TransferID+":"+step, side{w.CompanyID, w.WalletID}, w.Currency, "withdrawal "+w.TransferID+" "+step, d[0], d[1], d[2])
}

// apply sends one movement to trading as interchange. A refusal for lack of funds is
// errInsufficient.
func (f funds) apply(ctx context.Context, id string, w side, currency, reason, available, ledger, pendingOut string) error {
	ctx, err := f.signer.OutgoingContext(ctx, principal.Principal{Kind: principal.KindSystem, System: MovementSystem})
	if err != nil {
		return err
	}
	_, err = f.ledger.ApplyMovement(ctx, &tradingv1.ApplyMovementRequest{MovementId: id, CompanyId: w.companyID, WalletId: w.walletID,
		Currency: currency, AvailableDelta: available, LedgerDelta: ledger, PendingOutDelta: pendingOut, Reason: reason})
	if status.Code(err) == codes.FailedPrecondition {
		return fmt.Errorf("movement %s: %w: %s", id, errInsufficient, status.Convert(err).Message())
	}
	if err != nil {
		return fmt.Errorf("movement %s: %w", id, err)
	}
	return nil
}

// phaseOf names the movements of a transition into status: PAY_IN, PAY_OUT.
func phaseOf(status string) string {
	switch status {
	case StatusPayIn:
		return "PAY_IN"
	case StatusPayOut:
		return "PAY_OUT"
	}
	return ""
}
