package compliance_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc/codes"

	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/services/compliance"
)

// wantErr is the ER code and field a parse must fail with; the zero value wants success.
type wantErr struct{ code, field string }

func checkErr(t *testing.T, err error, want wantErr) {
	t.Helper()
	if want == (wantErr{}) {
		if err != nil {
			t.Fatalf("err = %v, want nil", err)
		}
		return
	}
	var e *apperr.Error
	if !errors.As(err, &e) || e.Status != codes.InvalidArgument {
		t.Fatalf("err = %v, want a 400 %s on %q", err, want.code, want.field)
	}
	if got := (wantErr{e.Code, e.Field}); got != want {
		t.Fatalf("err = %s on %q (%s), want %s on %q", e.Code, e.Field, e.Message, want.code, want.field)
	}
	if !strings.Contains(e.Message, want.field) && want.field != "payload" {
		t.Errorf("message %q does not name the field %s", e.Message, want.field)
	}
}

func arr(values ...string) []any {
	out := make([]any, len(values))
	for i, v := range values {
		out[i] = v
	}
	return out
}

func addr(line1, city, country string) map[string]any {
	return map[string]any{"line1": line1, "city": city, "country": country}
}

// with returns a copy of p with the changes (a nil value removes the key).
func with(p map[string]any, changes map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range p {
		out[k] = v
	}
	for k, v := range changes {
		if v == nil {
			delete(out, k)
			continue
		}
		out[k] = v
	}
	return out
}

func createPayload(changes map[string]any) map[string]any {
	return with(map[string]any{"entityType": arr("CORPORATE"), "beneficiaryName": arr("Acme Supplier GmbH"),
		"registeredAddress": addr("1 Main Street", "Berlin", "DE")}, changes)
}

