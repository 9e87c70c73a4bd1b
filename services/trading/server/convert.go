package server

import (
	"fmt"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/zcustody/suite/platform/apitime"
	commonv1 "github.com/zcustody/suite/proto/common/v1"
	tradingv1 "github.com/zcustody/suite/proto/trading/v1"
	"github.com/zcustody/suite/services/trading"
)

func walletProto(w trading.Wallet, prices trading.Prices) (*tradingv1.Wallet, error) {
	props := &structpb.Struct{}
	if w.CustomProperties != "" {
		if err := protojson.Unmarshal([]byte(w.CustomProperties), props); err != nil {
			return nil, fmt.Errorf("custom properties of %s: %w", w.ID, err)
		}
	}
	out := &tradingv1.Wallet{Id: w.ID, VenueId: w.VenueID, Name: w.Name, Status: w.Status, CompanyId: w.CompanyID,
		Currency: w.Currency, CustomProperties: props, CreatedBy: w.CreatedBy, CreatedAt: apitime.Format(w.CreatedAt),
		UpdatedAt: apitime.Format(w.UpdatedAt), Balances: make([]*tradingv1.Balance, 0, len(w.Balances))}
	for _, b := range w.Balances {
		out.Balances = append(out.Balances, balanceProto(b, prices))
	}
	return out, nil
}

func balanceProto(b trading.Balance, prices trading.Prices) *tradingv1.Balance {
	value := prices.Valuer(b.Currency)
	amount := func(v string) *commonv1.Amount {
		a := value(v)
		return &commonv1.Amount{Amount: a.Amount, AmountUnit: a.Unit, FiatValue: a.FiatValue, FiatCurrency: a.FiatCurrency, UsdValue: a.USDValue}
	}
	sub := &structpb.Struct{Fields: map[string]*structpb.Value{}}
	for ref, v := range b.SubClients {
		sub.Fields[ref] = structpb.NewStringValue(v)
	}
	return &tradingv1.Balance{Currency: b.Currency, AvailableBalance: amount(b.Available), LedgerBalance: amount(b.Ledger),
		PendingOutBalance: amount(b.PendingOut), PendingInBalance: amount(b.PendingIn), FeeBufferBalance: amount(b.FeeBuffer),
		SubClientBalances: sub}
}
