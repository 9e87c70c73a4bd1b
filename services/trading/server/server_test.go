package server_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/zcustody/suite/platform/apperr"
	commonv1 "github.com/zcustody/suite/proto/common/v1"
	tradingv1 "github.com/zcustody/suite/proto/trading/v1"
	"github.com/zcustody/suite/services/internal/amount"
	"github.com/zcustody/suite/services/internal/genaddr"
	"github.com/zcustody/suite/services/internal/journal"
	"github.com/zcustody/suite/services/trading"
)

func TestSearchWalletsRefuses(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	tests := []struct {
		name      string
		give      *tradingv1.SearchWalletsRequest
		wantCode  string
		wantField string
	}{
		{"limit 0", &tradingv1.SearchWalletsRequest{PaginationLimit: proto.Int32(0)}, apperr.CodeLength, "paginationLimit"},
		{"limit 1025", &tradingv1.SearchWalletsRequest{PaginationLimit: proto.Int32(1025)}, apperr.CodeLength, "paginationLimit"},
		{"negative offset", &tradingv1.SearchWalletsRequest{PaginationOffset: proto.Int32(-1)}, apperr.CodeLength, "paginationOffset"},
		{"status", &tradingv1.SearchWalletsRequest{Statuses: []string{"ACTIVE", "active"}}, apperr.CodeFormat, "statuses"},
		{"sort key", &tradingv1.SearchWalletsRequest{Sort: &commonv1.Sort{By: "name"}}, apperr.CodeFormat, "sort.by"},
		{"sort order", &tradingv1.SearchWalletsRequest{Sort: &commonv1.Sort{By: "id", Order: "asc"}}, apperr.CodeFormat, "sort.order"},
		{"too many values", &tradingv1.SearchWalletsRequest{Ids: make([]string, 1025)}, apperr.CodeLength, "ids"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := f.server.SearchWallets(user(company), tt.give)
			wantAppErr(t, err, tt.wantCode, tt.wantField)
		})
	}
	_, err := f.server.SearchWallets(context.Background(), &tradingv1.SearchWalletsRequest{})
	wantAppErr(t, err, apperr.CodeUnauthorized, "")
	_, err = f.server.ListVaultAddresses(user(company), &tradingv1.ListVaultAddressesRequest{Sort: &commonv1.Sort{By: "updatedAt"}})
	wantAppErr(t, err, apperr.CodeFormat, "sort.by")
	_, err = f.server.ListVaultAddresses(user(company), &tradingv1.ListVaultAddressesRequest{PaginationLimit: proto.Int32(1025)})
	wantAppErr(t, err, apperr.CodeLength, "paginationLimit")
}

func TestSearchWalletsLimits(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	for _, name := range []string{"A", "B", "C"} {
		f.create(t, "SERV-REQ-"+name, name, "BTC")
	}
	tests := []struct {
		limit, offset *int32
		wantItems     int
	}{
		{nil, nil, 3}, // default 10
		{proto.Int32(1), nil, 1},
		{proto.Int32(1024), nil, 3},
		{proto.Int32(2), proto.Int32(2), 1},
		{proto.Int32(10), proto.Int32(3), 0},
		{proto.Int32(10), proto.Int32(1 << 30), 0},
	}
	for _, tt := range tests {
		resp, err := f.server.SearchWallets(user(company), &tradingv1.SearchWalletsRequest{PaginationLimit: tt.limit, PaginationOffset: tt.offset})
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.GetItems()) != tt.wantItems || resp.GetTotal() != 3 {
			t.Errorf("limit %v offset %v: %d items, total %d; want %d items, total 3", tt.limit, tt.offset, len(resp.GetItems()), resp.GetTotal(), tt.wantItems)
		}
	}
}