func TestParseCreate(t *testing.T) {
	t.Parallel()
	berlin := compliance.Address{Line1: "1 Main Street", City: "Berlin", Country: "DE"}
	zurich := compliance.Address{Line1: "Bahnhofstrasse 1", City: "Zürich", Country: "CH"}
	tests := []struct {
		name    string
		give    map[string]any
		want    compliance.NewBeneficiary
		wantErr wantErr
	}{
		{name: "arrays", give: createPayload(nil), want: compliance.NewBeneficiary{EntityType: "CORPORATE", Name: "Acme Supplier GmbH", RegisteredAddress: berlin}},
		{name: "strings and operating address", give: createPayload(map[string]any{"entityType": "INDIVIDUAL", "beneficiaryName": "Jane O'Neil-Müller",
			"operatingAddress": addr("Bahnhofstrasse 1", "Zürich", "CH")}),
			want: compliance.NewBeneficiary{EntityType: "INDIVIDUAL", Name: "Jane O'Neil-Müller", RegisteredAddress: berlin, OperatingAddress: &zurich}},
		{name: "null operating address", give: createPayload(map[string]any{"operatingAddress": nil}), want: compliance.NewBeneficiary{EntityType: "CORPORATE", Name: "Acme Supplier GmbH", RegisteredAddress: berlin}},
		{name: "name of 128", give: createPayload(map[string]any{"beneficiaryName": strings.Repeat("é", 128)}),
			want: compliance.NewBeneficiary{EntityType: "CORPORATE", Name: strings.Repeat("é", 128), RegisteredAddress: berlin}},
		{name: "empty payload", give: map[string]any{}, wantErr: wantErr{apperr.CodeMissing, "entityType"}},
		{name: "missing name", give: createPayload(map[string]any{"beneficiaryName": nil}), wantErr: wantErr{apperr.CodeMissing, "beneficiaryName"}},
		{name: "missing registered address", give: createPayload(map[string]any{"registeredAddress": nil}), wantErr: wantErr{apperr.CodeMissing, "registeredAddress"}},
		{name: "missing line1", give: createPayload(map[string]any{"registeredAddress": map[string]any{"city": "Berlin", "country": "DE"}}), wantErr: wantErr{apperr.CodeMissing, "registeredAddress.line1"}},
		{name: "missing operating country", give: createPayload(map[string]any{"operatingAddress": map[string]any{"line1": "x", "city": "y"}}), wantErr: wantErr{apperr.CodeMissing, "operatingAddress.country"}},
		{name: "entity type unknown", give: createPayload(map[string]any{"entityType": "TRUST"}), wantErr: wantErr{apperr.CodeFormat, "entityType"}},
		{name: "entity type lower case", give: createPayload(map[string]any{"entityType": "individual"}), wantErr: wantErr{apperr.CodeFormat, "entityType"}},
		{name: "entity type a number", give: createPayload(map[string]any{"entityType": 1.0}), wantErr: wantErr{apperr.CodeFormat, "entityType"}},
		{name: "two entity types", give: createPayload(map[string]any{"entityType": arr("INDIVIDUAL", "CORPORATE")}), wantErr: wantErr{apperr.CodeLength, "entityType"}},
		{name: "empty entity type list", give: createPayload(map[string]any{"entityType": arr()}), wantErr: wantErr{apperr.CodeEmptyList, "entityType"}},
		{name: "empty name", give: createPayload(map[string]any{"beneficiaryName": ""}), wantErr: wantErr{apperr.CodeLength, "beneficiaryName"}},
		{name: "name of 129", give: createPayload(map[string]any{"beneficiaryName": strings.Repeat("n", 129)}), wantErr: wantErr{apperr.CodeLength, "beneficiaryName"}},
		{name: "blank name", give: createPayload(map[string]any{"beneficiaryName": "  "}), wantErr: wantErr{apperr.CodeBlank, "beneficiaryName"}},
		{name: "control character in name", give: createPayload(map[string]any{"beneficiaryName": "Acme\nLtd"}), wantErr: wantErr{apperr.CodeFormat, "beneficiaryName"}},
		{name: "name a list of numbers", give: createPayload(map[string]any{"beneficiaryName": []any{1.0}}), wantErr: wantErr{apperr.CodeFormat, "beneficiaryName"}},
		{name: "address a string", give: createPayload(map[string]any{"registeredAddress": "1 Main Street, Berlin"}), wantErr: wantErr{apperr.CodeFormat, "registeredAddress"}},
		{name: "address as the template's key list", give: createPayload(map[string]any{"registeredAddress": arr("line1", "city", "country")}), wantErr: wantErr{apperr.CodeFormat, "registeredAddress"}},
		{name: "unknown address key", give: createPayload(map[string]any{"registeredAddress": with(addr("l", "c", "DE"), map[string]any{"zipCode": "10115"})}), wantErr: wantErr{apperr.CodeFormat, "registeredAddress.zipCode"}},
		{name: "line1 too long", give: createPayload(map[string]any{"registeredAddress": addr(strings.Repeat("l", 129), "Berlin", "DE")}), wantErr: wantErr{apperr.CodeLength, "registeredAddress.line1"}},
		{name: "city too long", give: createPayload(map[string]any{"registeredAddress": addr("l", strings.Repeat("c", 65), "DE")}), wantErr: wantErr{apperr.CodeLength, "registeredAddress.city"}},
		{name: "blank city", give: createPayload(map[string]any{"operatingAddress": addr("l", " ", "DE")}), wantErr: wantErr{apperr.CodeBlank, "operatingAddress.city"}},
		{name: "country lower case", give: createPayload(map[string]any{"registeredAddress": addr("l", "c", "de")}), wantErr: wantErr{apperr.CodeFormat, "registeredAddress.country"}},
		{name: "country alpha-3", give: createPayload(map[string]any{"registeredAddress": addr("l", "c", "DEU")}), wantErr: wantErr{apperr.CodeFormat, "registeredAddress.country"}},
		{name: "country UK is not ISO", give: createPayload(map[string]any{"operatingAddress": addr("l", "c", "UK")}), wantErr: wantErr{apperr.CodeFormat, "operatingAddress.country"}},
		{name: "country a number", give: createPayload(map[string]any{"registeredAddress": map[string]any{"line1": "l", "city": "c", "country": 49.0}}), wantErr: wantErr{apperr.CodeFormat, "registeredAddress.country"}},
		{name: "unknown key", give: createPayload(map[string]any{"legalName": "Acme"}), wantErr: wantErr{apperr.CodeFormat, "legalName"}},
		{name: "beneficiaryId on create", give: createPayload(map[string]any{"beneficiaryId": "BNF-ZTEST-ABCDEFGHIJ"}), wantErr: wantErr{apperr.CodeFormat, "beneficiaryId"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := compliance.ParseCreate(tt.give)
			checkErr(t, err, tt.wantErr)
			if diff := cmp.Diff(tt.want, got); tt.wantErr == (wantErr{}) && diff != "" {
				t.Errorf("ParseCreate() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseUpdate(t *testing.T) {
	t.Parallel()
	name := "New Name Ltd"
	paris := compliance.Address{Line1: "2 Rue X", City: "Paris", Country: "FR"}
	tests := []struct {
		name    string
		give    map[string]any
		want    compliance.Update
		wantErr wantErr
	}{
		{name: "name only", give: map[string]any{"beneficiaryId": arr("BNF-ZTEST-A"), "beneficiaryName": arr(name)}, want: compliance.Update{ID: "BNF-ZTEST-A", Name: &name}},
		{name: "addresses only", give: map[string]any{"beneficiaryId": "BNF-ZTEST-A", "registeredAddress": addr("2 Rue X", "Paris", "FR"), "operatingAddress": addr("2 Rue X", "Paris", "FR")},
			want: compliance.Update{ID: "BNF-ZTEST-A", RegisteredAddress: &paris, OperatingAddress: &paris}},
		{name: "nothing to change", give: map[string]any{"beneficiaryId": "BNF-ZTEST-A"}, wantErr: wantErr{apperr.CodeEmptyList, "payload"}},
		{name: "only nulls", give: map[string]any{"beneficiaryId": "BNF-ZTEST-A", "beneficiaryName": nil}, wantErr: wantErr{apperr.CodeEmptyList, "payload"}},
		{name: "missing id", give: map[string]any{"beneficiaryName": name}, wantErr: wantErr{apperr.CodeMissing, "beneficiaryId"}},
		{name: "blank id", give: map[string]any{"beneficiaryId": " ", "beneficiaryName": name}, wantErr: wantErr{apperr.CodeBlank, "beneficiaryId"}},
		{name: "two ids", give: map[string]any{"beneficiaryId": arr("A", "B"), "beneficiaryName": name}, wantErr: wantErr{apperr.CodeLength, "beneficiaryId"}},
		{name: "name too long", give: map[string]any{"beneficiaryId": "A", "beneficiaryName": strings.Repeat("n", 129)}, wantErr: wantErr{apperr.CodeLength, "beneficiaryName"}},
		{name: "bad country", give: map[string]any{"beneficiaryId": "A", "registeredAddress": addr("l", "c", "ZZ")}, wantErr: wantErr{apperr.CodeFormat, "registeredAddress.country"}},
		{name: "entity type cannot change", give: map[string]any{"beneficiaryId": "A", "entityType": "INDIVIDUAL"}, wantErr: wantErr{apperr.CodeFormat, "entityType"}},
		{name: "status cannot be set", give: map[string]any{"beneficiaryId": "A", "status": "ACTIVE"}, wantErr: wantErr{apperr.CodeFormat, "status"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := compliance.ParseUpdate(tt.give)
			checkErr(t, err, tt.wantErr)
			if diff := cmp.Diff(tt.want, got); tt.wantErr == (wantErr{}) && diff != "" {
				t.Errorf("ParseUpdate() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseDeactivate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		give    map[string]any
		want    string
		wantErr wantErr
	}{
		{name: "array", give: map[string]any{"beneficiaryId": arr("BNF-ZTEST-A")}, want: "BNF-ZTEST-A"},
		{name: "string", give: map[string]any{"beneficiaryId": "BNF-ZTEST-A"}, want: "BNF-ZTEST-A"},
		{name: "missing", give: map[string]any{}, wantErr: wantErr{apperr.CodeMissing, "beneficiaryId"}},
		{name: "empty list", give: map[string]any{"beneficiaryId": arr()}, wantErr: wantErr{apperr.CodeEmptyList, "beneficiaryId"}},
		{name: "blank", give: map[string]any{"beneficiaryId": ""}, wantErr: wantErr{apperr.CodeBlank, "beneficiaryId"}},
		{name: "unknown key", give: map[string]any{"beneficiaryId": "A", "reason": "closed"}, wantErr: wantErr{apperr.CodeFormat, "reason"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := compliance.ParseDeactivate(tt.give)
			checkErr(t, err, tt.wantErr)
			if got != tt.want {
				t.Errorf("ParseDeactivate() = %q, want %q", got, tt.want)
			}
		})
	}
}
