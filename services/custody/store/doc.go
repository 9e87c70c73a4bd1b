package store

import (
	"fmt"
	"time"

	"github.com/zcustody/suite/services/custody"
)

type balanceDoc struct {
	Currency              string `bson:"currency"`
	CurrencyID            string `bson:"currencyId"`
	UnitCurrency          string `bson:"unitCurrency"`
	AvailableUnitBalance  string `bson:"availableUnitBalance"`
	LedgerUnitBalance     string `bson:"ledgerUnitBalance"`
	PendingOutUnitBalance string `bson:"pendingOutUnitBalance"`
	PendingInUnitBalance  string `bson:"pendingInUnitBalance"`
	AvailableBalance      string `bson:"availableBalance"`
	LedgerBalance         string `bson:"ledgerBalance"`
	PendingOutBalance     string `bson:"pendingOutBalance"`
	PendingInBalance      string `bson:"pendingInBalance"`
}

type walletDoc struct {
	ID                      string       `bson:"_id"`
	Name                    string       `bson:"name"`
	CompanyID               string       `bson:"companyId"`
	OwnerID                 string       `bson:"ownerId"`
	CreatedBy               string       `bson:"createdBy"`
	Status                  string       `bson:"status"`
	Valid                   bool         `bson:"valid"`
	RegisteredComplianceKey bool         `bson:"registeredComplianceKey"`
	Blockchain              string       `bson:"blockchain"`
	CurrencyID              string       `bson:"currencyId"`
	AssetBalances           []balanceDoc `bson:"assetBalances"`
	CreatedAt               time.Time    `bson:"createdAt"`
	UpdatedAt               time.Time    `bson:"updatedAt"`
	Version                 int64        `bson:"version"`
	Subentries              int          `bson:"subentries"`
	Intent                  *intentDoc   `bson:"intent,omitempty"`
	LastRequestID           string       `bson:"lastRequestId"`
}

// intentDoc is the approval intent of a proposed v2 wallet; `intent.id` has a sparse unique
// index, so an intent id names one wallet only.
type intentDoc struct {
	ID                string       `bson:"id"`
	ProposalSignature string       `bson:"proposalSignature"`
	CreatedAt         time.Time    `bson:"createdAt"`
	Decision          *decisionDoc `bson:"decision,omitempty"`
}

type decisionDoc struct {
	Type        string    `bson:"type"`
	AuthorID    string    `bson:"authorId"`
	AuthorEmail string    `bson:"authorEmail"`
	At          time.Time `bson:"at"`
}

func toIntentDoc(i *custody.Intent) *intentDoc {
	if i == nil {
		return nil
	}
	d := &intentDoc{ID: i.ID, ProposalSignature: i.ProposalSignature, CreatedAt: ms(i.CreatedAt)}
	if i.Decision != nil {
		d.Decision = toDecisionDoc(*i.Decision)
	}
	return d
}

func toDecisionDoc(d custody.Decision) *decisionDoc {
	return &decisionDoc{Type: d.Type, AuthorID: d.AuthorID, AuthorEmail: d.AuthorEmail, At: ms(d.At)}
}

func (d *intentDoc) intent() *custody.Intent {
	if d == nil {
		return nil
	}
	i := &custody.Intent{ID: d.ID, ProposalSignature: d.ProposalSignature, CreatedAt: d.CreatedAt.UTC()}
	if d.Decision != nil {
		i.Decision = &custody.Decision{Type: d.Decision.Type, AuthorID: d.Decision.AuthorID,
			AuthorEmail: d.Decision.AuthorEmail, At: d.Decision.At.UTC()}
	}
	return i
}

// toDoc checks the wallet's balances (amounts agree, canonical) before they are written.
func toDoc(w custody.Wallet) (walletDoc, error) {
	balances := make([]balanceDoc, 0, len(w.AssetBalances))
	for _, b := range w.AssetBalances {
		if err := b.Check(); err != nil {
			return walletDoc{}, fmt.Errorf("wallet %s: %w", w.ID, err)
		}
		balances = append(balances, balanceDoc(b))
	}
	return walletDoc{
		ID: w.ID, Name: w.Name, CompanyID: w.CompanyID, OwnerID: w.OwnerID, CreatedBy: w.CreatedBy,
		Status: w.Status, Valid: w.Valid, RegisteredComplianceKey: w.RegisteredComplianceKey,
		Blockchain: w.Blockchain, CurrencyID: w.CurrencyID, AssetBalances: balances,
		CreatedAt: ms(w.CreatedAt), UpdatedAt: ms(w.UpdatedAt), Version: w.Version, LastRequestID: w.LastRequestID,
		Subentries: w.Subentries, Intent: toIntentDoc(w.Intent),
	}, nil
}

func (d walletDoc) wallet() custody.Wallet {
	balances := make([]custody.AssetBalance, 0, len(d.AssetBalances))
	for _, b := range d.AssetBalances {
		balances = append(balances, custody.AssetBalance(b))
	}
	return custody.Wallet{
		ID: d.ID, Name: d.Name, CompanyID: d.CompanyID, OwnerID: d.OwnerID, CreatedBy: d.CreatedBy,
		Status: d.Status, Valid: d.Valid, RegisteredComplianceKey: d.RegisteredComplianceKey,
		Blockchain: d.Blockchain, CurrencyID: d.CurrencyID, AssetBalances: balances,
		CreatedAt: d.CreatedAt.UTC(), UpdatedAt: d.UpdatedAt.UTC(), Version: d.Version, LastRequestID: d.LastRequestID,
		Subentries: d.Subentries, Intent: d.Intent.intent(),
	}
}

// ms is t as stored: UTC, millisecond precision (BSON dates hold milliseconds).
func ms(t time.Time) time.Time { return t.UTC().Truncate(time.Millisecond) }
