package demo

import (
	"context"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/zcustody/suite/services/custody"
	custodystore "github.com/zcustody/suite/services/custody/store"
)

// CustodyWallets returns the demo custody wallets: ZTEST holds 1.25 BTC, 12.5 ETH and
// 250 XLM, ZACME one BTC wallet.
func CustodyWallets() ([]custody.Wallet, error) {
	created := time.Date(2026, 1, 15, 9, 0, 0, 0, time.UTC)
	ztest, zacme := UserEmail("ztest", "maker"), UserEmail("zacme", "maker")
	openings := []custody.Opening{
		{ID: "ZTEST-NOBENF-DEMO000001", CompanyID: CompanyZTEST, Name: "Treasury BTC", CurrencyID: "btc-btc", CreatedBy: ztest, Balance: available("1.25")},
		{ID: "ZTEST-NOBENF-DEMO000002", CompanyID: CompanyZTEST, Name: "Treasury ETH", CurrencyID: "eth-eth", CreatedBy: ztest, Balance: available("12.5")},
		{ID: "ZTEST-NOBENF-DEMO000003", CompanyID: CompanyZTEST, Name: "Treasury XLM", CurrencyID: "xlm-xlm", CreatedBy: ztest, Balance: available("250")},
		{ID: "ZACME-NOBENF-DEMO000001", CompanyID: CompanyZACME, Name: "Acme Cold BTC", CurrencyID: "btc-btc", CreatedBy: zacme, Balance: available("0.5")},
	}
	wallets := make([]custody.Wallet, 0, len(openings))
	for _, o := range openings {
		o.At = created
		w, err := custody.Open(o)
		if err != nil {
			return nil, fmt.Errorf("demo custody wallet: %w", err)
		}
		wallets = append(wallets, w)
	}
	return wallets, nil
}

// available is a settled balance: all of it available, nothing pending.
func available(amount string) custody.Amounts {
	return custody.Amounts{Available: amount, Ledger: amount}
}

// loadCustody writes the demo custody wallets into the custody database. It is idempotent:
// fixed ids, each wallet replaced as a whole.
func loadCustody(ctx context.Context, client *mongo.Client) error {
	st := custodystore.New(client.Database("custody"))
	if err := st.EnsureIndexes(ctx); err != nil {
		return fmt.Errorf("demo custody: %w", err)
	}
	wallets, err := CustodyWallets()
	if err != nil {
		return err
	}
	for _, w := range wallets {
		if err := st.PutWallet(ctx, w); err != nil {
			return fmt.Errorf("demo custody: %w", err)
		}
	}
	return nil
}
