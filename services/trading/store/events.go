package store

import (
	"context"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/zcustody/suite/platform/apitime"
	eventsv1 "github.com/zcustody/suite/proto/events/v1"
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

// data is a wallet's event data: its fields as the wallet search (endpoint 2) shows them,
// less the balances. Balances move through the journal, not through the wallet's changes; a
// copy here would be stale at once.
func (d walletDoc) data() *eventsv1.WalletEventData {
	out := &eventsv1.WalletEventData{Id: d.ID, VenueId: d.VenueID, Name: d.Name, Status: d.Status, CompanyId: d.CompanyID, Currency: d.Currency,
		CreatedBy: d.CreatedBy, CreatedAt: apitime.Format(d.CreatedAt), UpdatedAt: apitime.Format(d.UpdatedAt)}
	props := &structpb.Struct{}
	if protojson.Unmarshal([]byte(d.CustomProperties), props) == nil {
		out.CustomProperties = props
	}
	return out
}

// walletEvent is the draft of event typ of the wallet as d holds it after the change.
func walletEvent(ctx context.Context, typ string, d walletDoc) outbox.Draft {
	return outbox.Draft{Type: typ, CompanyID: d.CompanyID, EntityType: EntityWallet, EntityID: d.ID, Data: d.data(), RequestID: outbox.RequestID(ctx)}
}

func (p partyDoc) data() *eventsv1.EventParty {
	a := p.Address
	return &eventsv1.EventParty{Id: p.ID, Name: p.Name, Address: &eventsv1.EventPostalAddress{Address1: a.Address1, Address2: a.Address2,
		City: a.City, Country: a.Country, ZipCode: a.ZipCode}}
}

// data is a vault address's event data: the generated address as the address list
// (endpoint 7) shows it.
func (d addressDoc) data() *eventsv1.AddressEventData {
	return &eventsv1.AddressEventData{Address: d.Address, Ledger: d.Ledger, WalletId: d.WalletID, CurrencyId: d.CurrencyID,
		WalletOwner: d.WalletOwner.data(), Custodian: d.Custodian.data(),
		IntegrityDetails: &eventsv1.EventIntegrity{Signature: d.Integrity.Signature, OperatorPublicKey: d.Integrity.OperatorPublicKey}}
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
