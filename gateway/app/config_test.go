package app_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zcustody/suite/gateway/app"
)

// TestPublicBaseURL: PUBLIC_BASE_URL lists the scheme://host clients sign (normalised to
// lower case); anything with a path, query or another scheme is refused, and production
// cannot run without one.
func TestPublicBaseURL(t *testing.T) {
	t.Parallel()
	valid := app.Config{SignatureWindow: time.Minute, MaxBodyBytes: 1 << 20, RateBurst: 1, ReadHeaderTimeout: time.Second,
		ReadTimeout: time.Second, RequestTimeout: time.Second, ShutdownTimeout: time.Second}
	for _, tt := range []struct {
		give       string
		production bool
		want       []string
		wantErr    string
	}{
		{give: "https://API.Example.com, http://127.0.0.1:8080", want: []string{"https://api.example.com", "http://127.0.0.1:8080"}},
		{give: "https://api.example.com/", want: []string{"https://api.example.com"}},
		{give: "", want: nil},
		{give: "", production: true, wantErr: "PUBLIC_BASE_URL is required"},
		{give: "https://api.example.com/v3", wantErr: "PUBLIC_BASE_URL"},
		{give: "ftp://api.example.com", wantErr: "PUBLIC_BASE_URL"},
		{give: "api.example.com", wantErr: "PUBLIC_BASE_URL"},
		{give: "https://user@api.example.com", wantErr: "PUBLIC_BASE_URL"},
	} {
		c := valid
		c.PublicBaseURL, c.Production = tt.give, tt.production
		err := c.Validate()
		switch {
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("%q (production %v): %v, want an error naming %s", tt.give, tt.production, err, tt.wantErr)
		case tt.wantErr == "" && err != nil:
			t.Errorf("%q: %v", tt.give, err)
		case tt.wantErr == "":
			if got, _ := c.PublicBases(); !slices.Equal(got, tt.want) {
				t.Errorf("%q: %v, want %v", tt.give, got, tt.want)
			}
		}
	}
}
