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
	LastRequestID           string       `bson:"lastRequestId"`
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
	}
}

// ms is t as stored: UTC, millisecond precision (BSON dates hold milliseconds).
func ms(t time.Time) time.Time { return t.UTC().Truncate(time.Millisecond) }
