package funds

import (
	"context"
	"log/slog"
	"time"

	"github.com/zcustody/suite/platform/principal"
	tradingv1 "github.com/zcustody/suite/proto/trading/v1"
	"github.com/zcustody/suite/services/internal/amount"
	"github.com/zcustody/suite/services/trading"
)

// DefaultPriceMaxAge is how old a price of trading's table may be before a request is valued
// without it, unless configured otherwise (PRICE_MAX_AGE).
const DefaultPriceMaxAge = time.Hour

// Prices values the amounts of the service requests interchange owns in US dollars, for the
// company's approval policy, from trading's price table (TradingLedgerService.GetPrices, read
// under interchange's system principal at each valuation; trading caches the table).
type Prices struct {
	ledger ledger
	maxAge time.Duration
	now    func() time.Time
	logger *slog.Logger
}

// NewPrices returns the valuer over trading's ledger client: a price set more than maxAge
// ago (DefaultPriceMaxAge when 0) is not used; now is the clock (time.Now when nil).
func NewPrices(client tradingv1.TradingLedgerServiceClient, signer *principal.Signer, maxAge time.Duration, now func() time.Time, logger *slog.Logger) Prices {
	if maxAge <= 0 {
		maxAge = DefaultPriceMaxAge
	}
	if now == nil {
		now = time.Now
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return Prices{ledger: ledger{client: client, signer: signer}, maxAge: maxAge, now: now, logger: logger}
}

// USDValue is amount (a canonical decimal) of currency (a code, e.g. BTC) in US dollars, a
// canonical decimal: amount × price, exact (trading.Prices.Value). It is "" when the table
// has no positive price for the currency, when its price is older than the bound, or when
// trading cannot answer now: the request is then decided without a value (the strictest rule that
// matches it otherwise), never refused for it.
func (p Prices) USDValue(ctx context.Context, currency, amt string) string {
	price, ok := p.price(ctx, currency)
	if !ok {
		return ""
	}
	v := trading.Prices{currency: price}.Value(amt, currency).USDValue
	usd, err := amount.FromStored(v)
	if err != nil {
		return ""
	}
	return usd.String()
}

// price is the table's fresh price of currency.
func (p Prices) price(ctx context.Context, currency string) (trading.Price, bool) {
	ctx, err := p.ledger.signer.OutgoingContext(ctx, principal.Principal{Kind: principal.KindSystem, System: System})
	if err != nil {
		p.logger.WarnContext(ctx, "value request without a price", "currency", currency, "error", err.Error())
		return trading.Price{}, false
	}
	resp, err := p.ledger.client.GetPrices(ctx, &tradingv1.GetPricesRequest{})
	if err != nil {
		p.logger.WarnContext(ctx, "value request without a price", "currency", currency, "error", err.Error())
		return trading.Price{}, false
	}
	for _, q := range resp.GetPrices() {
		if q.GetCurrency() != currency {
			continue
		}
		at, err := time.Parse(time.RFC3339Nano, q.GetUpdatedAt())
		if err != nil || p.now().Sub(at) > p.maxAge {
			return trading.Price{}, false
		}
		if usd, err := amount.ParsePrice(q.GetUsd()); err != nil || usd.Sign() <= 0 {
			return trading.Price{}, false
		}
		return trading.Price{Currency: currency, Price: q.GetUsd(), FiatCurrency: trading.FiatUSD, UpdatedAt: at}, true
	}
	return trading.Price{}, false
}
