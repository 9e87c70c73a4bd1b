// Package statement serves the wallet statement extensions trading and custody share, each
// from its own journal, with the same request and answer (the trading.v1 messages, which
// custody's API takes too): a wallet's journal postings in the order they were applied with
// its balances after each (ListWalletHistory), and its balances as of a time
// (GetWalletBalanceAsOf). A company reads its own wallets only: another company's wallet
// and none alike are 404 ER-102 on walletId.
package statement

import (
	"cmp"
	"context"
	"errors"
	"regexp"
	"slices"
	"strconv"
	"time"

	"github.com/zcustody/suite/platform/apitime"
	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/platform/principal"
	tradingv1 "github.com/zcustody/suite/proto/trading/v1"
	"github.com/zcustody/suite/services/internal/journal"
	"github.com/zcustody/suite/services/internal/page"
)

// Bounds of the requests (the protos declare them too).
const (
	MaxWalletIDLength  = 128
	MaxReferenceLength = 200
)

var referencePattern = regexp.MustCompile(`^[A-Za-z0-9._:~-]+$`)

// Wallets is what the statements need from a service's store.
type Wallets interface {
	// WalletCurrencies returns the currencies of companyID's wallet walletID (the keys of its
	// journal accounts: a trading wallet's currency code, a custody wallet's assets' currency
	// ids); an error wrapping apperr.ErrNotFound when it is none of the company's.
	WalletCurrencies(ctx context.Context, companyID, walletID string) ([]string, error)
	// Journal is the journal whose holders the wallets are (a wallet's id is its holder id).
	Journal() *journal.Journal
}

// Server serves the statement extensions of one service's wallets.
type Server struct {
	wallets Wallets
	// currency reports whether a currency filter may name an account of the service's
	// wallets: a currency code in trading, a currency id in custody.
	currency func(string) bool
}

// New returns the statements of wallets; currency tells the currencies a filter may name.
func New(wallets Wallets, currency func(string) bool) Server {
	return Server{wallets: wallets, currency: currency}
}

// ListWalletHistory answers one page of a wallet's statement: the postings of at most
// paginationLimit sequence numbers after the cursor (a posting of two currencies is two
// items of one sequence), and a nextCursor, the page's last sequence, when more follow.
func (s Server) ListWalletHistory(ctx context.Context, req *tradingv1.ListWalletHistoryRequest) (*tradingv1.ListWalletHistoryResponse, error) {
	p, err := principal.Company(ctx)
	if err != nil {
		return nil, err
	}
	q, err := s.historyQuery(req)
	if err != nil {
		return nil, err
	}
	if _, err := s.walletCurrencies(ctx, p.CompanyID, q.Holder); err != nil {
		return nil, err
	}
	pg, err := s.wallets.Journal().HistoryPage(ctx, q)
	if err != nil {
		return nil, err
	}
	links, err := s.reversalLinks(ctx, pg.Postings)
	if err != nil {
		return nil, err
	}
	out := &tradingv1.ListWalletHistoryResponse{Items: make([]*tradingv1.WalletPosting, 0, len(pg.Postings))}
	for _, p := range pg.Postings {
		item := walletPosting(p)
		if orig, ok := links[p.Entry]; ok {
			item.Reverses = &orig
		}
		out.Items = append(out.Items, item)
	}
	if pg.More {
		out.NextCursor = strconv.FormatInt(pg.Last, 10)
	}
	return out, nil
}

// GetWalletBalanceAsOf answers a wallet's balances as of a time: per currency (the one asked
// for, or every currency of the wallet and every account it has), the counters after the
// account's last posting at or before asOf, and the balances derived from them.
func (s Server) GetWalletBalanceAsOf(ctx context.Context, req *tradingv1.GetWalletBalanceAsOfRequest) (*tradingv1.GetWalletBalanceAsOfResponse, error) {
	p, err := principal.Company(ctx)
	if err != nil {
		return nil, err
	}
	if err := s.checkWallet(req.GetWalletId()); err != nil {
		return nil, err
	}
	if req.GetAsOf() == "" {
		return nil, apperr.Missing("asOf")
	}
	asOf, err := parseTime("asOf", req.GetAsOf())
	if err != nil {
		return nil, err
	}
	if err := s.checkCurrency(req.GetCurrency()); err != nil {
		return nil, err
	}
	currencies, err := s.walletCurrencies(ctx, p.CompanyID, req.GetWalletId())
	if err != nil {
		return nil, err
	}
	var balances []journal.Balance
	if c := req.GetCurrency(); c != "" {
		balances, err = s.wallets.Journal().BalancesAt(ctx, req.GetWalletId(), asOf, c)
	} else {
		balances, err = s.everyAccountAt(ctx, req.GetWalletId(), asOf, currencies)
	}
	if err != nil {
		return nil, err
	}
	out := &tradingv1.GetWalletBalanceAsOfResponse{WalletId: req.GetWalletId(), AsOf: apitime.Format(asOf),
		Balances: make([]*tradingv1.WalletBalanceAsOf, 0, len(balances))}
	for _, b := range balances {
		c := b.Counters
		out.Balances = append(out.Balances, &tradingv1.WalletBalanceAsOf{Currency: b.Currency, Sequence: b.Seq, PostedAt: apitime.Format(b.At),
			AvailableBalance: c.Available().String(), LedgerBalance: c.Ledger().String(), PendingOutBalance: c.PendingOut().String(),
			PendingInBalance: c.PendingIn().String(), DebitsPending: c.DebitsPending.String(), DebitsPosted: c.DebitsPosted.String(),
			CreditsPending: c.CreditsPending.String(), CreditsPosted: c.CreditsPosted.String()})
	}
	return out, nil
}

