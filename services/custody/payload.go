package custody

import (
	"maps"
	"slices"

	"github.com/zcustody/suite/platform/apperr"
	reqpayload "github.com/zcustody/suite/services/internal/payload"
)

// payload is a service-request payload whose values are arrays of strings. A plain string
// stands for a one-element array (the reference guide shows both forms).
type payload map[string][]string

// readPayload checks that raw holds only the allowed keys and that each value is a string or
// an array of strings. Unknown keys answer ER-108 naming the key (mass-assignment guard).
// Keys are read in sorted order and the first bad one answers: a value of the wrong type
// before the first unknown key, else that key (which CheckKeys names).
func readPayload(raw map[string]any, allowed ...string) (payload, error) {
	out := payload{}
	for _, k := range slices.Sorted(maps.Keys(raw)) {
		if !slices.Contains(allowed, k) {
			break
		}
		values, err := reqpayload.Strings(k, raw[k])
		if err != nil {
			return nil, err
		}
		out[k] = values
	}
	if err := reqpayload.CheckKeys("", raw, allowed...); err != nil {
		return nil, err
	}
	return out, nil
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
