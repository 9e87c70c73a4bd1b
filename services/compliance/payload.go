package compliance

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/services/internal/payload"
)

// Limits of the beneficiary payloads, in characters.
const (
	MaxNameLen  = 128
	MaxLine1Len = 128
	MaxCityLen  = 64
)

// addressKeys are the keys of an address object, as the catalog's template lists them.
var addressKeys = []string{"line1", "city", "country"}

// ParseCreate reads a 0x0007-004 payload: entityType, beneficiaryName and registeredAddress
// are mandatory, operatingAddress is optional.
func ParseCreate(raw map[string]any) (NewBeneficiary, error) {
	if err := payload.CheckKeys("", raw, "entityType", "beneficiaryName", "registeredAddress", "operatingAddress"); err != nil {
		return NewBeneficiary{}, err
	}
	entityType, err := payload.Text(raw, "entityType")
	if err != nil {
		return NewBeneficiary{}, err
	}
	if entityType != EntityIndividual && entityType != EntityCorporate {
		return NewBeneficiary{}, apperr.Invalid(apperr.CodeFormat, "entityType", "entityType must be %s or %s", EntityIndividual, EntityCorporate)
	}
	name, err := beneficiaryName(raw)
	if err != nil {
		return NewBeneficiary{}, err
	}
	registered, err := address(raw, "registeredAddress")
	if err != nil {
		return NewBeneficiary{}, err
	}
	operating, err := optionalAddress(raw, "operatingAddress")
	if err != nil {
		return NewBeneficiary{}, err
	}
	return NewBeneficiary{EntityType: entityType, Name: name, RegisteredAddress: registered, OperatingAddress: operating}, nil
}

// ParseUpdate reads a 0x0007-005 payload: beneficiaryId and at least one of beneficiaryName,
// registeredAddress and operatingAddress.
func ParseUpdate(raw map[string]any) (Update, error) {
	if err := payload.CheckKeys("", raw, "beneficiaryId", "beneficiaryName", "registeredAddress", "operatingAddress"); err != nil {
		return Update{}, err
	}
	id, err := beneficiaryID(raw)
	if err != nil {
		return Update{}, err
	}
	u := Update{ID: id}
	if present(raw, "beneficiaryName") {
		name, err := beneficiaryName(raw)
		if err != nil {
			return Update{}, err
		}
		u.Name = &name
	}
	if present(raw, "registeredAddress") {
		addr, err := address(raw, "registeredAddress")
		if err != nil {
			return Update{}, err
		}
		u.RegisteredAddress = &addr
	}
	if u.OperatingAddress, err = optionalAddress(raw, "operatingAddress"); err != nil {
		return Update{}, err
	}
	if u.Name == nil && u.RegisteredAddress == nil && u.OperatingAddress == nil {
		return Update{}, apperr.Invalid(apperr.CodeEmptyList, "payload", "payload must change at least one of beneficiaryName, registeredAddress, operatingAddress")
	}
	return u, nil
}

// ParseDeactivate reads a 0x0007-006 payload: one beneficiaryId.
func ParseDeactivate(raw map[string]any) (string, error) {
	if err := payload.CheckKeys("", raw, "beneficiaryId"); err != nil {
		return "", err
	}
	return beneficiaryID(raw)
}

// present reports whether the payload gives field a value (null counts as absent).
func present(raw map[string]any, field string) bool { return raw[field] != nil }

func beneficiaryName(raw map[string]any) (string, error) {
	name, err := payload.Text(raw, "beneficiaryName")
	if err != nil {
		return "", err
	}
	return name, checkText("beneficiaryName", name, MaxNameLen)
}

func beneficiaryID(raw map[string]any) (string, error) {
	id, err := payload.Text(raw, "beneficiaryId")
	if err != nil {
		return "", err
	}
	if strings.TrimSpace(id) == "" {
		return "", apperr.Invalid(apperr.CodeBlank, "beneficiaryId", "beneficiaryId is blank")
	}
	return id, nil
}

// checkText validates free text: 1..max characters, not only spaces, no control characters.
func checkText(field, value string, max int) error {
	if n := utf8.RuneCountInString(value); n < 1 || n > max {
		return apperr.Invalid(apperr.CodeLength, field, "%s must be 1 to %d characters, got %d", field, max, n)
	}
	if strings.TrimSpace(value) == "" {
		return apperr.Invalid(apperr.CodeBlank, field, "%s is blank", field)
	}
	if !utf8.ValidString(value) || strings.ContainsFunc(value, unicode.IsControl) {
		return apperr.Invalid(apperr.CodeFormat, field, "%s must not hold control characters", field)
	}
	return nil
}

// optionalAddress returns the address of field, or nil when the payload gives none.
func optionalAddress(raw map[string]any, field string) (*Address, error) {
	if !present(raw, field) {
		return nil, nil
	}
	addr, err := address(raw, field)
	return &addr, err
}

// address reads a mandatory address object {line1, city, country}.
func address(raw map[string]any, field string) (Address, error) {
	obj, ok := raw[field].(map[string]any)
	switch {
	case raw[field] == nil:
		return Address{}, apperr.Missing(field)
	case !ok:
		return Address{}, apperr.Invalid(apperr.CodeFormat, field, "%s must be an object with line1, city and country", field)
	}
	if err := payload.CheckKeys(field+".", obj, addressKeys...); err != nil {
		return Address{}, err
	}
	var parts [3]string
	for i, key := range addressKeys {
		v, err := payload.Text(obj, key)
		if err != nil {
			return Address{}, qualify(err, field+".")
		}
		parts[i] = v
	}
	a := Address{Line1: parts[0], City: parts[1], Country: parts[2]}
	return a, checkAddress(field, a)
}

func checkAddress(field string, a Address) error {
	if err := checkText(field+".line1", a.Line1, MaxLine1Len); err != nil {
		return err
	}
	if err := checkText(field+".city", a.City, MaxCityLen); err != nil {
		return err
	}
	if !IsCountry(a.Country) {
		return apperr.Invalid(apperr.CodeFormat, field+".country", "%s.country must be an ISO 3166-1 alpha-2 code such as GB, got %q", field, a.Country)
	}
	return nil
}

// qualify prefixes the field of a payload error (and its message) with the enclosing object.
func qualify(err error, prefix string) error {
	e, ok := err.(*apperr.Error)
	if !ok {
		return err
	}
	return &apperr.Error{Status: e.Status, Code: e.Code, Field: prefix + e.Field,
		Message: strings.Replace(e.Message, e.Field, prefix+e.Field, 1)}
}
