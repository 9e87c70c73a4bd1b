// Package payload reads service-request payloads: JSON objects decoded into map[string]any
// whose string fields may come as "x" or ["x"] (the catalog templates show arrays).
package payload

import (
	"maps"
	"slices"
	"strings"

	"github.com/zcustody/suite/platform/apperr"
)

// CheckKeys refuses keys outside allowed (mass-assignment guard) with ER-108, naming the
// first in sorted order so the answer is the same on every call; prefix qualifies the keys
// of a nested object ("registeredAddress.").
func CheckKeys(prefix string, raw map[string]any, allowed ...string) error {
	for _, k := range slices.Sorted(maps.Keys(raw)) {
		if !slices.Contains(allowed, k) {
			return apperr.Invalid(apperr.CodeFormat, prefix+k, "unknown field %q; allowed: %s", prefix+k, strings.Join(allowed, ", "))
		}
	}
	return nil
}

// Text returns a mandatory single string given as "x" or ["x"]: ER-101 when absent or null,
// ER-112 for an empty array, ER-108 when not a string (an array's first element included),
// ER-103 for an array of more than one element.
func Text(raw map[string]any, field string) (string, error) {
	switch v := raw[field].(type) {
	case nil:
		return "", apperr.Missing(field)
	case string:
		return v, nil
	case []any:
		if len(v) == 0 {
			return "", apperr.Invalid(apperr.CodeEmptyList, field, "%s must hold one value", field)
		}
		s, ok := v[0].(string)
		if !ok {
			return "", apperr.Invalid(apperr.CodeFormat, field, "%s must be a string", field)
		}
		if len(v) != 1 {
			return "", apperr.Invalid(apperr.CodeLength, field, "%s must hold exactly one value, got %d", field, len(v))
		}
		return s, nil
	}
	return "", apperr.Invalid(apperr.CodeFormat, field, "%s must be a string", field)
}

// Strings returns the strings of v, a string (one element) or an array of strings; nil (the
// field absent or null) gives nil. Any other value answers ER-108.
func Strings(field string, v any) ([]string, error) {
	switch v := v.(type) {
	case nil:
		return nil, nil
	case string:
		return []string{v}, nil
	case []any:
		out := make([]string, 0, len(v))
		for _, e := range v {
			s, ok := e.(string)
			if !ok {
				return nil, apperr.Invalid(apperr.CodeFormat, field, "%s must be an array of strings", field)
			}
			out = append(out, s)
		}
		return out, nil
	}
	return nil, apperr.Invalid(apperr.CodeFormat, field, "%s must be a string or an array of strings", field)
}
