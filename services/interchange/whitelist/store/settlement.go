package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/platform/mongodb"
	"github.com/zcustody/suite/services/interchange/whitelist/address"
	"github.com/zcustody/suite/services/internal/genaddr"
)

type postalDoc struct {
	Address1 string `bson:"address1"`
	Address2 string `bson:"address2"`
	City     string `bson:"city"`
	Country  string `bson:"country"`
	ZipCode  string `bson:"zipCode"`
}

type partyDoc struct {
	ID      string    `bson:"id"`
	Name    string    `bson:"name"`
	Address postalDoc `bson:"address"`
}

type integrityDoc struct {
	Signature         string `bson:"signature"`
	OperatorPublicKey string `bson:"operatorPublicKey"`
}

type settlementDoc struct {
	Address     string       `bson:"_id"`
	Ledger      string       `bson:"ledger"`
	WalletID    string       `bson:"walletId"`
	CompanyID   string       `bson:"companyId"`
	VenueID     string       `bson:"venueId"`
	CurrencyID  string       `bson:"currencyId"`
	Currency    string       `bson:"currency"`
	WalletOwner partyDoc     `bson:"walletOwner"`
	Custodian   partyDoc     `bson:"custodian"`
	Integrity   integrityDoc `bson:"integrityDetails"`
	CreatedAt   time.Time    `bson:"createdAt"`
}

func toPartyDoc(p address.Party) partyDoc {
	return partyDoc{ID: p.ID, Name: p.Name, Address: postalDoc(p.Address)}
}

func (p partyDoc) party() address.Party {
	return address.Party{ID: p.ID, Name: p.Name, Address: genaddr.PostalAddress(p.Address)}
}

func (d settlementDoc) settlement() address.Settlement {
	return address.Settlement{Record: genaddr.Record{Address: d.Address, Ledger: d.Ledger, WalletID: d.WalletID,
		CurrencyID: d.CurrencyID, WalletOwner: d.WalletOwner.party(), Custodian: d.Custodian.party(),
		Integrity: genaddr.IntegrityDetails(d.Integrity)}, CompanyID: d.CompanyID, VenueID: d.VenueID, Currency: d.Currency,
		CreatedAt: d.CreatedAt.UTC()}
}

// InsertSettlement stores a generated settlement address unless the company already has one
// for the venue and currency id (unique index company_venue_currency), and returns the
// address stored for them: generation is idempotent.
func (s *Store) InsertSettlement(ctx context.Context, a address.Settlement) (address.Settlement, error) {
	doc := settlementDoc{Address: a.Address, Ledger: a.Ledger, WalletID: a.WalletID, CompanyID: a.CompanyID, VenueID: a.VenueID,
		CurrencyID: a.CurrencyID, Currency: a.Currency, WalletOwner: toPartyDoc(a.WalletOwner), Custodian: toPartyDoc(a.Custodian),
		Integrity: integrityDoc(a.Integrity), CreatedAt: a.CreatedAt.UTC().Truncate(time.Millisecond)}
	_, err := s.db.Collection(colSettlement).InsertOne(ctx, doc)
	if err != nil && !mongo.IsDuplicateKeyError(err) {
		return address.Settlement{}, fmt.Errorf("insert settlement address of %s %s %s: %w", a.CompanyID, a.VenueID, a.CurrencyID, err)
	}
	stored, err := s.Settlement(ctx, a.CompanyID, a.VenueID, a.CurrencyID)
	if errors.Is(err, apperr.ErrNotFound) {
		// The duplicate was the address itself: 160 random bits collided. Not expected, ever.
		return address.Settlement{}, fmt.Errorf("insert settlement address %s: address already used", a.Address)
	}
	return stored, err
}

// Settlement returns the company's settlement address for the venue and currency id, or
// apperr.ErrNotFound.
func (s *Store) Settlement(ctx context.Context, companyID, venueID, currencyID string) (address.Settlement, error) {
	var doc settlementDoc
	filter := bson.D{{Key: "companyId", Value: companyID}, {Key: "venueId", Value: venueID}, {Key: "currencyId", Value: currencyID}}
	err := s.db.Collection(colSettlement).FindOne(ctx, filter).Decode(&doc)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return address.Settlement{}, fmt.Errorf("settlement address of %s %s %s: %w", companyID, venueID, currencyID, apperr.ErrNotFound)
	}
	if err != nil {
		return address.Settlement{}, fmt.Errorf("find settlement address of %s %s %s: %w", companyID, venueID, currencyID, err)
	}
	return doc.settlement(), nil
}

var settlementSort = map[string]string{"id": "_id", "createdAt": "createdAt"}

// ListSettlements returns one page of the company's settlement addresses matching f and the
// number of all matches: one find and one count.
func (s *Store) ListSettlements(ctx context.Context, f address.SettlementFilter) ([]address.Settlement, int64, error) {
	and := bson.A{bson.D{{Key: "companyId", Value: f.CompanyID}}}
	and = mongodb.AppendIn(and, "_id", f.Addresses)
	and = mongodb.AppendIn(and, "currency", f.Currencies)
	field, ok := settlementSort[f.Page.SortBy]
	if !ok {
		field = "_id"
	}
	docs, total, err := mongodb.Search[settlementDoc](ctx, s.db.Collection(colSettlement), mongodb.Query{
		Filter: mongodb.And(and), Sort: mongodb.Sorted(field, f.Page.Desc), Skip: f.Page.Offset, Limit: f.Page.Limit,
	})
	if err != nil {
		return nil, 0, err
	}
	out := make([]address.Settlement, 0, len(docs))
	for _, d := range docs {
		out = append(out, d.settlement())
	}
	return out, total, nil
}
