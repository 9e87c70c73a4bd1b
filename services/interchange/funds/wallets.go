package funds

import (
	"context"

	"google.golang.org/grpc/metadata"

	tradingv1 "github.com/zcustody/suite/proto/trading/v1"
	"github.com/zcustody/suite/services/interchange/settlement"
)

// Wallets reads trading wallets (endpoint 2's method) under the credentials it was made
// with: the caller's principal token forwarded as received, or interchange's token acting for
// a company, so trading scopes the read to that company.
type Wallets struct {
	client tradingv1.TradingServiceClient
	md     metadata.MD
}

var _ settlement.Wallets = Wallets{}

// NewWallets returns a reader whose calls carry md (the principal token).
func NewWallets(client tradingv1.TradingServiceClient, md metadata.MD) Wallets {
	return Wallets{client: client, md: md}
}

// Wallets reads the wallets with the given ids in one call; ids the company cannot see are
// absent.
func (w Wallets) Wallets(ctx context.Context, ids []string) (map[string]settlement.Wallet, error) {
	limit := int32(len(ids))
	resp, err := w.client.SearchWallets(metadata.NewOutgoingContext(ctx, w.md), &tradingv1.SearchWalletsRequest{Ids: ids, PaginationLimit: &limit})
	if err != nil {
		return nil, err
	}
	out := map[string]settlement.Wallet{}
	for _, tw := range resp.GetItems() {
		out[tw.GetId()] = settlement.Wallet{VenueID: tw.GetVenueId(), Status: tw.GetStatus(), Currency: tw.GetCurrency()}
	}
	return out, nil
}
