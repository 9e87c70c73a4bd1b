package store

import (
	"context"
	"encoding/json"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/zcustody/suite/platform/apitime"
	"github.com/zcustody/suite/services/internal/catalog"
	"github.com/zcustody/suite/services/internal/outbox"
	"github.com/zcustody/suite/services/trading"
)

// Events trading records with its changes (docs/decisions.md, "Events: the outbox"): each is
// staged in the same single-document write as the change it describes.
const (
	EntityWallet  = catalog.EntityWallet
	EntityAddress = catalog.EntityAddress

	EventWalletCreated     = "wallet.created"
	EventWalletDeactivated = "wallet.deactivated"
	EventAddressCreated    = "address.created"
)

// Outboxes are the collections whose documents carry an outbox: the app runs an
// outbox.Relay over each. The journal's entries carry the events of the postings.
func (s *Store) Outboxes() []*mongo.Collection {
	return []*mongo.Collection{s.db.Collection(colWallets), s.db.Collection(colAddresses), s.journal.Outbox()}
}

// walletData is a wallet's event data: its fields as the wallet search (endpoint 2) shows
// them, less the balances. Balances move through the journal, not through the wallet's
// changes; a copy here would be stale at once.
type walletData struct {
	ID               string          `json:"id"`
	VenueID          string          `json:"venueId"`
	Name             string          `json:"name"`
	Status           string          `json:"status"`
	CompanyID        string          `json:"companyId"`
	Currency         string          `json:"currency"`
	CustomProperties json.RawMessage `json:"customProperties,omitempty"`
	CreatedBy        string          `json:"createdBy"`
	CreatedAt        string          `json:"createdAt"`
	UpdatedAt        string          `json:"updatedAt"`
}

func (d walletDoc) data() walletData {
	out := walletData{ID: d.ID, VenueID: d.VenueID, Name: d.Name, Status: d.Status, CompanyID: d.CompanyID, Currency: d.Currency,
		CreatedBy: d.CreatedBy, CreatedAt: apitime.Format(d.CreatedAt), UpdatedAt: apitime.Format(d.UpdatedAt)}
	if json.Valid([]byte(d.CustomProperties)) {
		out.CustomProperties = json.RawMessage(d.CustomProperties)
	}
	return out
}

// walletEvent is the draft of event typ of the wallet as d holds it after the change.
func walletEvent(ctx context.Context, typ string, d walletDoc) outbox.Draft {
	return outbox.Draft{Type: typ, CompanyID: d.CompanyID, EntityType: EntityWallet, EntityID: d.ID, Data: d.data(), RequestID: outbox.RequestID(ctx)}
}

type postalData struct {
	Address1 string `json:"address1"`
	Address2 string `json:"address2"`
	City     string `json:"city"`
	Country  string `json:"country"`
	ZipCode  string `json:"zipCode"`
}

type partyData struct {
	ID      string     `json:"id"`
	Name    string     `json:"name"`
	Address postalData `json:"address"`
}

type integrityData struct {
	Signature         string `json:"signature"`
	OperatorPublicKey string `json:"operatorPublicKey"`
}

// addressData is a vault address's event data: the generated address as the address list
// (endpoint 7) shows it.
type addressData struct {
	Address          string        `json:"address"`
	Ledger           string        `json:"ledger"`
	WalletID         string        `json:"walletId"`
	CurrencyID       string        `json:"currencyId"`
	WalletOwner      partyData     `json:"walletOwner"`
	Custodian        partyData     `json:"custodian"`
	IntegrityDetails integrityData `json:"integrityDetails"`
}

func (p partyDoc) data() partyData {
	return partyData{ID: p.ID, Name: p.Name, Address: postalData(p.Address)}
}

func (d addressDoc) data() addressData {
	return addressData{Address: d.Address, Ledger: d.Ledger, WalletID: d.WalletID, CurrencyID: d.CurrencyID,
		WalletOwner: d.WalletOwner.data(), Custodian: d.Custodian.data(), IntegrityDetails: integrityData(d.Integrity)}
}

// newWalletDocument is the document of a new wallet with its wallet.created event staged.
func (s *Store) newWalletDocument(ctx context.Context, w trading.Wallet) (bson.D, error) {
	doc := toWalletDoc(w)
	set, _, staged, err := outbox.Stage(0, s.now(), walletEvent(ctx, EventWalletCreated, doc))
	if err != nil {
		return nil, fmt.Errorf("wallet %s: %w", w.ID, err)
	}
	return outbox.Attach(doc, set, staged)
}
