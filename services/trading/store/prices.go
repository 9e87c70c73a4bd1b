package store

import (
	"context"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/zcustody/suite/services/trading"
)

type priceDoc struct {
	Currency     string    `bson:"_id"`
	Price        string    `bson:"price"` // decimal string, fiat per unit
	FiatCurrency string    `bson:"fiatCurrency"`
	UpdatedAt    time.Time `bson:"updatedAt"`
}

// PutPrice creates or replaces the price of a currency (demo data, and the ledger API's
// SetPrices).
func (s *Store) PutPrice(ctx context.Context, p trading.Price) error {
	if p.FiatCurrency == "" {
		p.FiatCurrency = trading.FiatUSD
	}
	if err := p.Validate(); err != nil {
		return err
	}
	if p.UpdatedAt.IsZero() {
		p.UpdatedAt = s.now()
	}
	doc := priceDoc{Currency: p.Currency, Price: p.Price, FiatCurrency: p.FiatCurrency, UpdatedAt: p.UpdatedAt.UTC()}
	if _, err := s.db.Collection(colPrices).ReplaceOne(ctx, bson.D{{Key: "_id", Value: p.Currency}}, doc, options.Replace().SetUpsert(true)); err != nil {
		return fmt.Errorf("put price %s: %w", p.Currency, err)
	}
	s.mu.Lock()
	s.loadedAt = time.Time{} // this process sees its own change at once
	s.mu.Unlock()
	return nil
}

// Prices returns every price, at most PriceTTL old. The map is shared: do not modify it.
func (s *Store) Prices(ctx context.Context) (trading.Prices, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.loadedAt.IsZero() && s.now().Sub(s.loadedAt) < PriceTTL {
		return s.prices, nil
	}
	docs, err := findAll[priceDoc](ctx, s.db.Collection(colPrices), bson.D{}, options.Find())
	if err != nil {
		return nil, err
	}
	prices := make(trading.Prices, len(docs))
	for _, d := range docs {
		prices[d.Currency] = trading.Price{Currency: d.Currency, Price: d.Price, FiatCurrency: d.FiatCurrency, UpdatedAt: d.UpdatedAt.UTC()}
	}
	s.prices, s.loadedAt = prices, s.now()
	return prices, nil
}
