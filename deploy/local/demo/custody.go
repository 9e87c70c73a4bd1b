package demo

import (
	"context"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/zcustody/suite/services/custody"
	custodystore "github.com/zcustody/suite/services/custody/store"
)

// Demo v2 wallet waiting for approval (endpoint 4).
const (
	PendingWalletID = "ZTEST-NOBENF-DEMO000004"
	PendingIntentID = "5f0c8a4e-2b7d-4e19-9c3a-6d1e8f2b4a70"
)

// CustodyWallets returns the demo custody wallets: ZTEST holds 1.25 BTC, 12.5 ETH and
// 250 XLM (enough for trustlines) and has an empty ETH wallet proposed by its maker waiting
// for a CHECKER under the fixed intent PendingIntentID; ZACME holds one BTC wallet.
func CustodyWallets() ([]custody.Wallet, error) {
	created := time.Date(2026, 1, 15, 9, 0, 0, 0, time.UTC)
	ztest, zacme := UserEmail("ztest", "maker"), UserEmail("zacme", "maker")
	openings := []custody.Opening{
		{ID: "ZTEST-NOBENF-DEMO000001", CompanyID: CompanyZTEST, Name: "Treasury BTC", CurrencyID: "btc-btc", CreatedBy: ztest, Balance: available("1.25")},
		{ID: "ZTEST-NOBENF-DEMO000002", CompanyID: CompanyZTEST, Name: "Treasury ETH", CurrencyID: "eth-eth", CreatedBy: ztest, Balance: available("12.5")},
		{ID: "ZTEST-NOBENF-DEMO000003", CompanyID: CompanyZTEST, Name: "Treasury XLM", CurrencyID: "xlm-xlm", CreatedBy: ztest, Balance: available("250")},
		{ID: PendingWalletID, CompanyID: CompanyZTEST, Name: "Proposed ETH", CurrencyID: "eth-eth", CreatedBy: ztest},
		{ID: "ZACME-NOBENF-DEMO000001", CompanyID: CompanyZACME, Name: "Acme Cold BTC", CurrencyID: "btc-btc", CreatedBy: zacme, Balance: available("0.5")},
	}
	wallets := make([]custody.Wallet, 0, len(openings))
	for _, o := range openings {
		o.At = created
		w, err := custody.Open(o)
		if err == nil && o.ID == PendingWalletID {
			w, err = custody.Pending(w, PendingIntentID)
		}
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

// FeeEstimates returns the demo fee estimates, observed at: every currency but xrp-xrp, whose
// entry therefore shows ER-252. They go stale FEE_MAX_AGE (10 minutes) after the demo data is
// loaded; internal systems refresh them through CustodyAdminService.RefreshFeeEstimates.
func FeeEstimates(at time.Time) []custody.FeeEstimate {
	estimate := func(currencyID string, high, medium, low []string) custody.FeeEstimate {
		return custody.FeeEstimate{CurrencyID: currencyID, High: high, Medium: medium, Low: low, ObservedAt: at}
	}
	return []custody.FeeEstimate{
		estimate("btc-btc", []string{"35.5", "30"}, []string{"18.25"}, []string{"6", "4.001"}),          // sat/vB
		estimate("eth-eth", []string{"42.5", "40"}, []string{"25.125"}, []string{"12", "10.000000001"}), // Gwei
		estimate("usdc-eth", []string{"42.5", "40"}, []string{"25.125"}, []string{"12", "10.000000001"}),
		estimate("xlm-xlm", []string{"1000"}, []string{"200"}, []string{"100"}), // stroops
		estimate("usdc-xlm", []string{"1000"}, []string{"200"}, []string{"100"}),
		estimate("eurc-xlm", []string{"1000"}, []string{"200"}, []string{"100"}),
	}
}

// loadCustody writes the demo custody wallets and fee estimates into the custody database.
// It is idempotent: fixed ids, each wallet replaced as a whole (the pending wallet is pending
// again), estimates observed now.
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
	return writeFees(ctx, st)
}

// RefreshFees writes fresh demo fee estimates, as a fee feed would (make run does it every
// few minutes, so the demo's estimates never go stale).
func RefreshFees(ctx context.Context, client *mongo.Client) error {
	return writeFees(ctx, custodystore.New(client.Database("custody")))
}

func writeFees(ctx context.Context, st *custodystore.Store) error {
	now := time.Now()
	for _, e := range FeeEstimates(now) {
		e, err := custody.CheckFeeEstimate("demo "+e.CurrencyID, e, now)
		if err != nil {
			return fmt.Errorf("demo custody: %w", err)
		}
		if _, err := st.PutFee(ctx, e); err != nil {
			return fmt.Errorf("demo custody: %w", err)
		}
	}
	return nil
}
