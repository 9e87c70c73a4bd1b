package demo

import (
	"context"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"

	interchangestore "github.com/zcustody/suite/services/interchange/store"
	"github.com/zcustody/suite/services/interchange/withdrawal"
	"github.com/zcustody/suite/services/trading"
	tradingstore "github.com/zcustody/suite/services/trading/store"
)

// VenueWallets returns the demo venue settlement wallets: BYBIT and DERIBIT each hold BTC,
// ETH and USDC, so settlements at those venues can pay out (payables) from the start.
func VenueWallets() []trading.Wallet {
	created := time.Date(2026, 1, 15, 9, 0, 0, 0, time.UTC)
	holdings := map[string]string{"BTC": "250", "ETH": "5000", "USDC": "10000000"}
	var out []trading.Wallet
	for _, venue := range []string{"BYBIT", "DERIBIT"} {
		for _, currency := range []string{"BTC", "ETH", "USDC"} {
			w := trading.NewVenueWallet(venue, currency, created)
			w.Balances[0].Available, w.Balances[0].Ledger = holdings[currency], holdings[currency]
			out = append(out, w)
		}
	}
	return out
}

// Withdrawals returns the demo withdrawals awaiting confirmation (endpoint 11, by the
// operator of the wallet's venue), out of the demo trading wallets: two of ZTEST's (at
// BYBIT and DERIBIT), one of ZACME's (at BYBIT), created at created (an undecided
// withdrawal expires: the demo's are as new as its data).
func Withdrawals(created time.Time) []withdrawal.Withdrawal {
	w := func(id, company, wallet, venue, currency, amount, to string) withdrawal.Withdrawal {
		return withdrawal.Withdrawal{TransferID: id, CompanyID: company, WalletID: wallet, VenueID: venue, Currency: currency, Amount: amount,
			DestinationAddress: to, Status: withdrawal.StatusPending, Version: 1, CreatedAt: created, UpdatedAt: created}
	}
	return []withdrawal.Withdrawal{
		w("ZTEST-WD-DEMO0001", CompanyZTEST, "ZTEST-TW-DEMO000001", VenueBYBIT, "BTC", "0.1", "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4"),
		w("ZTEST-WD-DEMO0002", CompanyZTEST, "ZTEST-TW-DEMO000002", VenueDERIBIT, "ETH", "1.5", "0x52908400098527886E0F7030069857D2E4169EE7"),
		w("ZACME-WD-DEMO0001", CompanyZACME, "ZACME-TW-DEMO000001", VenueBYBIT, "BTC", "0.05", "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4"),
	}
}

// loadSettlement writes the venue settlement wallets (funded through trading's journal)
// into trading's database and the pending withdrawals into interchange's. Idempotent: a
// withdrawal already there, decided or not, is kept (its money has moved, or not, once).
func loadSettlement(ctx context.Context, client *mongo.Client) error {
	st := tradingstore.New(client.Database("trading"))
	for _, w := range VenueWallets() {
		if err := st.PutWallet(ctx, w); err != nil {
			return fmt.Errorf("demo venue wallet: %w", err)
		}
		if err := st.Fund(ctx, "demo:"+w.ID, w, w.Balances[0]); err != nil {
			return fmt.Errorf("demo venue wallet: %w", err)
		}
	}
	for _, w := range Withdrawals(time.Now().UTC().Truncate(time.Millisecond)) {
		if err := interchangestore.PutWithdrawal(ctx, client.Database("interchange"), w); err != nil {
			return fmt.Errorf("demo withdrawal: %w", err)
		}
	}
	return nil
}
