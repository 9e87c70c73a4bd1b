// Package page validates the list conventions shared by every search endpoint
// (DESIGN.md §7): paginationLimit 1..1024 (default 10), paginationOffset ≥ 0, sort keys.
package page

import (
	"slices"

	"github.com/zcustody/suite/platform/apperr"
	commonv1 "github.com/zcustody/suite/proto/common/v1"
)

// Bounds of the list conventions.
const (
	DefaultLimit = 10
	MaxLimit     = 1024
	// MaxFilterValues caps the values of one filter array.
	MaxFilterValues = 1024
)

// Page is a validated page request. SortBy is one of the list's sortable keys.
type Page struct {
	Limit  int64
	Offset int64
	SortBy string
	Desc   bool
}

// Parse validates limit, offset and sort against the list's sortable keys (the first is the
// default sort key).
func Parse(limit, offset *int32, sort *commonv1.Sort, sortable ...string) (Page, error) {
	p := Page{Limit: DefaultLimit, SortBy: sortable[0]}
	if limit != nil {
		if *limit < 1 || *limit > MaxLimit {
			return Page{}, apperr.Invalid(apperr.CodeLength, "paginationLimit", "paginationLimit must be between 1 and %d", MaxLimit)
		}
		p.Limit = int64(*limit)
	}
	if offset != nil {
		if *offset < 0 {
			return Page{}, apperr.Invalid(apperr.CodeLength, "paginationOffset", "paginationOffset must be at least 0")
		}
		p.Offset = int64(*offset)
	}
	if sort == nil {
		return p, nil
	}
	if sort.GetBy() != "" {
		if !slices.Contains(sortable, sort.GetBy()) {
			return Page{}, apperr.Invalid(apperr.CodeFormat, "sort.by", "sort.by must be one of %v", sortable)
		}
		p.SortBy = sort.GetBy()
	}
	switch sort.GetOrder() {
	case "", "ASC":
	case "DESC":
		p.Desc = true
	default:
		return Page{}, apperr.Invalid(apperr.CodeFormat, "sort.order", "sort.order must be ASC or DESC")
	}
	return p, nil
}

// Filter checks one filter array: bounded length and, when allowed is given, every value one
// of allowed. It returns the values for chaining.
func Filter(field string, values []string, allowed ...string) ([]string, error) {
	if len(values) > MaxFilterValues {
		return nil, apperr.Invalid(apperr.CodeLength, field, "%s holds more than %d values", field, MaxFilterValues)
	}
	if len(allowed) == 0 {
		return values, nil
	}
	for _, v := range values {
		if !slices.Contains(allowed, v) {
			return nil, apperr.Invalid(apperr.CodeFormat, field, "%s value %q must be one of %v", field, v, allowed)
		}
	}
	return values, nil
}
