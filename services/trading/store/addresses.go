package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/zcustody/suite/platform/mongodb"
	"github.com/zcustody/suite/services/internal/genaddr"
	"github.com/zcustody/suite/services/internal/outbox"
	"github.com/zcustody/suite/services/trading"
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

type addressDoc struct {
	Address     string       `bson:"_id"`
	Ledger      string       `bson:"ledger"`
	WalletID    string       `bson:"walletId"`
	CompanyID   string       `bson:"companyId"`
	CurrencyID  string       `bson:"currencyId"`
	Currency    string       `bson:"currency"`
	WalletOwner partyDoc     `bson:"walletOwner"`
	Custodian   partyDoc     `bson:"custodian"`
	Integrity   integrityDoc `bson:"integrityDetails"`
	CreatedAt   time.Time    `bson:"createdAt"`
}

func toPartyDoc(p trading.Party) partyDoc {
	return partyDoc{ID: p.ID, Name: p.Name, Address: postalDoc(p.Address)}
}

func (p partyDoc) party() trading.Party {
	return trading.Party{ID: p.ID, Name: p.Name, Address: genaddr.PostalAddress(p.Address)}
}

func (d addressDoc) vaultAddress() trading.VaultAddress {
	return trading.VaultAddress{Record: genaddr.Record{Address: d.Address, Ledger: d.Ledger, WalletID: d.WalletID,
		CurrencyID: d.CurrencyID, WalletOwner: d.WalletOwner.party(), Custodian: d.Custodian.party(),
		Integrity: genaddr.IntegrityDetails(d.Integrity)}, CompanyID: d.CompanyID, Currency: d.Currency, CreatedAt: d.CreatedAt.UTC()}
}

// InsertAddress stores a generated address, with its address.created event, unless its
// wallet already has one for the currency (unique index wallet_currency), and returns the
// address stored for that wallet and currency: generation is idempotent, and only the
// address stored records an event.
func (s *Store) InsertAddress(ctx context.Context, a trading.VaultAddress) (trading.VaultAddress, error) {
	doc := addressDoc{Address: a.Address, Ledger: a.Ledger, WalletID: a.WalletID, CompanyID: a.CompanyID, CurrencyID: a.CurrencyID,
		Currency: a.Currency, WalletOwner: toPartyDoc(a.WalletOwner), Custodian: toPartyDoc(a.Custodian),
		Integrity: integrityDoc(a.Integrity), CreatedAt: a.CreatedAt.UTC().Truncate(time.Millisecond)}
	set, _, staged, err := outbox.Stage(0, s.now(), outbox.Draft{Type: EventAddressCreated, CompanyID: doc.CompanyID,
		EntityType: EntityAddress, EntityID: doc.Address, Data: doc.data(), RequestID: outbox.RequestID(ctx)})
	if err != nil {
		return trading.VaultAddress{}, fmt.Errorf("address of %s %s: %w", a.WalletID, a.CurrencyID, err)
	}
	created, err := outbox.Attach(doc, set, staged)
	if err != nil {
		return trading.VaultAddress{}, fmt.Errorf("address of %s %s: %w", a.WalletID, a.CurrencyID, err)
	}
	col := s.db.Collection(colAddresses)
	_, err = col.InsertOne(ctx, created)
	if err != nil && !mongo.IsDuplicateKeyError(err) {
		return trading.VaultAddress{}, fmt.Errorf("insert address of %s %s: %w", a.WalletID, a.CurrencyID, err)
	}
	var stored addressDoc
	err = col.FindOne(ctx, bson.D{{Key: "walletId", Value: a.WalletID}, {Key: "currencyId", Value: a.CurrencyID}},
		options.FindOne().SetProjection(withoutOutbox)).Decode(&stored)
	if errors.Is(err, mongo.ErrNoDocuments) {
		// The duplicate was the address itself: 160 random bits collided. Not expected, ever.
		return trading.VaultAddress{}, fmt.Errorf("insert address %s: address already used", a.Address)
	}
	if err != nil {
		return trading.VaultAddress{}, fmt.Errorf("read address of %s %s: %w", a.WalletID, a.CurrencyID, err)
	}
	return stored.vaultAddress(), nil
}

// WalletAddresses returns the addresses of one wallet, by currency id.
func (s *Store) WalletAddresses(ctx context.Context, walletID string) ([]trading.VaultAddress, error) {
	opts := options.Find().SetSort(bson.D{{Key: "currencyId", Value: 1}}).SetProjection(withoutOutbox)
	docs, err := findAll[addressDoc](ctx, s.db.Collection(colAddresses), bson.D{{Key: "walletId", Value: walletID}}, opts)
	if err != nil {
		return nil, err
	}
	return toAddresses(docs), nil
}

// ListAddresses returns one page of the company's vault addresses matching f and the number
// of all matches: one find and one count.
func (s *Store) ListAddresses(ctx context.Context, f trading.AddressFilter) ([]trading.VaultAddress, int64, error) {
	and := bson.A{bson.D{{Key: "companyId", Value: f.CompanyID}}}
	and = mongodb.AppendIn(and, "_id", f.Addresses)
	and = mongodb.AppendIn(and, "walletId", f.WalletIDs)
	and = mongodb.AppendIn(and, "currency", f.Currencies)
	docs, total, err := mongodb.Search[addressDoc](ctx, s.db.Collection(colAddresses), mongodb.Query{
		Filter: mongodb.And(and), Sort: mongodb.Sorted(sortFields[f.Page.SortBy], f.Page.Desc), Projection: withoutOutbox,
		Skip: f.Page.Offset, Limit: f.Page.Limit,
	})
	if err != nil {
		return nil, 0, err
	}
	return toAddresses(docs), total, nil
}

// withoutOutbox leaves the events not yet relayed out of address reads.
var withoutOutbox = bson.D{{Key: outbox.FieldOutbox, Value: 0}}

func toAddresses(docs []addressDoc) []trading.VaultAddress {
	out := make([]trading.VaultAddress, 0, len(docs))
	for _, d := range docs {
		out = append(out, d.vaultAddress())
	}
	return out
}
