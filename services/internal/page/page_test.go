package page_test

import (
	"errors"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/zcustody/suite/platform/apperr"
	commonv1 "github.com/zcustody/suite/proto/common/v1"
	"github.com/zcustody/suite/services/internal/page"
)

var sortable = []string{"id", "createdAt", "updatedAt"}

func ptr(v int32) *int32 { return &v }

func TestParse(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		giveLimit  *int32
		giveOffset *int32
		giveSort   *commonv1.Sort
		want       page.Page
	}{
		{name: "defaults", want: page.Page{Limit: 10, SortBy: "id"}},
		{name: "smallest limit", giveLimit: ptr(1), want: page.Page{Limit: 1, SortBy: "id"}},
		{name: "largest limit", giveLimit: ptr(1024), want: page.Page{Limit: 1024, SortBy: "id"}},
		{name: "offset", giveLimit: ptr(5), giveOffset: ptr(20), want: page.Page{Limit: 5, Offset: 20, SortBy: "id"}},
		{name: "zero offset", giveOffset: ptr(0), want: page.Page{Limit: 10, SortBy: "id"}},
		{name: "empty sort", giveSort: &commonv1.Sort{}, want: page.Page{Limit: 10, SortBy: "id"}},
		{name: "sort by another key", giveSort: &commonv1.Sort{By: "createdAt"}, want: page.Page{Limit: 10, SortBy: "createdAt"}},
		{name: "ASC", giveSort: &commonv1.Sort{By: "updatedAt", Order: "ASC"}, want: page.Page{Limit: 10, SortBy: "updatedAt"}},
		{name: "DESC", giveSort: &commonv1.Sort{By: "createdAt", Order: "DESC"}, want: page.Page{Limit: 10, SortBy: "createdAt", Desc: true}},
		{name: "DESC on the default key", giveSort: &commonv1.Sort{Order: "DESC"}, want: page.Page{Limit: 10, SortBy: "id", Desc: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := page.Parse(tt.giveLimit, tt.giveOffset, tt.giveSort, sortable...)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Parse mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseRefuses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		giveLimit  *int32
		giveOffset *int32
		giveSort   *commonv1.Sort
		wantCode   string
		wantField  string
	}{
		{name: "zero limit", giveLimit: ptr(0), wantCode: "ER-103", wantField: "paginationLimit"},
		{name: "negative limit", giveLimit: ptr(-1), wantCode: "ER-103", wantField: "paginationLimit"},
		{name: "limit over the maximum", giveLimit: ptr(1025), wantCode: "ER-103", wantField: "paginationLimit"},
		{name: "negative offset", giveOffset: ptr(-1), wantCode: "ER-103", wantField: "paginationOffset"},
		{name: "unknown sort key", giveSort: &commonv1.Sort{By: "balance"}, wantCode: "ER-108", wantField: "sort.by"},
		{name: "sort key case matters", giveSort: &commonv1.Sort{By: "createdat"}, wantCode: "ER-108", wantField: "sort.by"},
		{name: "lower-case desc", giveSort: &commonv1.Sort{Order: "desc"}, wantCode: "ER-108", wantField: "sort.order"},
		{name: "lower-case asc", giveSort: &commonv1.Sort{Order: "asc"}, wantCode: "ER-108", wantField: "sort.order"},
		{name: "other order", giveSort: &commonv1.Sort{By: "id", Order: "RANDOM"}, wantCode: "ER-108", wantField: "sort.order"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := page.Parse(tt.giveLimit, tt.giveOffset, tt.giveSort, sortable...)
			assertInvalid(t, err, tt.wantCode, tt.wantField)
		})
	}
}

func assertInvalid(t *testing.T, err error, wantCode, wantField string) {
	t.Helper()
	var got *apperr.Error
	if !errors.As(err, &got) {
		t.Fatalf("error = %v, want an *apperr.Error", err)
	}
	if got.Code != wantCode || got.Field != wantField || got.Message == "" {
		t.Errorf("error = %s %s %q, want %s %s with a message", got.Code, got.Field, got.Message, wantCode, wantField)
	}
}

func TestFilter(t *testing.T) {
	t.Parallel()
	tooMany := make([]string, page.MaxFilterValues+1)
	for i := range tooMany {
		tooMany[i] = strconv.Itoa(i)
	}
	tests := []struct {
		name        string
		give        []string
		giveAllowed []string
		want        []string
		wantCode    string
	}{
		{name: "absent", give: nil, want: nil},
		{name: "free values", give: []string{"W1", "W2"}, want: []string{"W1", "W2"}},
		{name: "at the maximum", give: tooMany[:page.MaxFilterValues], want: tooMany[:page.MaxFilterValues]},
		{name: "allowed values", give: []string{"TRADING", "CUSTODY"}, giveAllowed: []string{"NETWORK_MGMT", "TRADING", "CUSTODY"},
			want: []string{"TRADING", "CUSTODY"}},
		{name: "over the maximum", give: tooMany, wantCode: "ER-103"},
		{name: "over the maximum with allowed values", give: tooMany, giveAllowed: tooMany, wantCode: "ER-103"},
		{name: "value not allowed", give: []string{"TRADING", "LENDING"}, giveAllowed: []string{"NETWORK_MGMT", "TRADING", "CUSTODY"}, wantCode: "ER-108"},
		{name: "allowed values are case-sensitive", give: []string{"trading"}, giveAllowed: []string{"TRADING"}, wantCode: "ER-108"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := page.Filter("productName", tt.give, tt.giveAllowed...)
			if tt.wantCode != "" {
				assertInvalid(t, err, tt.wantCode, "productName")
				return
			}
			if err != nil {
				t.Fatalf("Filter: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Filter mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