// everyAccountAt is every account of the holder as of t (BalancesAt with no currency), and
// a zero balance for each currency of the wallet it has no account in yet.
func (s Server) everyAccountAt(ctx context.Context, holder string, t time.Time, currencies []string) ([]journal.Balance, error) {
	balances, err := s.wallets.Journal().BalancesAt(ctx, holder, t)
	if err != nil {
		return nil, err
	}
	for _, c := range currencies {
		if !slices.ContainsFunc(balances, func(b journal.Balance) bool { return b.Currency == c }) {
			balances = append(balances, journal.Balance{Currency: c})
		}
	}
	slices.SortFunc(balances, func(a, b journal.Balance) int { return cmp.Compare(a.Currency, b.Currency) })
	return balances, nil
}

// walletCurrencies reads the company's wallet: 404 ER-102 on walletId when it is none of the
// company's.
func (s Server) walletCurrencies(ctx context.Context, companyID, walletID string) ([]string, error) {
	currencies, err := s.wallets.WalletCurrencies(ctx, companyID, walletID)
	if errors.Is(err, apperr.ErrNotFound) {
		return nil, apperr.NotFound("walletId", walletID)
	}
	return currencies, err
}

// historyQuery validates a history request into its journal query (the wallet is the
// holder).
func (s Server) historyQuery(req *tradingv1.ListWalletHistoryRequest) (journal.HistoryQuery, error) {
	q := journal.HistoryQuery{Holder: req.GetWalletId(), Currency: req.GetCurrency(), BusinessKey: req.GetReference()}
	if err := s.checkWallet(q.Holder); err != nil {
		return q, err
	}
	if err := s.checkCurrency(q.Currency); err != nil {
		return q, err
	}
	if r := q.BusinessKey; r != "" && (len(r) > MaxReferenceLength || !referencePattern.MatchString(r)) {
		return q, apperr.Invalid(apperr.CodeFormat, "reference", "reference must be a settlement tracking id, transfer id or deposit id")
	}
	var err error
	if q.From, err = parseTime("from", req.GetFrom()); err != nil {
		return q, err
	}
	if q.To, err = parseTime("to", req.GetTo()); err != nil {
		return q, err
	}
	if c := req.GetCursor(); c != "" {
		if q.AfterSeq, err = strconv.ParseInt(c, 10, 64); err != nil || q.AfterSeq < 0 {
			return q, apperr.Invalid(apperr.CodeFormat, "cursor", "cursor must be the nextCursor of an earlier page")
		}
	}
	pg, err := page.Parse(req.PaginationLimit, nil, nil, "sequence")
	q.Limit = int(pg.Limit)
	return q, err
}

func (s Server) checkWallet(id string) error {
	switch {
	case id == "":
		return apperr.Missing("walletId")
	case len(id) > MaxWalletIDLength:
		return apperr.Invalid(apperr.CodeLength, "walletId", "walletId must be at most %d characters", MaxWalletIDLength)
	}
	return nil
}

func (s Server) checkCurrency(c string) error {
	if c != "" && !s.currency(c) {
		return apperr.Invalid(apperr.CodeCurrency, "currency", "currency %q is not supported", c)
	}
	return nil
}

func parseTime(field, s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	t, err := apitime.Parse(s)
	if err != nil {
		return time.Time{}, apperr.Invalid(apperr.CodeFormat, field, "%s must be an ISO 8601 time such as 2026-11-21T10:15:30Z, got %q", field, s)
	}
	return t, nil
}

// reversalLinks names, for the page's postings of reversals, the entry each reverses (one
// read of the page's entries by id: a reversal's history row does not carry its link).
func (s Server) reversalLinks(ctx context.Context, postings []journal.Posting) (map[string]string, error) {
	ids := make([]string, 0, len(postings))
	for _, p := range postings {
		ids = append(ids, p.Entry)
	}
	slices.Sort(ids)
	return s.wallets.Journal().ReversalLinks(ctx, slices.Compact(ids))
}

func walletPosting(p journal.Posting) *tradingv1.WalletPosting {
	d, a := p.Delta, p.After
	return &tradingv1.WalletPosting{Sequence: p.Seq, EntryId: p.Entry, Type: p.Code, Reference: p.BusinessKey, Currency: p.Currency,
		CreatedAt: apitime.Format(p.At), AvailableChange: d.Available().String(), LedgerChange: d.Ledger().String(),
		PendingOutChange: d.PendingOut().String(), PendingInChange: d.PendingIn().String(), AvailableBalance: a.Available().String(),
		LedgerBalance: a.Ledger().String(), PendingOutBalance: a.PendingOut().String(), PendingInBalance: a.PendingIn().String()}
}
