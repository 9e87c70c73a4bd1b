package demo

import (
	"context"
	"crypto/ed25519"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/zcustody/suite/services/trading"
	tradingstore "github.com/zcustody/suite/services/trading/store"
)

// TradingPrices are the demo prices in USD per unit.
func TradingPrices() []trading.Price {
	return []trading.Price{
		{Currency: "BTC", Price: "65000.00"},
		{Currency: "ETH", Price: "3200.00"},
		{Currency: "XLM", Price: "0.12"},
		{Currency: "XRP", Price: "0.55"},
		{Currency: "USDC", Price: "1.00"},
	}
}

// RefreshPrices writes the demo prices again, set now, as a price feed would (make run does
// it every few minutes, so the demo's service requests keep their USD value: interchange
// values none with a price older than PRICE_MAX_AGE).
func RefreshPrices(ctx context.Context, client *mongo.Client) error {
	st := tradingstore.New(client.Database("trading"))
	for _, p := range TradingPrices() {
		if err := st.PutPrice(ctx, p); err != nil {
			return fmt.Errorf("demo price: %w", err)
		}
	}
	return nil
}

// TradingWallets returns the demo trading wallets: ZTEST holds a BTC wallet at BYBIT and an
// ETH wallet at DERIBIT, ZACME a BTC wallet at BYBIT.
func TradingWallets() []trading.Wallet {
	created := time.Date(2026, 1, 15, 9, 30, 0, 0, time.UTC)
	props := `{"accountUuid":"5f0c8a52-3c1e-4d2b-9a47-1e6b2f7d9c01","userUuid":"9b3e1d44-7a2f-4c6e-8d15-2f4a6c8e0b13"}`
	wallet := func(id, company, venue, name, currency string, b trading.Balance) trading.Wallet {
		b.Currency = currency
		return trading.Wallet{ID: id, VenueID: venue, Name: name, Status: trading.StatusActive, CompanyID: company, Currency: currency,
			Balances: []trading.Balance{b}, CustomProperties: props, CreatedBy: UserEmail(lower(company), "maker"),
			CreatedAt: created, UpdatedAt: created, Version: 1, RequestID: "DEMO"}
	}
	return []trading.Wallet{
		wallet("ZTEST-TW-DEMO000001", CompanyZTEST, "BYBIT", "Bybit BTC", "BTC", trading.Balance{Available: "2.5", Ledger: "2.75",
			PendingOut: "0.25", PendingIn: "0.1", FeeBuffer: "0.0005", SubClients: map[string]string{"desk-a": "1.5", "desk-b": "1"}}),
		wallet("ZTEST-TW-DEMO000002", CompanyZTEST, "DERIBIT", "Deribit ETH", "ETH", trading.Balance{Available: "40.125", Ledger: "40.125",
			PendingOut: "0", PendingIn: "2.5", FeeBuffer: "0.05", SubClients: map[string]string{}}),
		wallet("ZACME-TW-DEMO000001", CompanyZACME, "BYBIT", "Acme Bybit BTC", "BTC", trading.Balance{Available: "0.75", Ledger: "0.75",
			PendingOut: "0", PendingIn: "0", FeeBuffer: "0.0002", SubClients: map[string]string{}}),
	}
}

func lower(company string) string {
	if company == CompanyZTEST {
		return "ztest"
	}
	return "zacme"
}

// owner is the wallet owner named on the demo addresses.
func owner(company string) trading.Party {
	names := map[string]string{CompanyZTEST: "Zodia Test Ltd", CompanyZACME: "Acme Treasury AG"}
	return trading.Party{ID: company, Name: names[company]}
}

// loadTrading writes the demo prices, trading wallets (funded through trading's journal)
// and their vault addresses (signed with operatorKey) into the trading database. It is
// idempotent: prices and wallet descriptions are replaced under fixed ids, their funding
// entries have fixed ids, and a wallet's address, once generated, is kept.
func loadTrading(ctx context.Context, client *mongo.Client, operatorKey ed25519.PrivateKey) error {
	st := tradingstore.New(client.Database("trading"))
	if err := st.EnsureIndexes(ctx); err != nil {
		return fmt.Errorf("demo trading: %w", err)
	}
	for _, p := range TradingPrices() {
		if err := st.PutPrice(ctx, p); err != nil {
			return fmt.Errorf("demo price: %w", err)
		}
	}
	for _, w := range TradingWallets() {
		if err := st.PutWallet(ctx, w); err != nil {
			return fmt.Errorf("demo trading wallet: %w", err)
		}
		for _, b := range w.Balances {
			if err := st.Fund(ctx, "demo:"+w.ID+":"+b.Currency, w, b); err != nil {
				return fmt.Errorf("demo trading wallet: %w", err)
			}
		}
		addrs, err := trading.NewVaultAddresses(w, owner(w.CompanyID), trading.DefaultCustodian(), operatorKey, w.CreatedAt)
		if err != nil {
			return fmt.Errorf("demo vault address: %w", err)
		}
		for _, a := range addrs {
			if _, err := st.InsertAddress(ctx, a); err != nil {
				return fmt.Errorf("demo vault address: %w", err)
			}
		}
	}
	return nil
}

// operatorKey returns the demo operator key (operator.pem) that signs generated addresses.
func operatorKey() (ed25519.PrivateKey, error) {
	data, err := Key("operator.pem")
	if err != nil {
		return nil, err
	}
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, errors.New("demo key operator.pem: no PEM block")
	}
	key, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("demo key operator.pem: %w", err)
	}
	edKey, ok := key.(ed25519.PrivateKey)
	if !ok {
		return nil, errors.New("demo key operator.pem: not Ed25519")
	}
	return edKey, nil
}
