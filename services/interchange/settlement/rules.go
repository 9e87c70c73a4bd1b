package settlement

import (
	"fmt"

	"github.com/zcustody/suite/services/apperr"
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
)

// Rules bound an instruction: legs per settlement, the gross amount per currency, and who
// may instruct payables.
type Rules struct {
	MaxLegs int
	// MaxGross bounds, per currency, the sum of the legs' sizes; a currency without a bound
	// is refused.
	MaxGross map[string]amount.Amount
	// Payables allows negative legs (the venue pays the wallet). A client's own instruction
	// holds receivables only: payables move the venue's money and come from the venue's side
	// (the settlement engine).
	Payables bool
}

// Check applies the rules to parsed legs.
func (r Rules) Check(legs []Leg) error {
	gross := map[string]amount.Amount{}
	for i, l := range legs {
		a := amount.MustStored(l.Amount)
		if a.Sign() < 0 && !r.Payables {
			field := fmt.Sprintf("settlements[%d].amount", i)
			return apperr.ForbiddenField(field, "%s %s is a payable: payables move the venue's money and are instructed by the venue, a client's instruction holds receivables only", field, l.Amount)
		}
		gross[l.Currency] = gross[l.Currency].Add(a.Abs())
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
