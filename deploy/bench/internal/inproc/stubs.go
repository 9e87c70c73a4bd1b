package inproc

import (
	"context"

	"github.com/google/uuid"

	"github.com/zcustody/suite/deploy/bench/internal/data"
	"github.com/zcustody/suite/deploy/local/demo"
	"github.com/zcustody/suite/platform/principal"
	servicedeskv1 "github.com/zcustody/suite/proto/servicedesk/v1"
	"github.com/zcustody/suite/services/trading"
	tradingserver "github.com/zcustody/suite/services/trading/server"
)

// fixedPage is a trading store that answers every search with the same page of 10 bulk
// wallets out of 100, and the demo prices. The wallet history is not benchmarked: its reader
// is left nil (its signature names a type internal to services, which the bench cannot
// implement), so a history call would panic.
type fixedPage struct {
	tradingserver.HistoryReader
}

func (fixedPage) SearchWallets(context.Context, trading.WalletFilter) ([]trading.Wallet, int64, error) {
	page := make([]trading.Wallet, 0, 10)
	for i := range 10 {
		page = append(page, data.BenchWallet(10*i))
	}
	return page, 100, nil
}

func (fixedPage) ListAddresses(context.Context, trading.AddressFilter) ([]trading.VaultAddress, int64, error) {
	return nil, 0, nil
}

func (fixedPage) Prices(context.Context) (trading.Prices, error) {
	prices := trading.Prices{}
	for _, p := range demo.TradingPrices() {
		p.FiatCurrency = trading.FiatUSD
		prices[p.Currency] = p
	}
	return prices, nil
}

// identity answers the gateway's caller look-ups: ZTEST with its demo key, and any user of
// it as an active maker and viewer entitled to the write's service.
type identity struct {
	servicedeskv1.UnimplementedIdentityServiceServer
	company *servicedeskv1.Company
}

func newIdentity() (*identity, error) {
	pub, err := demo.Key("ztest-company.pub.pem")
	if err != nil {
		return nil, err
	}
	return &identity{company: &servicedeskv1.Company{Id: data.Company, Name: data.CompanyName, Active: true,
		PublicKeys: []string{string(pub)}}}, nil
}

func (s *identity) GetCaller(_ context.Context, req *servicedeskv1.GetCallerRequest) (*servicedeskv1.GetCallerResponse, error) {
	resp := &servicedeskv1.GetCallerResponse{Company: s.company}
	if req.GetUserEmail() != "" {
		resp.User = &servicedeskv1.User{Email: req.GetUserEmail(), CompanyId: data.Company, Active: true,
			Roles: []string{principal.RoleMaker, principal.RoleViewer}, Entitlements: []string{data.WriteService}}
	}
	return resp, nil
}

// creator answers a create with a new request id, as the service desk does once it stored it.
type creator struct {
	servicedeskv1.UnimplementedServicedeskServiceServer
}

func (creator) CreateRequest(context.Context, *servicedeskv1.CreateRequestRequest) (*servicedeskv1.CreateRequestResponse, error) {
	return &servicedeskv1.CreateRequestResponse{RequestId: "SERV-REQ-" + uuid.NewString()[:10],
		PluginDetail: &servicedeskv1.PluginDetail{EntityId: []string{}}}, nil
}
