package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/services/internal/amount"
	"github.com/zcustody/suite/services/internal/catalog"
	"github.com/zcustody/suite/services/internal/journal"
	"github.com/zcustody/suite/services/trading"
)

// Trading's journal: its accounts are the trading wallets (client and venue settlement
// wallets: their documents carry the counters) and the system accounts of the journal's own
// collection: one clearing account per settlement, the world outside (deposits arrive
// from it, withdrawals leave to it), and the in-transit account towards custody.
// journalPrefix names the journal's collections.
const journalPrefix = "journal"

func newJournal(db *mongo.Database, now func() time.Time) *journal.Journal {
	var j *journal.Journal
	j = journal.New(journal.Config{DB: db, Prefix: journalPrefix, Collections: []string{colWallets}, Now: now, EventEntity: catalog.EntityTradingEntry, Policy: func(h string) journal.HolderPolicy {
		switch {
		case strings.HasPrefix(h, trading.ClearingPrefix), trading.IsLimitAccount(h):
			return journal.HolderPolicy{Collection: j.SystemCollection(), Create: true, Constrained: true}
		case strings.HasPrefix(h, trading.WorldPrefix), strings.HasPrefix(h, trading.TransitPrefix), h == trading.LimitGrant, h == trading.LimitUsed:
			return journal.HolderPolicy{Collection: j.SystemCollection(), Create: true}
		}
		return journal.HolderPolicy{Collection: colWallets, Constrained: true}
	}})
	return j
}

// Journal is trading's journal (recovery and reconciliation run on it).
func (s *Store) Journal() *journal.Journal { return s.journal }

// WalletRef names a wallet leg's account, the company it must belong to and the leg's
// currency, which must be the wallet's.
type WalletRef struct {
	CompanyID, WalletID, Currency string
	// Field names the leg's account in errors, e.g. legs[2].account; CurrencyField its
	// currency, e.g. legs[2].currency ("currency" when empty).
	Field, CurrencyField string
}

// RecordEntry checks that every wallet leg names a wallet of its company (creating a venue
// settlement wallet on first use) in the wallet's currency, and records e. Another
// company's wallet, or none, is 404 ER-102 naming the leg's account; a leg in another
// currency than its wallet's is 400 ER-111 naming the leg's currency.
func (s *Store) RecordEntry(ctx context.Context, e journal.Entry, wallets []WalletRef) (journal.Result, error) {
	if err := s.checkOwners(ctx, wallets); err != nil {
		return journal.Result{}, err
	}
	return s.journal.Record(ctx, e)
}

// ResolveHold posts or voids a hold in full.
func (s *Store) ResolveHold(ctx context.Context, id, holdID string, kind journal.Kind, code string) (journal.Result, error) {
	return s.journal.Resolve(ctx, id, holdID, kind, code)
}

// Deposit credits a company's wallet from the world outside, once per deposit id.
func (s *Store) Deposit(ctx context.Context, id, companyID, walletID, currency string, a amount.Amount) (journal.Result, error) {
	e := journal.Entry{ID: trading.DepositEntryID(id), Kind: journal.Single, Code: "deposit", BusinessKey: id, Legs: []journal.Leg{
		{Holder: trading.WorldDeposits, Currency: currency, Side: journal.Debit, Amount: a},
		{Holder: walletID, Currency: currency, Side: journal.Credit, Amount: a},
	}}
	return s.RecordEntry(ctx, e, []WalletRef{{CompanyID: companyID, WalletID: walletID, Currency: currency, Field: "walletId"}})
}

// checkOwners reads the wallets of refs in one find and refuses any that is missing or
// another company's, and any leg in another currency than its wallet's (a trading wallet
// holds one currency); venue settlement wallets are created on first use (in the leg's
// currency, which their id names: trading.VenueWalletFor).
func (s *Store) checkOwners(ctx context.Context, refs []WalletRef) error {
	if len(refs) == 0 {
		return nil
	}
	ids := make([]string, 0, len(refs))
	for _, r := range refs {
		ids = append(ids, r.WalletID)
	}
	slices.Sort(ids)
	owners, err := s.owners(ctx, slices.Compact(ids)) // a settlement's legs often name one wallet many times
	if err != nil {
		return err
	}
	for _, r := range refs {
		owner, found := owners[r.WalletID]
		switch {
		case found && owner.CompanyID != r.CompanyID:
			return apperr.NotFound(r.Field, r.WalletID)
		case found && owner.Currency != r.Currency:
			field := r.CurrencyField
			if field == "" {
				field = "currency"
			}
			return apperr.Invalid(apperr.CodeCurrency, field, "%s: wallet %s holds %s, not %s", field, r.WalletID, owner.Currency, r.Currency)
		case found:
			continue
		}
		if err := s.createVenueWallet(ctx, r); err != nil {
			return err
		}
		owners[r.WalletID] = walletOwner{CompanyID: r.CompanyID, Currency: r.Currency}
	}
	return nil
}

// walletOwner is what checkOwners reads of a wallet: its company and its currency.
type walletOwner struct{ CompanyID, Currency string }

func (s *Store) owners(ctx context.Context, ids []string) (map[string]walletOwner, error) {
	cur, err := s.db.Collection(colWallets).Find(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: ids}}}},
		options.Find().SetProjection(bson.D{{Key: "companyId", Value: 1}, {Key: "currency", Value: 1}}))
	if err != nil {
		return nil, fmt.Errorf("find wallets: %w", err)
	}
	var docs []struct {
		ID        string `bson:"_id"`
		CompanyID string `bson:"companyId"`
		Currency  string `bson:"currency"`
	}
	if err := cur.All(ctx, &docs); err != nil {
		return nil, fmt.Errorf("read wallets: %w", err)
	}
	out := make(map[string]walletOwner, len(docs))
	for _, d := range docs {
		out[d.ID] = walletOwner{CompanyID: d.CompanyID, Currency: d.Currency}
	}
	return out, nil
}

// createVenueWallet creates the venue settlement wallet r names; any other unknown wallet is
// ER-102.
func (s *Store) createVenueWallet(ctx context.Context, r WalletRef) error {
	venue, ok := trading.VenueWalletFor(r.CompanyID, r.WalletID, r.Currency, s.now())
	if !ok {
		return apperr.NotFound(r.Field, r.WalletID)
	}
	_, err := s.db.Collection(colWallets).InsertOne(ctx, toWalletDoc(venue))
	if err != nil && !mongo.IsDuplicateKeyError(err) {
		return fmt.Errorf("create venue wallet %s: %w", venue.ID, err)
	}
	return nil
}

// IsAccountMissing reports whether err is a journal's missing account.
func IsAccountMissing(err error) bool { return errors.Is(err, journal.ErrAccountNotFound) }

// WalletCurrencies returns the currency of the company's wallet walletID (a trading wallet
// has one), for the statement extensions; apperr.ErrNotFound when it is not the company's.
func (s *Store) WalletCurrencies(ctx context.Context, companyID, walletID string) ([]string, error) {
	w, err := s.Wallet(ctx, companyID, walletID)
	if err != nil {
		return nil, err
	}
	return []string{w.Currency}, nil
}
