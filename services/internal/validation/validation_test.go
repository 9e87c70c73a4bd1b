package validation_test

import (
	"errors"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/zcustody/suite/platform/apperr"
	commonv1 "github.com/zcustody/suite/proto/common/v1"
	interchangev1 "github.com/zcustody/suite/proto/interchange/v1"
	servicedeskv1 "github.com/zcustody/suite/proto/servicedesk/v1"
	"github.com/zcustody/suite/services/internal/validation"
)

func TestCheck(t *testing.T) {
	t.Parallel()
	many := func(n int, v string) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = v
		}
		return out
	}
	tests := []struct {
		name      string
		give      proto.Message
		wantCode  string
		wantField string
	}{
		{name: "within every bound", give: &servicedeskv1.SearchRequestsRequest{Details: many(50, strings.Repeat("d", 256)), PaginationLimit: proto.Int32(1024)}},
		{name: "too many free-text values", give: &servicedeskv1.SearchRequestsRequest{Details: many(51, "d")}, wantCode: apperr.CodeLength, wantField: "details"},
		{name: "a free-text value too long", give: &servicedeskv1.SearchRequestsRequest{Details: []string{"ok", strings.Repeat("d", 257)}}, wantCode: apperr.CodeLength, wantField: "details[1]"},
		{name: "too many ids", give: &servicedeskv1.SearchRequestsRequest{RequestIds: many(1025, "R")}, wantCode: apperr.CodeLength, wantField: "requestIds"},
		{name: "limit zero", give: &servicedeskv1.SearchRequestsRequest{PaginationLimit: proto.Int32(0)}, wantCode: apperr.CodeLength, wantField: "paginationLimit"},
		{name: "limit over a page", give: &servicedeskv1.SearchRequestsRequest{PaginationLimit: proto.Int32(1025)}, wantCode: apperr.CodeLength, wantField: "paginationLimit"},
		{name: "negative offset", give: &servicedeskv1.SearchRequestsRequest{PaginationOffset: proto.Int32(-1)}, wantCode: apperr.CodeLength, wantField: "paginationOffset"},
		{name: "nested message", give: &servicedeskv1.SearchRequestsRequest{Sort: &commonv1.Sort{By: strings.Repeat("x", 65)}}, wantCode: apperr.CodeLength, wantField: "sort.by"},
		{name: "repeated message", give: &interchangev1.CreateSettlementRequest{Settlements: []*interchangev1.Settlement{{}, {Amount: strings.Repeat("1", 65)}}}, wantCode: apperr.CodeLength, wantField: "settlements[1].amount"},
		{name: "destination tag out of range", give: &interchangev1.CreateSettlementRequest{Header: &interchangev1.SettlementHeader{ReceivableAddresses: []*interchangev1.ReceivableAddress{{DestinationTag: 1 << 31}}}}, wantCode: apperr.CodeLength, wantField: "header.receivableAddresses[0].destinationTag"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := validation.Check(tt.give)
			if tt.wantCode == "" {
				if err != nil {
					t.Fatalf("Check = %v, want nil", err)
				}
				return
			}
			var ae *apperr.Error
			if !errors.As(err, &ae) {
				t.Fatalf("Check = %v, want an apperr.Error", err)
			}
			if ae.Code != tt.wantCode || ae.Field != tt.wantField || !strings.HasPrefix(ae.Message, tt.wantField+" ") {
				t.Errorf("Check = %s %s %q, want %s naming %s", ae.Code, ae.Field, ae.Message, tt.wantCode, tt.wantField)
			}
		})
	}
}

func TestCode(t *testing.T) {
	t.Parallel()
	for rule, want := range map[string]string{
		"required":           apperr.CodeMissing,
		"string.max_len":     apperr.CodeLength,
		"string.min_len":     apperr.CodeLength,
		"repeated.max_items": apperr.CodeLength,
		"int32.gte_lte":      apperr.CodeLength,
		"int64.gte":          apperr.CodeLength,
		"string.pattern":     apperr.CodeFormat,
		"string.uuid":        apperr.CodeFormat,
		"enum.defined_only":  apperr.CodeFormat,
		"string.in":          apperr.CodeFormat,
	} {
		if got := validation.Code(rule); got != want {
			t.Errorf("Code(%q) = %s, want %s", rule, got, want)
		}
	}
}
