package custody

import (
	"slices"
	"sort"

	"github.com/zcustody/suite/services/apperr"
)

// payload is a service-request payload whose values are arrays of strings. A plain string
// stands for a one-element array (the reference guide shows both forms).
type payload map[string][]string

// readPayload checks that raw holds only the allowed keys and that each value is a string or
// an array of strings. Unknown keys answer ER-108 naming the key (mass-assignment guard).
func readPayload(raw map[string]any, allowed ...string) (payload, error) {
	keys := make([]string, 0, len(raw))
	for k := range raw {
		keys = append(keys, k)
	}
	sort.Strings(keys) // report the same key first on every call
	out := payload{}
	for _, k := range keys {
		if !slices.Contains(allowed, k) {
			return nil, apperr.Invalid(apperr.CodeFormat, k, "unknown field: %s", k)
		}
		values, err := stringList(k, raw[k])
		if err != nil {
			return nil, err
		}
		out[k] = values
	}
	return out, nil
}

func stringList(field string, v any) ([]string, error) {
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

// required returns the values of a mandatory field: ER-101 when absent, ER-112 when empty.
func (p payload) required(field string) ([]string, error) {
	values, ok := p[field]
	if !ok || values == nil {
		return nil, apperr.Missing(field)
	}
	if len(values) == 0 {
		return nil, apperr.Invalid(apperr.CodeEmptyList, field, "%s must hold at least one value", field)
	}
	return values, nil
}

// single returns the one value of a mandatory single-valued field.
func (p payload) single(field string) (string, error) {
	values, err := p.required(field)
	if err != nil {
		return "", err
	}
	if len(values) != 1 {
		return "", apperr.Invalid(apperr.CodeLength, field, "%s must hold exactly one value, got %d", field, len(values))
	}
	return values[0], nil
}
