package settlement

import (
	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/services/internal/amount"
)

// Limits of a settlement instruction.
const (
	MaxIDLength        = 64
	DefaultMaxLegs     = 1000
	MaxAddresses       = 100
	MaxAddressLength   = 128
	MaxMemoLength      = 128
	MaxErrorsLength    = 1024
	MaxDestinationTag  = 2147483647
	MaxReasonLength    = 512
	CounterpartyWallet = "WALLET_ID"
	// MaxAttempts bounds how often a settlement's PAY_IN is tried (each refusal for lack of
	// funds leaves it AWAITING_FUNDS) and how often its reversal is (FAILED after PAY_OUT,
	// refused while a payee no longer holds its share): every try is a step of the history
	// kept in the settlement's document, which must stay bounded. Past it, PAY_IN is refused
	// (the settlement can still fail), and so is the reversal.
	MaxAttempts = 50
)

// Rules bound an instruction: legs per settlement and the gross amount per currency.
type Rules struct {
	MaxLegs int
	// MaxGross bounds, per currency, the sum of the legs' sizes; a currency without a bound
	// is refused.
	MaxGross map[string]amount.Amount
}

// Check applies the rules to parsed legs.
func (r Rules) Check(legs []Leg) error {
	gross := map[string]amount.Amount{}
	for _, l := range legs {
		gross[l.Currency] = gross[l.Currency].Add(amount.MustStored(l.Amount).Abs())
	}
	for cur, g := range gross {
		bound, ok := r.MaxGross[cur]
		if !ok || g.Cmp(bound) > 0 {
			return apperr.Invalid(apperr.CodeLength, "settlements", "the %s settlements add up to %s, beyond the %s per settlement allowed", cur, g, bound)
		}
	}
	return nil
}

// DefaultMaxGross is the default bound of one settlement's gross amount per currency.
func DefaultMaxGross() map[string]amount.Amount {
	out := map[string]amount.Amount{}
	for cur, v := range map[string]string{"BTC": "10000", "ETH": "200000", "USDC": "500000000", "EURC": "500000000", "XLM": "5000000000", "XRP": "1000000000"} {
		out[cur] = amount.MustStored(v)
	}
	return out
}
