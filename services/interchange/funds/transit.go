package funds

import (
	"context"
	"fmt"

	"github.com/zcustody/suite/platform/principal"
	custodyv1 "github.com/zcustody/suite/proto/custody/v1"
	tradingv1 "github.com/zcustody/suite/proto/trading/v1"
	"github.com/zcustody/suite/services/interchange/withdrawal"
	"github.com/zcustody/suite/services/internal/amount"
	chains "github.com/zcustody/suite/services/internal/ledger"
	"github.com/zcustody/suite/services/trading"
)

// Transit reads the in-transit accounts of trading and custody (withdrawal.Transit).
type Transit struct {
	ledger  ledger
	custody Custody
}

var _ withdrawal.Transit = Transit{}

// NewTransit returns the reader over trading's ledger client and custody.
func NewTransit(client tradingv1.TradingLedgerServiceClient, custody Custody, signer *principal.Signer) Transit {
	return Transit{ledger: ledger{client: client, signer: signer}, custody: custody}
}

// Sent is what trading's transit:custody has received (credits posted), per currency.
func (t Transit) Sent(ctx context.Context) (map[string]amount.Amount, error) {
	ctx, err := t.ledger.signer.OutgoingContext(ctx, principal.Principal{Kind: principal.KindSystem, System: System})
	if err != nil {
		return nil, err
	}
	resp, err := t.ledger.client.GetSystemAccount(ctx, &tradingv1.GetSystemAccountRequest{Account: trading.TransitCustody})
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", trading.TransitCustody, err)
	}
	out := map[string]amount.Amount{}
	for _, c := range resp.GetCounters() {
		v, err := amount.FromStored(c.GetCreditsPosted())
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", trading.TransitCustody, c.GetCurrency(), err)
		}
		out[c.GetCurrency()] = v
	}
	return out, nil
}

// Received is what custody's transit:trading has paid out (debits posted), per currency
// code (custody keeps its accounts by currency id: USDC on two ledgers is one code).
func (t Transit) Received(ctx context.Context) (map[string]amount.Amount, error) {
	ctx, err := t.custody.outgoing(ctx)
	if err != nil {
		return nil, err
	}
	resp, err := t.custody.client.GetSystemAccount(ctx, &custodyv1.GetSystemAccountRequest{Account: custodyTransit})
	if err != nil {
		return nil, fmt.Errorf("read custody's %s: %w", custodyTransit, err)
	}
	out := map[string]amount.Amount{}
	for _, c := range resp.GetCounters() {
		cur, ok := chains.ByID(c.GetCurrencyId())
		if !ok {
			return nil, fmt.Errorf("%w: custody's %s holds unknown currency %q", errLedger, custodyTransit, c.GetCurrencyId())
		}
		v, err := amount.FromStored(c.GetDebitsPosted())
		if err != nil {
			return nil, fmt.Errorf("custody's %s %s: %w", custodyTransit, c.GetCurrencyId(), err)
		}
		out[cur.Code] = out[cur.Code].Add(v)
	}
	return out, nil
}

// custodyTransit is custody's in-transit account from trading.
const custodyTransit = "transit:trading"
