package server_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/testing/protocmp"

	commonv1 "github.com/zcustody/suite/proto/common/v1"
	interchangev1 "github.com/zcustody/suite/proto/interchange/v1"
	"github.com/zcustody/suite/services/interchange/settlement"
)

func ptr[T any](v T) *T { return &v }

func TestSearchSettlements(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ids := map[string]string{}
	for i := range 5 {
		rid := fmt.Sprintf("Q-%d", i)
		ids[rid] = f.instruct(t, ztest, trade(rid))
		f.clock.advance(10 * time.Millisecond)
	}
	f.mustAdvance(t, ids["Q-3"], settlement.StatusRejected, settlement.StatusRejected)
	f.instruct(t, zacme, instruction("Q-9", []*interchangev1.Settlement{leg(acmeBTC, "BTC", "BTC", "1")}))
	search := func(req *interchangev1.SearchSettlementsRequest) (int32, []string) {
		t.Helper()
		resp, err := f.svc.SearchSettlements(f.companyCtx(ztest), req)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, it := range resp.GetItems() {
			got = append(got, it.GetSettlementRequestId())
		}
		return resp.GetTotal(), got
	}
	tests := []struct {
		name      string
		give      *interchangev1.SearchSettlementsRequest
		wantTotal int32
		want      []string
	}{
		{"all, by id", &interchangev1.SearchSettlementsRequest{}, 5, []string{"Q-0", "Q-1", "Q-2", "Q-3", "Q-4"}},
		{"page", &interchangev1.SearchSettlementsRequest{PaginationLimit: ptr(int32(2)), PaginationOffset: ptr(int32(1))}, 5, []string{"Q-1", "Q-2"}},
		{"last page", &interchangev1.SearchSettlementsRequest{PaginationLimit: ptr(int32(2)), PaginationOffset: ptr(int32(4))}, 5, []string{"Q-4"}},
		{"past the end", &interchangev1.SearchSettlementsRequest{PaginationOffset: ptr(int32(5))}, 5, nil},
		{"newest first", &interchangev1.SearchSettlementsRequest{Sort: &commonv1.Sort{By: "createdAt", Order: "DESC"}, PaginationLimit: ptr(int32(2))}, 5, []string{"Q-4", "Q-3"}},
		{"status", &interchangev1.SearchSettlementsRequest{Statuses: []string{settlement.StatusRejected}}, 1, []string{"Q-3"}},
		{"tracking id", &interchangev1.SearchSettlementsRequest{SettlementTrackingIds: []string{ids["Q-2"], ids["Q-0"]}}, 2, []string{"Q-0", "Q-2"}},
		{"request id of another company", &interchangev1.SearchSettlementsRequest{SettlementRequestIds: []string{"Q-9"}}, 0, nil},
		{"venue", &interchangev1.SearchSettlementsRequest{VenueIds: []string{"DERIBIT"}}, 0, nil},
	}
	for _, tt := range tests {
		total, got := search(tt.give)
		if total != tt.wantTotal || !cmp.Equal(tt.want, got) {
			t.Errorf("%s: total %d, items %v; want %d, %v", tt.name, total, got, tt.wantTotal, tt.want)
		}
	}
	for name, req := range map[string]*interchangev1.SearchSettlementsRequest{
		"limit 0":        {PaginationLimit: ptr(int32(0))},
		"limit 1025":     {PaginationLimit: ptr(int32(1025))},
		"offset -1":      {PaginationOffset: ptr(int32(-1))},
		"unknown sort":   {Sort: &commonv1.Sort{By: "amount"}},
		"unknown status": {Statuses: []string{"SETTLED"}},
	} {
		if _, err := f.svc.SearchSettlements(f.companyCtx(ztest), req); status.Code(err) != codes.InvalidArgument {
			t.Errorf("%s: %v, want InvalidArgument", name, err)
		}
	}
}

func TestSettlementRecord(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	req := trade("REQ-1")
	id := f.instruct(t, ztest, req)
	resp, err := f.svc.SearchSettlements(f.companyCtx(ztest), &interchangev1.SearchSettlementsRequest{SettlementTrackingIds: []string{id}})
	if err != nil || len(resp.GetItems()) != 1 {
		t.Fatalf("search = %v, %v", resp, err)
	}
	got := resp.GetItems()[0]
	if got.GetStatus() != settlement.StatusReceived || got.GetVenueId() != venue || got.GetCompanyId() != ztest || got.GetCreatedAt() != "2026-11-21T10:00:00.000Z" {
		t.Errorf("record %v", got)
	}
	if diff := cmp.Diff(req.GetSettlements(), got.GetSettlements(), protocmp.Transform()); diff != "" {
		t.Errorf("settlements as stored differ from those submitted (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(req.GetNetSettlements(), got.GetNetSettlements(), protocmp.Transform()); diff != "" {
		t.Errorf("net settlements as stored differ from those submitted (-want +got):\n%s", diff)
	}
	if _, err := f.svc.GetSettlementStatus(f.companyCtx(zacme), &interchangev1.GetSettlementStatusRequest{SettlementRequestId: "REQ-1"}); status.Code(err) != codes.NotFound {
		t.Errorf("ZACME reads ZTEST's status: %v, want NotFound", err)
	}
	if _, err := f.svc.GetSettlementStatus(f.companyCtx(ztest), &interchangev1.GetSettlementStatusRequest{}); status.Code(err) != codes.InvalidArgument {
		t.Errorf("status without an id: %v, want InvalidArgument", err)
	}
	_, err = f.svc.GetSettlementStatus(f.companyCtx(ztest), &interchangev1.GetSettlementStatusRequest{SettlementRequestId: strings.Repeat("R", 65)})
	wantAppErr(t, err, "ER-103", "settlementRequestId")
}
