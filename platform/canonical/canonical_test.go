package canonical_test

import (
	"testing"

	"github.com/zcustody/suite/platform/canonical"
)

func TestFromJSON(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, give, want string
	}{
		{"sorted keys, no whitespace", `{ "b": 1, "a": {"d": true, "c": "x"} }`, `{"a":{"c":"x","d":true},"b":1}`},
		{"empty fields left out", `{"a":"","b":null,"c":{},"d":[],"f":{"g":""},"h":0,"i":false}`, `{"h":0,"i":false}`},
		{"array positions kept", `{"e":["","x",null,{"g":""},[]]}`, `{"e":["","x",null,{},[]]}`},
		{"numbers kept as written", `{"n": 1.50, "m": 12345678901234567890}`, `{"m":12345678901234567890,"n":1.50}`},
		{"array order kept", `["b","a",{"z":1,"y":2}]`, `["b","a",{"y":2,"z":1}]`},
		{"escapes", `{"k":"a\"b<\u00e9>"}`, `{"k":"a\"b<é>"}`},
		{"all empty", `{"a":""}`, `null`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := canonical.FromJSON([]byte(tt.give))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("FromJSON(%s) = %s, want %s", tt.give, got, tt.want)
			}
		})
	}
}

func TestFromJSONRejectsInvalid(t *testing.T) {
	t.Parallel()
	for _, give := range []string{`{`, `{"a":1} {"b":2}`, ``, `{"a":1,}`} {
		if _, err := canonical.FromJSON([]byte(give)); err == nil {
			t.Errorf("FromJSON(%q) accepted invalid JSON", give)
		}
	}
}

func TestMarshalMatchesFromJSON(t *testing.T) {
	t.Parallel()
	got, err := canonical.Marshal(map[string]any{"z": []string{"1"}, "a": "", "m": map[string]int{"k": 2}})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"m":{"k":2},"z":["1"]}`; string(got) != want {
		t.Errorf("Marshal() = %s, want %s", got, want)
	}
}
