package whitelist_test

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/zcustody/suite/platform/apperr"
	commonv1 "github.com/zcustody/suite/proto/common/v1"
	interchangev1 "github.com/zcustody/suite/proto/interchange/v1"
	"github.com/zcustody/suite/services/interchange/whitelist"
	"github.com/zcustody/suite/services/interchange/whitelist/address"
	"github.com/zcustody/suite/services/internal/genaddr"
	"github.com/zcustody/suite/services/internal/ledger"
)

type listReq = interchangev1.ListWhitelistedAddressesRequest

func TestListWhitelistedRefuses(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	tests := []struct {
		name      string
		give      *listReq
		wantCode  string
		wantField string
	}{
		{"limit 0", &listReq{PaginationLimit: proto.Int32(0)}, apperr.CodeLength, "paginationLimit"},
		{"limit -1", &listReq{PaginationLimit: proto.Int32(-1)}, apperr.CodeLength, "paginationLimit"},
		{"limit 1025", &listReq{PaginationLimit: proto.Int32(1025)}, apperr.CodeLength, "paginationLimit"},
		{"offset -1", &listReq{PaginationOffset: proto.Int32(-1)}, apperr.CodeLength, "paginationOffset"},
		{"status lower case", &listReq{Statuses: []string{"ACTIVE", "active"}}, apperr.CodeFormat, "statuses"},
		{"status unknown", &listReq{Statuses: []string{"PENDING"}}, apperr.CodeFormat, "statuses"},
		{"blockchain lower case", &listReq{Blockchains: []string{"eth"}}, apperr.CodeFormat, "blockchains"},
		{"blockchain unsupported", &listReq{Blockchains: []string{"SOL"}}, apperr.CodeFormat, "blockchains"},
		{"blockchainId upper case", &listReq{BlockchainIds: []string{"ETH-ETH"}}, apperr.CodeFormat, "blockchainIds"},
		{"blockchainId of a token", &listReq{BlockchainIds: []string{"usdc-eth"}}, apperr.CodeFormat, "blockchainIds"},
		{"fragment too long", &listReq{AddressFragment: strings.Repeat("a", 129)}, apperr.CodeLength, "addressFragment"},
		{"too many addresses", &listReq{Addresses: make([]string, 1025)}, apperr.CodeLength, "addresses"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := f.svc.ListWhitelistedAddresses(caller(company), tt.give)
			wantAppErr(t, err, tt.wantCode, tt.wantField)
		})
	}
	_, err := f.svc.ListWhitelistedAddresses(context.Background(), &listReq{})
	wantAppErr(t, err, apperr.CodeUnauthorized, "")
}

