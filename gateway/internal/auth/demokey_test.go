package auth_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/zcustody/suite/platform/signing"
	servicedeskv1 "github.com/zcustody/suite/proto/servicedesk/v1"
)

// TestProductionIgnoresDemoCompanyKeys: with RefuseDemoKeys a company whose registered key is
// a published demo key cannot sign in, even with a correct signature.
func TestProductionIgnoresDemoCompanyKeys(t *testing.T) {
	t.Parallel()
	priv, err := os.ReadFile("../../../deploy/local/demo/zacme-company.pem")
	if err != nil {
		t.Fatal(err)
	}
	pub, err := os.ReadFile("../../../deploy/local/demo/zacme-company.pub.pem")
	if err != nil {
		t.Fatal(err)
	}
	key, err := signing.ParsePrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		refuse bool
		want   int
	}{{false, http.StatusNoContent}, {true, http.StatusUnauthorized}} {
		f := newFixture(t)
		f.identity.companies["ZDEMO"] = &servicedeskv1.Company{Id: "ZDEMO", Name: "Demo", Active: true, PublicKeys: []string{string(pub)}}
		f.authn.RefuseDemoKeys = tt.refuse
		c := &signing.Client{BaseURL: base, Company: "ZDEMO", Key: key, Now: func() time.Time { return now }}
		sent, err := c.NewRequest(http.MethodPost, vaspPath, nil)
		if err != nil {
			t.Fatal(err)
		}
		r := httptest.NewRequest(http.MethodPost, base+vaspPath, nil)
		r.Header = sent.Header.Clone()
		rec := httptest.NewRecorder()
		f.handler.ServeHTTP(rec, r)
		if rec.Code != tt.want {
			t.Errorf("RefuseDemoKeys=%v: status %d, want %d", tt.refuse, rec.Code, tt.want)
		}
	}
}
