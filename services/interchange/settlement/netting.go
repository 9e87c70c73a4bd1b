package settlement

import (
	"fmt"
	"slices"
	"strings"

	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/services/internal/amount"
	"github.com/zcustody/suite/services/trading"
)

// Netting (docs/decisions.md, "Settlement rules"). A leg's amount is signed, seen from its
// counterparty wallet: positive, the wallet pays the venue (a receivable); negative, the
// venue pays the wallet (a payable). Per currency:
//
//   - without a net settlement, every leg settles on its own: a receivable is paid by its
//     wallet, a payable by the venue's settlement wallet;
//   - with one, its amount must equal the sum of that currency's legs exactly; each wallet's
//     legs net to one amount (it pays a positive one, is paid a negative one's size), and the
//     venue pays only the net payout (a negative net) or is paid the net receipt (a positive
//     one).
//
// Either way the payers' amounts equal the payees' per currency: PAY_IN holds every payer's
// amount into the settlement's clearing account, PAY_OUT posts the holds and pays the
// payees out of that account, which cannot pay out more than it holds and ends at zero.

// Roles of a share.
const (
	RolePayer = "PAYER"
	RolePayee = "PAYEE"
)

// Share is what one account pays into or is paid out of the settlement in one currency.
type Share struct {
	Role      string
	CompanyID string // the wallet's company; VENUE-<venueId> for the venue's settlement wallet
	WalletID  string
	Currency  string
	Amount    string // positive canonical decimal
}

// Shares derives who pays and who is paid, after checking each net against its legs (a
// net that is not their sum is a 400 naming the net's field). The venue's shares name its
// company; a client wallet's share names none until the wallet is read (Service.Create).
func Shares(venueID string, legs []Leg, nets []Net) ([]Share, error) {
	netted := map[string]amount.Amount{}
	for i, n := range nets {
		sum, err := netSum(i, n, legs)
		if err != nil {
			return nil, err
		}
		netted[n.Currency] = sum
	}
	b := newShareBook(venueID)
	for _, l := range legs {
		a := amount.MustStored(l.Amount)
		if _, ok := netted[l.Currency]; ok {
			b.add(l.WalletID, l.Currency, a)
			continue
		}
		b.gross(l.WalletID, l.Currency, a)
	}
	for cur, net := range netted {
		b.venue(cur, net.Neg())
	}
	return b.shares(), nil
}

// netSum checks that a net settlement equals the sum of its currency's legs, on its ledger.
func netSum(i int, n Net, legs []Leg) (amount.Amount, error) {
	field := func(name string) string { return fmt.Sprintf("netSettlements[%d].%s", i, name) }
	sum, found := amount.Zero, false
	for j, l := range legs {
		if l.Currency != n.Currency {
			continue
		}
		if l.Ledger != n.Ledger {
			return amount.Zero, apperr.Invalid(apperr.CodeFormat, field("ledger"), "%s %s differs from settlements[%d].ledger %s", field("ledger"), n.Ledger, j, l.Ledger)
		}
		sum, found = sum.Add(amount.MustStored(l.Amount)), true
	}
	if !found {
		return amount.Zero, apperr.Invalid(apperr.CodeFormat, field("currency"), "%s %s has no settlement to net", field("currency"), n.Currency)
	}
	if !sum.Equal(amount.MustStored(n.Amount)) {
		return amount.Zero, apperr.Invalid(apperr.CodeFormat, field("amount"),
			"%s %s must equal the sum of the %s settlements, %s (positive: the client pays the venue)", field("amount"), n.Amount, n.Currency, sum)
	}
	return sum, nil
}

// shareBook adds up signed amounts per account and currency: positive pays, negative is paid.
type shareBook struct {
	venueID string
	net     map[[2]string]amount.Amount // (wallet, currency) → signed net
	payers  map[[2]string]amount.Amount // gross legs keep both sides apart
	payees  map[[2]string]amount.Amount
}

func newShareBook(venueID string) *shareBook {
	return &shareBook{venueID: venueID, net: map[[2]string]amount.Amount{}, payers: map[[2]string]amount.Amount{}, payees: map[[2]string]amount.Amount{}}
}

func (b *shareBook) add(wallet, cur string, a amount.Amount) {
	k := [2]string{wallet, cur}
	b.net[k] = b.net[k].Add(a)
}

// gross books a leg settled on its own: the wallet and the venue each pay or are paid.
func (b *shareBook) gross(wallet, cur string, a amount.Amount) {
	venue := [2]string{trading.VenueWalletID(b.venueID, cur), cur}
	payer, payee := [2]string{wallet, cur}, venue
	if a.Sign() < 0 {
		payer, payee, a = venue, payer, a.Neg()
	}
	b.payers[payer] = b.payers[payer].Add(a)
	b.payees[payee] = b.payees[payee].Add(a)
}

// venue books the venue's net side of a netted currency (positive: it pays).
func (b *shareBook) venue(cur string, a amount.Amount) {
	b.add(trading.VenueWalletID(b.venueID, cur), cur, a)
}

func (b *shareBook) shares() []Share {
	for k, a := range b.net {
		switch {
		case a.Sign() > 0:
			b.payers[k] = b.payers[k].Add(a)
		case a.Sign() < 0:
			b.payees[k] = b.payees[k].Add(a.Neg())
		}
	}
	var out []Share
	for _, side := range []struct {
		role string
		m    map[[2]string]amount.Amount
	}{{RolePayer, b.payers}, {RolePayee, b.payees}} {
		for k, a := range side.m {
			out = append(out, Share{Role: side.role, CompanyID: b.companyOf(k), WalletID: k[0], Currency: k[1], Amount: a.String()})
		}
	}
	slices.SortFunc(out, func(x, y Share) int {
		return strings.Compare(x.Role+"|"+x.Currency+"|"+x.WalletID, y.Role+"|"+y.Currency+"|"+y.WalletID)
	})
	return out
}

// companyOf is the company of the account (wallet, currency) when the book knows it: the
// venue's, for its settlement wallet.
func (b *shareBook) companyOf(k [2]string) string {
	if k[0] == trading.VenueWalletID(b.venueID, k[1]) {
		return trading.VenueCompanyID(b.venueID)
	}
	return ""
}

// OfRole returns the settlement's shares of one role.
func (s Settlement) OfRole(role string) []Share {
	var out []Share
	for _, sh := range s.Shares {
		if sh.Role == role {
			out = append(out, sh)
		}
	}
	return out
}
