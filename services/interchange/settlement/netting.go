package settlement

import (
	"fmt"

	"github.com/shopspring/decimal"

	interchangev1 "github.com/zcustody/suite/proto/interchange/v1"
	"github.com/zcustody/suite/services/apperr"
)

// parseNets validates netSettlements. A net amount is a signed canonical decimal seen from
// the client: positive, the client owes the venue that much of the currency (a receivable);
// negative, the venue owes the client (a payable); zero, the legs cancel out.
func parseNets(in []*interchangev1.NetSettlement) ([]Net, error) {
	out := make([]Net, 0, len(in))
	seen := map[string]int{}
	for i, n := range in {
		field := func(name string) string { return fmt.Sprintf("netSettlements[%d].%s", i, name) }
		cur, err := currencyOn(field, n.GetCurrency(), n.GetLedger())
		if err != nil {
			return nil, err
		}
		if j, dup := seen[cur.Code]; dup {
			return nil, apperr.Invalid(apperr.CodeFormat, field("currency"), "%s %s is netted twice (see netSettlements[%d])", field("currency"), cur.Code, j)
		}
		seen[cur.Code] = i
		if _, err := parseAmount(field("amount"), n.GetAmount(), cur.Decimals, true); err != nil {
			return nil, err
		}
		out = append(out, Net{Currency: cur.Code, Ledger: cur.Ledger, Amount: n.GetAmount()})
	}
	return out, nil
}

// obligations derives what moves. A currency without a net settlement moves leg by leg,
// each leg a receivable (the contract's legs carry positive amounts and no direction). A
// netted currency moves once, by its net amount, in the net's direction: its legs must all
// name one trading wallet, share the net's ledger and add up to at least the net's size.
func obligations(legs []Leg, nets []Net) ([]Obligation, error) {
	netted := map[string]bool{}
	var out []Obligation
	for i, n := range nets {
		o, err := netObligation(i, n, legs)
		if err != nil {
			return nil, err
		}
		netted[n.Currency] = true
		if o.Amount != "0" {
			out = append(out, o)
		}
	}
	for i, l := range legs {
		if !netted[l.Currency] {
			out = append(out, Obligation{Key: fmt.Sprintf("leg%d", i+1), WalletID: l.WalletID, Currency: l.Currency,
				Amount: l.Amount, Direction: DirectionIn})
		}
	}
	return out, nil
}

func netObligation(i int, n Net, legs []Leg) (Obligation, error) {
	field := func(name string) string { return fmt.Sprintf("netSettlements[%d].%s", i, name) }
	gross, wallet := decimal.Zero, ""
	for j, l := range legs {
		if l.Currency != n.Currency {
			continue
		}
		if l.Ledger != n.Ledger {
			return Obligation{}, apperr.Invalid(apperr.CodeFormat, field("ledger"), "%s %s differs from settlements[%d].ledger %s", field("ledger"), n.Ledger, j, l.Ledger)
		}
		if wallet != "" && l.WalletID != wallet {
			return Obligation{}, apperr.Invalid(apperr.CodeFormat, field("currency"),
				"%s %s: its settlements name several wallets (%s, %s); a net settlement moves on one", field("currency"), n.Currency, wallet, l.WalletID)
		}
		wallet = l.WalletID
		gross = gross.Add(decimal.RequireFromString(l.Amount))
	}
	if wallet == "" {
		return Obligation{}, apperr.Invalid(apperr.CodeFormat, field("currency"), "%s %s has no settlement to net", field("currency"), n.Currency)
	}
	amount := decimal.RequireFromString(n.Amount)
	if amount.Abs().GreaterThan(gross) {
		return Obligation{}, apperr.Invalid(apperr.CodeFormat, field("amount"),
			"%s %s exceeds the %s %s its settlements add up to", field("amount"), n.Amount, gross.String(), n.Currency)
	}
	direction := DirectionIn
	if amount.IsNegative() {
		direction = DirectionOut
	}
	return Obligation{Key: "net-" + n.Currency, WalletID: wallet, Currency: n.Currency, Amount: amount.Abs().String(), Direction: direction}, nil
}
