package canonical_test

import (
	"encoding/json"
	"testing"

	"github.com/zcustody/suite/platform/canonical"
)

func FuzzFromJSON(f *testing.F) {
	for _, s := range []string{`{"b":1,"a":[1,{"d":"","c":null}]}`, `[]`, `"x"`, `{"k":"<é>"}`, `1.50`, `{"a":{}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		out, err := canonical.FromJSON(in)
		if err != nil {
			return
		}
		if !json.Valid(out) {
			t.Fatalf("FromJSON(%q) = %q, not valid JSON", in, out)
		}
		again, err := canonical.FromJSON(out)
		if err != nil || string(again) != string(out) {
			t.Fatalf("canonical form is not stable: %q → %q → %q (%v)", in, out, again, err)
		}
	})
}
