package demo

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/zcustody/suite/services/interchange/whitelist"
	"github.com/zcustody/suite/services/interchange/whitelist/address"
	whiteliststore "github.com/zcustody/suite/services/interchange/whitelist/store"
)

// SettlementWallet is one demo venue settlement wallet and the currency ids it receives.
type SettlementWallet struct {
	CompanyID   string
	VenueID     string
	CurrencyIDs []string
}

// SettlementWallets returns the demo settlement wallets: ZTEST at BYBIT (BTC, ETH, USDC on
// ETH) and DERIBIT (ETH, XLM, XRP, USDC on XLM), ZACME at BYBIT (BTC, XRP). Every supported
// ledger has at least one address, so endpoint 8 shows each format.
func SettlementWallets() []SettlementWallet {
	return []SettlementWallet{
		{CompanyZTEST, "BYBIT", []string{"btc-btc", "eth-eth", "usdc-eth"}},
		{CompanyZTEST, "DERIBIT", []string{"eth-eth", "xlm-xlm", "xrp-xrp", "usdc-xlm"}},
		{CompanyZACME, "BYBIT", []string{"btc-btc", "xrp-xrp"}},
	}
}

// WhitelistedAddresses returns the demo whitelisted addresses (fixed ids and addresses):
// ZTEST holds an ACTIVE ETH address under VASP-001 and a DEACTIVATED BTC address under
// VASP-002, ZACME an ACTIVE XRP address under VASP-003.
func WhitelistedAddresses() []address.Whitelisted {
	created := time.Date(2026, 1, 20, 11, 45, 30, 250_000_000, time.UTC)
	both := []string{address.PurposeIncoming, address.PurposeOutgoing}
	wl := func(id, company, chain, addr, vasp, vaspName, status string, purposes []string) address.Whitelisted {
		return address.Whitelisted{ID: id, CompanyID: company, Address: addr, Blockchain: chain, Purposes: purposes, Hosted: true,
			VaspID: vasp, VaspName: vaspName, Status: status, CreatedBy: UserEmail(lower(company), "maker"), CreatedAt: created,
			UpdatedAt: created, Version: 1, RequestID: "DEMO", Notes: "demo"}
	}
	return []address.Whitelisted{
		wl("6f1d2c3b-4a59-4e8f-9b0a-1c2d3e4f5a61", CompanyZTEST, "ETH", "0x4332a9b24fcCe803a4082F8764e8C40E1A4E4560",
			"VASP-001", "Global Exchange Ltd", address.StatusActive, both),
		wl("6f1d2c3b-4a59-4e8f-9b0a-1c2d3e4f5a62", CompanyZTEST, "BTC", "bc1qfadvu32gnn98y5zx4ccghwsjvz5rpzm43dzgpg",
			"VASP-002", "ZTEST Private Venue", address.StatusDeactivated, []string{address.PurposeIncoming}),
		wl("6f1d2c3b-4a59-4e8f-9b0a-1c2d3e4f5a63", CompanyZACME, "XRP", "rG6KU9oECoWxTLhS2HBz2vfySE1sRi5wPu",
			"VASP-003", "Acme Partner Brokerage", address.StatusActive, both),
	}
}

// loadInterchange writes the demo settlement wallet addresses (signed with operatorKey) and
// whitelisted addresses into the interchange database. It is idempotent: an address, once
// generated for a company, venue and currency, is kept; whitelisted addresses have fixed ids.
func loadInterchange(ctx context.Context, client *mongo.Client, operatorKey ed25519.PrivateKey) error {
	db := client.Database("interchange")
	st := whiteliststore.New(db)
	if err := st.EnsureIndexes(ctx); err != nil {
		return fmt.Errorf("demo interchange: %w", err)
	}
	for _, w := range SettlementWallets() {
		o := owner(w.CompanyID)
		for _, currencyID := range w.CurrencyIDs {
			_, err := whitelist.EnsureSettlementAddress(ctx, db, address.Party{ID: o.ID, Name: o.Name}, w.VenueID, currencyID, operatorKey)
			if err != nil {
				return fmt.Errorf("demo settlement address: %w", err)
			}
		}
	}
	for _, w := range WhitelistedAddresses() {
		if _, err := st.InsertWhitelisted(ctx, w); err != nil {
			return fmt.Errorf("demo whitelisted address: %w", err)
		}
	}
	return nil
}
