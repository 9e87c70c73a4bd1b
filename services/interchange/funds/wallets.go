package funds

import (
	"context"
	"slices"

	"google.golang.org/grpc/metadata"

	tradingv1 "github.com/zcustody/suite/proto/trading/v1"
	"github.com/zcustody/suite/services/interchange/settlement"
	"github.com/zcustody/suite/services/internal/page"
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

// Wallets reads the wallets with the given ids, one call per page of endpoint 2's largest
// size; ids the caller cannot see are absent.
func (w Wallets) Wallets(ctx context.Context, ids []string) (map[string]settlement.Wallet, error) {
	ctx = metadata.NewOutgoingContext(ctx, w.md)
	out := make(map[string]settlement.Wallet, len(ids))
	for chunk := range slices.Chunk(ids, page.MaxLimit) {
		limit := int32(len(chunk))
		resp, err := w.client.SearchWallets(ctx, &tradingv1.SearchWalletsRequest{Ids: chunk, PaginationLimit: &limit})
		if err != nil {
			return nil, err
		}
		for _, tw := range resp.GetItems() {
			out[tw.GetId()] = settlement.Wallet{CompanyID: tw.GetCompanyId(), VenueID: tw.GetVenueId(), Status: tw.GetStatus(), Currency: tw.GetCurrency()}
		}
	}
	return out, nil
}
