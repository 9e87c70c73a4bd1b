package payload

import (
	"errors"
	"slices"
	"testing"

	"github.com/zcustody/suite/platform/apperr"
)

// wantErr checks err against an ER code and field; code "" wants no error.
func wantErr(t *testing.T, err error, code, field string) {
	t.Helper()
	if code == "" {
		if err != nil {
			t.Fatalf("err = %v, want none", err)
		}
		return
	}
	var ae *apperr.Error
	if !errors.As(err, &ae) || ae.Code != code || ae.Field != field {
		t.Fatalf("err = %v, want %s on %q", err, code, field)
	}
}

func TestCheckKeys(t *testing.T) {
	tests := []struct {
		name      string
		prefix    string
		raw       map[string]any
		code      string
		wantField string
	}{
		{"empty", "", map[string]any{}, "", ""},
		{"only allowed", "", map[string]any{"a": 1, "b": nil}, "", ""},
		{"unknown", "", map[string]any{"a": 1, "x": 1}, apperr.CodeFormat, "x"},
		{"first unknown in sorted order", "", map[string]any{"z": 1, "c": 1, "y": 1}, apperr.CodeFormat, "c"},
		{"prefixed", "addr.", map[string]any{"zip": "1"}, apperr.CodeFormat, "addr.zip"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for range 20 { // map order varies between runs; the answer must not
				wantErr(t, CheckKeys(tt.prefix, tt.raw, "a", "b"), tt.code, tt.wantField)
			}
		})
	}
}

func TestText(t *testing.T) {
	tests := []struct {
		name string
		v    any
		want string
		code string
	}{
		{"string", "x", "x", ""},
		{"empty string", "", "", ""},
		{"one-element array", []any{"x"}, "x", ""},
		{"absent", nil, "", apperr.CodeMissing},
		{"empty array", []any{}, "", apperr.CodeEmptyList},
		{"two elements", []any{"x", "y"}, "", apperr.CodeLength},
		{"second element not a string", []any{"x", 1}, "", apperr.CodeLength},
		{"first element not a string", []any{1, "x"}, "", apperr.CodeFormat},
		{"null element", []any{nil}, "", apperr.CodeFormat},
		{"number", 1.0, "", apperr.CodeFormat},
		{"object", map[string]any{"a": "x"}, "", apperr.CodeFormat},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw := map[string]any{"other": "y"}
			if tt.v != nil {
				raw["f"] = tt.v
			}
			got, err := Text(raw, "f")
			wantErr(t, err, tt.code, "f")
			if got != tt.want {
				t.Errorf("Text = %q, want %q", got, tt.want)
			}
		})
	}
	t.Run("null", func(t *testing.T) {
		_, err := Text(map[string]any{"f": nil}, "f")
		wantErr(t, err, apperr.CodeMissing, "f")
	})
}

func TestStrings(t *testing.T) {
	tests := []struct {
		name string
		v    any
		want []string
		code string
	}{
		{"null", nil, nil, ""},
		{"string", "x", []string{"x"}, ""},
		{"array", []any{"x", "y"}, []string{"x", "y"}, ""},
		{"empty array", []any{}, []string{}, ""},
		{"non-string element", []any{"x", 1}, nil, apperr.CodeFormat},
		{"number", 1.0, nil, apperr.CodeFormat},
		{"bool", true, nil, apperr.CodeFormat},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Strings("f", tt.v)
			wantErr(t, err, tt.code, "f")
			if !slices.Equal(got, tt.want) || (got == nil) != (tt.want == nil) {
				t.Errorf("Strings = %#v, want %#v", got, tt.want)
			}
		})
	}
}
