package store

import (
	"context"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/zcustody/suite/platform/apitime"
	eventsv1 "github.com/zcustody/suite/proto/events/v1"
	"github.com/zcustody/suite/services/custody"
	"github.com/zcustody/suite/services/internal/catalog"
	"github.com/zcustody/suite/services/internal/outbox"
)

// Events custody records with its changes (docs/decisions.md, "Events: the outbox"): each is
// staged in the same single-document write as the change it describes. A wallet's document
// carries the events of the wallet (its eventSeq numbers them) and of its trustlines (each
// trustline numbers its own, in its asset entry).
const (
	EntityLegacyWallet = catalog.EntityLegacyWallet
	EntityTrustline    = catalog.EntityTrustline

	EventLegacyWalletCreated     = "legacy_wallet.created"
	EventLegacyWalletApproved    = "legacy_wallet.approved"
	EventLegacyWalletRejected    = "legacy_wallet.rejected"
	EventLegacyWalletRenamed     = "legacy_wallet.renamed"
	EventLegacyWalletDeactivated = "legacy_wallet.deactivated"
	EventTrustlineActivated      = "trustline.activated"
)

// TrustlineID is the entity id of the trustline of currencyID on wallet walletID: unique,
// since a wallet id is and a wallet holds one trustline per asset.
func TrustlineID(walletID, currencyID string) string { return walletID + ":" + currencyID }

// Outboxes are the collections whose documents carry an outbox: the app runs an
// outbox.Relay over each. The journal's entries carry the events of the postings.
func (s *Store) Outboxes() []*mongo.Collection {
	return []*mongo.Collection{s.wallets(), s.journal.Outbox()}
}

// withoutSeq is the $set Stage returned less the document's event sequence: for the events
// of an entity that keeps its sequence elsewhere in the document (a trustline).
func withoutSeq(set bson.D) bson.D {
	out := make(bson.D, 0, len(set))
	for _, e := range set {
		if e.Key != outbox.FieldSeq {
			out = append(out, e)
		}
	}
	return out
}

// sequenced is a wallet document with its event sequence (zero before its first event).
type sequenced struct {
	Doc      walletDoc `bson:",inline"`
	EventSeq int64     `bson:"eventSeq"`
}

// data is a wallet's event data: its fields as the wallet list (endpoint 14) shows them, and
// its currency id (as the proposal shows it), less the balances. Balances move through the
// journal, not through the wallet's changes; a copy here would be stale at once.
func (d walletDoc) data() *eventsv1.LegacyWalletEventData {
	return &eventsv1.LegacyWalletEventData{WalletId: d.ID, WalletName: d.Name, WalletCompany: d.CompanyID, CreatedBy: d.CreatedBy,
		Status: d.Status, Valid: d.Valid, RegisteredComplianceKey: d.RegisteredComplianceKey, Blockchain: d.Blockchain,
		CurrencyId: d.CurrencyID, CreatedAt: apitime.Format(d.CreatedAt), UpdatedAt: apitime.Format(d.UpdatedAt)}
}

// walletEvent is the draft of event typ of the wallet as d holds it after the change.
func walletEvent(ctx context.Context, typ string, d walletDoc) outbox.Draft {
	return outbox.Draft{Type: typ, CompanyID: d.CompanyID, EntityType: EntityLegacyWallet, EntityID: d.ID, Data: d.data(), RequestID: outbox.RequestID(ctx)}
}

// trustlineEvent is the draft of event typ of the trustline a of wallet d (as read before the
// change), whose status is now status.
func trustlineEvent(ctx context.Context, typ string, d walletDoc, a assetDoc, status string) outbox.Draft {
	return outbox.Draft{Type: typ, CompanyID: d.CompanyID, EntityType: EntityTrustline, EntityID: TrustlineID(d.ID, a.CurrencyID),
		// What activating it answers (endpoint 13), the zero amounts of its new balance entry
		// left out.
		Data: &eventsv1.TrustlineEventData{WalletId: d.ID, CurrencyId: a.CurrencyID, Currency: a.Currency, UnitCurrency: a.UnitCurrency, Status: status,
			MinimumBalanceXlm: custody.TrustlineReserve(d.Subentries).String()}, RequestID: outbox.RequestID(ctx)}
}
