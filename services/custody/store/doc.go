package store

import (
	"fmt"
	"time"

	"github.com/zcustody/suite/services/custody"
	"github.com/zcustody/suite/services/internal/journal"
	"github.com/zcustody/suite/services/internal/ledger"
)

// assetDoc is one asset a wallet carries; its amounts are the journal account of its
// currency id (accounts.<currencyId>), never stored beside it.
type assetDoc struct {
	Currency     string `bson:"currency"`
	CurrencyID   string `bson:"currencyId"`
	UnitCurrency string `bson:"unitCurrency"`
	// EventSeq is the event sequence of the asset's trustline (Stellar assets activated
	// through endpoint 13); zero for the others.
	EventSeq int64 `bson:"eventSeq,omitempty"`
}

type walletDoc struct {
	ID                      string     `bson:"_id"`
	Name                    string     `bson:"name"`
	CompanyID               string     `bson:"companyId"`
	OwnerID                 string     `bson:"ownerId"`
	CreatedBy               string     `bson:"createdBy"`
	Status                  string     `bson:"status"`
	Valid                   bool       `bson:"valid"`
	RegisteredComplianceKey bool       `bson:"registeredComplianceKey"`
	Blockchain              string     `bson:"blockchain"`
	CurrencyID              string     `bson:"currencyId"`
	AssetBalances           []assetDoc `bson:"assetBalances"`
	// Accounts are the wallet's journal accounts by currency id (the journal's counters,
	// which only the journal writes).
	Accounts      map[string]journal.AccountFields `bson:"accounts"`
	CreatedAt     time.Time                        `bson:"createdAt"`
	UpdatedAt     time.Time                        `bson:"updatedAt"`
	Version       int64                            `bson:"version"`
	Subentries    int                              `bson:"subentries"`
	Intent        *intentDoc                       `bson:"intent,omitempty"`
	LastRequestID string                           `bson:"lastRequestId"`
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

// toDoc checks the wallet's balances (amounts agree, canonical) and keeps the assets they
// name; their amounts go into the journal (PutWallet), a new wallet's accounts start empty.
func toDoc(w custody.Wallet) (walletDoc, error) {
	balances := make([]assetDoc, 0, len(w.AssetBalances))
	for _, b := range w.AssetBalances {
		if err := b.Check(); err != nil {
			return walletDoc{}, fmt.Errorf("wallet %s: %w", w.ID, err)
		}
		balances = append(balances, assetOf(b))
	}
	return walletDoc{
		ID: w.ID, Name: w.Name, CompanyID: w.CompanyID, OwnerID: w.OwnerID, CreatedBy: w.CreatedBy,
		Status: w.Status, Valid: w.Valid, RegisteredComplianceKey: w.RegisteredComplianceKey,
		Blockchain: w.Blockchain, CurrencyID: w.CurrencyID, AssetBalances: balances, Accounts: map[string]journal.AccountFields{},
		CreatedAt: ms(w.CreatedAt), UpdatedAt: ms(w.UpdatedAt), Version: w.Version, LastRequestID: w.LastRequestID,
		Subentries: w.Subentries, Intent: toIntentDoc(w.Intent),
	}, nil
}

func assetOf(b custody.AssetBalance) assetDoc {
	return assetDoc{Currency: b.Currency, CurrencyID: b.CurrencyID, UnitCurrency: b.UnitCurrency}
}

// wallet maps the document, each asset's balance derived from its journal account.
func (d walletDoc) wallet() (custody.Wallet, error) {
	counters, err := journal.DecodeAccounts(d.Accounts)
	if err != nil {
		return custody.Wallet{}, fmt.Errorf("wallet %s: %w", d.ID, err)
	}
	balances := make([]custody.AssetBalance, 0, len(d.AssetBalances))
	for _, a := range d.AssetBalances {
		cur, ok := ledger.ByID(a.CurrencyID)
		if !ok {
			return custody.Wallet{}, fmt.Errorf("wallet %s: unsupported currency %s", d.ID, a.CurrencyID)
		}
		c := counters[a.CurrencyID]
		b, err := custody.NewAssetBalance(cur, custody.Amounts{Available: c.Available().String(), Ledger: c.Ledger().String(),
			PendingOut: c.PendingOut().String(), PendingIn: c.PendingIn().String()})
		if err != nil {
			return custody.Wallet{}, fmt.Errorf("wallet %s: %w", d.ID, err)
		}
		balances = append(balances, b)
	}
	return custody.Wallet{
		ID: d.ID, Name: d.Name, CompanyID: d.CompanyID, OwnerID: d.OwnerID, CreatedBy: d.CreatedBy,
		Status: d.Status, Valid: d.Valid, RegisteredComplianceKey: d.RegisteredComplianceKey,
		Blockchain: d.Blockchain, CurrencyID: d.CurrencyID, AssetBalances: balances,
		CreatedAt: d.CreatedAt.UTC(), UpdatedAt: d.UpdatedAt.UTC(), Version: d.Version, LastRequestID: d.LastRequestID,
		Subentries: d.Subentries, Intent: d.Intent.intent(),
	}, nil
}

// ms is t as stored: UTC, millisecond precision (BSON dates hold milliseconds).
func ms(t time.Time) time.Time { return t.UTC().Truncate(time.Millisecond) }
