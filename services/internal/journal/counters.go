package journal

import (
	"fmt"

	"github.com/zcustody/suite/services/internal/amount"
)

// Counters are an account's four totals, TigerBeetle's: every balance the product shows is
// derived from them, never stored beside them.
type Counters struct {
	DebitsPending  amount.Amount
	DebitsPosted   amount.Amount
	CreditsPending amount.Amount
	CreditsPosted  amount.Amount
}

// Add returns c + d, counter by counter.
func (c Counters) Add(d Counters) Counters {
	return Counters{DebitsPending: c.DebitsPending.Add(d.DebitsPending), DebitsPosted: c.DebitsPosted.Add(d.DebitsPosted),
		CreditsPending: c.CreditsPending.Add(d.CreditsPending), CreditsPosted: c.CreditsPosted.Add(d.CreditsPosted)}
}

// Neg returns −c.
func (c Counters) Neg() Counters {
	return Counters{DebitsPending: c.DebitsPending.Neg(), DebitsPosted: c.DebitsPosted.Neg(),
		CreditsPending: c.CreditsPending.Neg(), CreditsPosted: c.CreditsPosted.Neg()}
}

// Equal reports whether every counter is equal.
func (c Counters) Equal(d Counters) bool {
	return c.DebitsPending.Equal(d.DebitsPending) && c.DebitsPosted.Equal(d.DebitsPosted) &&
		c.CreditsPending.Equal(d.CreditsPending) && c.CreditsPosted.Equal(d.CreditsPosted)
}

// IsZero reports whether every counter is zero.
func (c Counters) IsZero() bool { return c.Equal(Counters{}) }

// Ledger is the settled balance of a credit-normal account: credits posted − debits posted.
func (c Counters) Ledger() amount.Amount { return c.CreditsPosted.Sub(c.DebitsPosted) }

// Available is what the holder may spend: the ledger balance less what is held
// (pending-in never counts).
func (c Counters) Available() amount.Amount { return c.Ledger().Sub(c.DebitsPending) }

// PendingOut is what holds reserve on the account.
func (c Counters) PendingOut() amount.Amount { return c.DebitsPending }

// PendingIn is what holds will credit to the account.
func (c Counters) PendingIn() amount.Amount { return c.CreditsPending }

// String is for messages and test failures.
func (c Counters) String() string {
	return fmt.Sprintf("dPend=%s dPost=%s cPend=%s cPost=%s", c.DebitsPending, c.DebitsPosted, c.CreditsPending, c.CreditsPosted)
}

// checkNonNegative asserts that no counter went below zero: a counter is a sum of positive
// amounts, so a negative one means a leg was undone that was never applied.
func (c Counters) checkNonNegative() error {
	for _, v := range []amount.Amount{c.DebitsPending, c.DebitsPosted, c.CreditsPending, c.CreditsPosted} {
		if v.Sign() < 0 {
			return fmt.Errorf("%w: negative counter (%s)", ErrInvariant, c)
		}
	}
	return nil
}

// countersDoc stores counters as canonical decimal strings.
type countersDoc struct {
	DebitsPending  string `bson:"dPend"`
	DebitsPosted   string `bson:"dPost"`
	CreditsPending string `bson:"cPend"`
	CreditsPosted  string `bson:"cPost"`
}

func toCountersDoc(c Counters) countersDoc {
	return countersDoc{DebitsPending: c.DebitsPending.String(), DebitsPosted: c.DebitsPosted.String(),
		CreditsPending: c.CreditsPending.String(), CreditsPosted: c.CreditsPosted.String()}
}

func (d countersDoc) counters() (Counters, error) {
	var c Counters
	for _, f := range []struct {
		s   string
		dst *amount.Amount
	}{{d.DebitsPending, &c.DebitsPending}, {d.DebitsPosted, &c.DebitsPosted}, {d.CreditsPending, &c.CreditsPending}, {d.CreditsPosted, &c.CreditsPosted}} {
		v, err := amount.FromStored(f.s)
		if err != nil {
			return Counters{}, err
		}
		*f.dst = v
	}
	return c, nil
}