func TestListWhitelistedShapeAndPages(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	var addrs []string
	for i := range 12 {
		a := generate(t, ledger.ETH)
		addrs = append(addrs, a)
		f.run(t, request(t, company, "SERV-REQ-"+string(rune('A'+i)), address.ServiceWhitelist, whitelistPayload(a, "ETH", "VASP-001")))
	}
	f.run(t, request(t, other, "SERV-REQ-Z", address.ServiceWhitelist, whitelistPayload(generate(t, ledger.ETH), "ETH", "VASP-001")))

	resp, err := f.svc.ListWhitelistedAddresses(caller(company), &listReq{Addresses: addrs[:1]})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.GetItems()) != 1 {
		t.Fatalf("addresses filter = %v, want one item", resp)
	}
	createdAt := resp.GetItems()[0].GetCreatedAt()
	if !regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`).MatchString(createdAt) {
		t.Errorf("createdAt %q is not ISO 8601 UTC with milliseconds", createdAt)
	}
	want := &interchangev1.ListWhitelistedAddressesResponse{Total: 1, Items: []*interchangev1.WhitelistedAddress{{Address: addrs[0],
		AddressPurpose: []string{"INCOMING", "OUTGOING"}, Status: "ACTIVE", CreatedAt: createdAt, Blockchain: "ETH", BlockchainId: "eth-eth"}}}
	if diff := cmp.Diff(want, resp, protocmp.Transform()); diff != "" {
		t.Errorf("ListWhitelistedAddresses() (-want +got):\n%s", diff)
	}
	tests := []struct {
		limit, offset *int32
		wantItems     int
	}{
		{nil, nil, 10}, // default limit 10
		{proto.Int32(1), nil, 1},
		{proto.Int32(1024), nil, 12},
		{proto.Int32(5), proto.Int32(10), 2},
		{proto.Int32(5), proto.Int32(0), 5},
		{nil, proto.Int32(12), 0},
		{nil, proto.Int32(1 << 30), 0},
	}
	for _, tt := range tests {
		got, err := f.svc.ListWhitelistedAddresses(caller(company), &listReq{PaginationLimit: tt.limit, PaginationOffset: tt.offset})
		if err != nil || len(got.GetItems()) != tt.wantItems || got.GetTotal() != 12 {
			t.Errorf("limit %v offset %v: %d items, total %d, %v; want %d items, total 12", tt.limit, tt.offset,
				len(got.GetItems()), got.GetTotal(), err, tt.wantItems)
		}
	}
	theirs, err := f.svc.ListWhitelistedAddresses(caller(other), &listReq{Addresses: addrs})
	if err != nil || theirs.GetTotal() != 0 || len(theirs.GetItems()) != 0 {
		t.Errorf("ZACME searching ZTEST's addresses = %v, %v; want nothing", theirs, err)
	}
}

func TestSettlementAddressesVerifyFromTheJSONResponse(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	owner := address.Party{ID: company, Name: "Zodia Test Ltd"}
	for _, c := range []string{"btc-btc", "eth-eth", "usdc-eth", "xlm-xlm", "xrp-xrp"} {
		a, err := whitelist.EnsureSettlementAddress(ctx, f.db, owner, "BYBIT", c, f.operKey)
		if err != nil {
			t.Fatal(err)
		}
		again, err := whitelist.EnsureSettlementAddress(ctx, f.db, owner, "BYBIT", c, f.operKey)
		if err != nil || again.Address != a.Address {
			t.Errorf("EnsureSettlementAddress(%s) again = %v, %v; want the same address %s", c, again.Address, err, a.Address)
		}
	}
	if _, err := whitelist.EnsureSettlementAddress(ctx, f.db, address.Party{ID: other}, "BYBIT", "btc-btc", f.operKey); err != nil {
		t.Fatal(err)
	}
	resp, err := f.svc.ListSettlementWalletAddresses(caller(company), &interchangev1.ListSettlementWalletAddressesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	body, err := protojson.MarshalOptions{EmitUnpopulated: true}.Marshal(resp)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Items []map[string]any `json:"items"`
		Total int              `json:"total"`
	}
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	if got.Total != 5 || len(got.Items) != 5 {
		t.Fatalf("endpoint 8 = %s, want ZTEST's 5 addresses", body)
	}
	operPub := base64.StdEncoding.EncodeToString(f.operKey.Public().(ed25519.PublicKey))
	for _, item := range got.Items {
		if err := genaddr.VerifyJSON(item); err != nil {
			t.Errorf("signature of %v does not verify: %v", item["address"], err)
		}
		if item["integrityDetails"].(map[string]any)["operatorPublicKey"] != operPub || item["walletId"] != "ZTEST-ISW-BYBIT" {
			t.Errorf("item %v: want the operator's key and wallet ZTEST-ISW-BYBIT", item)
		}
		item["currencyId"] = "eth-eth-forged"
		if err := genaddr.VerifyJSON(item); !errors.Is(err, genaddr.ErrSignature) {
			t.Errorf("a changed record: %v, want genaddr.ErrSignature", err)
		}
	}
	for _, tt := range []struct {
		give      *interchangev1.ListSettlementWalletAddressesRequest
		wantCode  string
		wantField string
	}{
		{&interchangev1.ListSettlementWalletAddressesRequest{PaginationLimit: proto.Int32(0)}, apperr.CodeLength, "paginationLimit"},
		{&interchangev1.ListSettlementWalletAddressesRequest{PaginationOffset: proto.Int32(-1)}, apperr.CodeLength, "paginationOffset"},
		{&interchangev1.ListSettlementWalletAddressesRequest{Sort: &commonv1.Sort{By: "updatedAt"}}, apperr.CodeFormat, "sort.by"},
		{&interchangev1.ListSettlementWalletAddressesRequest{Sort: &commonv1.Sort{Order: "desc"}}, apperr.CodeFormat, "sort.order"},
		{&interchangev1.ListSettlementWalletAddressesRequest{Currencies: make([]string, 1025)}, apperr.CodeLength, "currencies"},
	} {
		_, err := f.svc.ListSettlementWalletAddresses(caller(company), tt.give)
		wantAppErr(t, err, tt.wantCode, tt.wantField)
	}
	_, err = f.svc.ListSettlementWalletAddresses(context.Background(), &interchangev1.ListSettlementWalletAddressesRequest{})
	wantAppErr(t, err, apperr.CodeUnauthorized, "")
}