func TestSearchWalletsAnswersTheContractShape(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	if err := f.store.PutPrice(ctx, trading.Price{Currency: "BTC", Price: "65000.00"}); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 21, 10, 15, 30, 123000000, time.UTC)
	w := trading.Wallet{ID: "ZTEST-TW-DEMO000001", VenueID: "BYBIT", Name: "Demo", Status: trading.StatusActive, CompanyID: company,
		Currency: "BTC", CustomProperties: `{"accountUuid":"a","n":1.5,"tags":["x"]}`, CreatedBy: maker, CreatedAt: at, UpdatedAt: at,
		Version: 1, RequestID: "DEMO"}
	if _, err := f.store.InsertWallet(ctx, w); err != nil {
		t.Fatal(err)
	}
	// 1.5 settled, 0.26543211 of it held for a withdrawal, 0.1 arriving.
	f.fund(t, w.ID, "BTC", "1.5")
	f.journal(t, journal.Entry{ID: "hold", Kind: journal.Pending, Legs: []journal.Leg{
		{Holder: w.ID, Currency: "BTC", Side: journal.Debit, Amount: amount.MustStored("0.26543211")},
		{Holder: trading.WorldWithdrawals, Currency: "BTC", Side: journal.Credit, Amount: amount.MustStored("0.26543211")}}})
	f.journal(t, journal.Entry{ID: "arriving", Kind: journal.Pending, Legs: []journal.Leg{
		{Holder: trading.WorldDeposits, Currency: "BTC", Side: journal.Debit, Amount: amount.MustStored("0.1")},
		{Holder: w.ID, Currency: "BTC", Side: journal.Credit, Amount: amount.MustStored("0.1")}}})
	resp, err := f.server.SearchWallets(user(company), &tradingv1.SearchWalletsRequest{Ids: []string{w.ID}})
	if err != nil {
		t.Fatal(err)
	}
	usd := func(amount, fiat string) *commonv1.Amount {
		return &commonv1.Amount{Amount: amount, AmountUnit: "BTC", FiatValue: fiat, FiatCurrency: "USD", UsdValue: fiat}
	}
	props, _ := structpb.NewStruct(map[string]any{"accountUuid": "a", "n": 1.5, "tags": []any{"x"}})
	sub, _ := structpb.NewStruct(map[string]any{})
	want := &tradingv1.SearchWalletsResponse{Total: 1, Items: []*tradingv1.Wallet{{Id: w.ID, VenueId: "BYBIT", Name: "Demo",
		Status: "ACTIVE", CompanyId: company, Currency: "BTC", CustomProperties: props, CreatedBy: maker,
		CreatedAt: "2026-11-21T10:15:30.123Z", UpdatedAt: "2026-11-21T10:15:30.123Z",
		Balances: []*tradingv1.Balance{{Currency: "BTC", AvailableBalance: usd("1.23456789", "80246.91285"),
			LedgerBalance: usd("1.5", "97500.00"), PendingOutBalance: usd("0.26543211", "17253.08715"), PendingInBalance: usd("0.1", "6500.00"),
			FeeBufferBalance: usd("0", "0.00"), SubClientBalances: sub}}}}}
	if diff := cmp.Diff(want, resp, protocmp.Transform()); diff != "" {
		t.Errorf("SearchWallets() diff (-want +got):\n%s", diff)
	}
	for _, tt := range []struct {
		name string
		ctx  context.Context
		req  *tradingv1.SearchWalletsRequest
	}{
		{"another company's caller", user("ZACME"), &tradingv1.SearchWalletsRequest{}},
		{"companyIds naming another company", user(company), &tradingv1.SearchWalletsRequest{CompanyIds: []string{"ZACME"}}},
	} {
		got, err := f.server.SearchWallets(tt.ctx, tt.req)
		if err != nil || len(got.GetItems()) != 0 || got.GetTotal() != 0 {
			t.Errorf("%s: %v, %v; want an empty page with total 0", tt.name, got, err)
		}
	}
}

func TestVaultAddressesVerifyFromTheJSONResponse(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	walletID := f.create(t, "SERV-REQ-1", "Stable", "USDC")
	f.create(t, "SERV-REQ-2", "Other", "BTC")
	resp, err := f.server.ListVaultAddresses(user(company), &tradingv1.ListVaultAddressesRequest{WalletIds: []string{walletID}})
	if err != nil {
		t.Fatal(err)
	}
	body, err := protojson.MarshalOptions{EmitUnpopulated: true}.Marshal(resp)
	if err != nil {
		t.Fatal(err)
	}
	var page struct {
		Items []map[string]any `json:"items"`
		Total int              `json:"total"`
	}
	if err := json.Unmarshal(body, &page); err != nil {
		t.Fatal(err)
	}
	if page.Total != 2 || len(page.Items) != 2 {
		t.Fatalf("ListVaultAddresses(USDC wallet) = %s, want 2 addresses", body)
	}
	for _, item := range page.Items {
		if err := genaddr.VerifyJSON(item); err != nil {
			t.Errorf("signature of %v does not verify: %v", item["address"], err)
		}
		if item["integrityDetails"].(map[string]any)["operatorPublicKey"] != base64.StdEncoding.EncodeToString(f.operPub) {
			t.Errorf("operatorPublicKey is not the operator's")
		}
		item["walletId"] = "ZTEST-TW-FORGED0000"
		if err := genaddr.VerifyJSON(item); !errors.Is(err, genaddr.ErrSignature) {
			t.Errorf("a changed record: %v, want genaddr.ErrSignature", err)
		}
	}
	other, err := f.server.ListVaultAddresses(user("ZACME"), &tradingv1.ListVaultAddressesRequest{WalletIds: []string{walletID}})
	if err != nil || other.GetTotal() != 0 {
		t.Errorf("another company's ListVaultAddresses = %v, %v; want nothing", other, err)
	}
	byCurrency, err := f.server.ListVaultAddresses(user(company), &tradingv1.ListVaultAddressesRequest{Currencies: []string{"BTC"}})
	if err != nil || byCurrency.GetTotal() != 1 || byCurrency.GetItems()[0].GetCurrencyId() != "btc-btc" {
		t.Errorf("ListVaultAddresses(currencies BTC) = %v, %v; want the BTC wallet's address", byCurrency, err)
	}
}
