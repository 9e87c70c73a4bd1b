package e2e_test

import (
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zcustody/suite/deploy/local/demo"
	gatewayapp "github.com/zcustody/suite/gateway/app"
)

func TestRateLimited(t *testing.T) {
	t.Parallel()
	url := secondGateway(t, func(c *gatewayapp.Config) { c.CompanyRPS, c.UserRPS, c.RateBurst = 0.01, 0, 2 })
	c := clientAt(url, demo.CompanyZTEST, maker)
	for i := range 2 {
		if r := do(t, c, http.MethodPost, productsPath, []byte(`{}`)); r.status != http.StatusOK {
			t.Fatalf("request %d within the burst: status %d", i+1, r.status)
		}
	}
	r := do(t, c, http.MethodPost, productsPath, []byte(`{}`))
	wantError(t, r, http.StatusTooManyRequests, "ER-429")
	if secs, err := strconv.Atoi(r.header.Get("Retry-After")); err != nil || secs < 1 {
		t.Errorf("Retry-After %q, want a positive number of seconds", r.header.Get("Retry-After"))
	}
	if other := do(t, clientAt(url, demo.CompanyZACME, maker), http.MethodPost, productsPath, []byte(`{}`)); other.status != http.StatusOK {
		t.Errorf("another company throttled by ZTEST's traffic: status %d", other.status)
	}
}

func TestOversizedShapes(t *testing.T) {
	t.Parallel()
	many := `{"ids":["` + strings.Repeat(`W","`, 9999) + `W"]}`
	deep := strings.Repeat(`{"a":`, 40) + "1" + strings.Repeat("}", 40)
	long := `{"names":["` + strings.Repeat("n", 20000) + `"]}`
	for name, body := range map[string]string{"10,000-element filter": many, "deeply nested": deep, "long string": long} {
		t.Run(name, func(t *testing.T) {
			wantError(t, do(t, newClient(demo.CompanyZTEST, maker), http.MethodPost, "/v3/api/trading/wallets", []byte(body)), http.StatusBadRequest, "ER-103")
		})
	}
	t.Run("invalid UTF-8", func(t *testing.T) {
		wantError(t, do(t, newClient(demo.CompanyZTEST, maker), http.MethodPost, "/v3/api/trading/wallets", []byte("{\"names\":[\"\xff\"]}")), http.StatusBadRequest, "ER-100")
	})
}

func TestProductionRefusesDemoKeys(t *testing.T) {
	t.Parallel()
	s := env.stack
	demoCfg := gatewayapp.Config{HTTPAddr: "127.0.0.1:0", MongoURI: s.MongoURI, ServicedeskAddr: s.Services["servicedesk"],
		PrivateKeyFile: filepath.Join(env.dataDir, "keys", "gateway-principal.pem"), SignatureWindow: time.Minute,
		MaxBodyBytes: 1 << 20, RequestTimeout: time.Second, ShutdownTimeout: time.Second, RateBurst: 1, Production: true,
		ReadHeaderTimeout: time.Second, ReadTimeout: time.Second, PublicBaseURL: "https://api.custody.example"}
	if _, err := gatewayapp.New(t.Context(), demoCfg, env.logger); err == nil || !strings.Contains(err.Error(), "demo key") {
		t.Fatalf("a production gateway started with the demo principal key: %v", err)
	}
}

// TestReplayAcrossGateways: a request identifier used at one gateway replica is refused at
// another, since the replicas share their store of identifiers.
func TestReplayAcrossGateways(t *testing.T) {
	t.Parallel()
	other := secondGateway(t, func(*gatewayapp.Config) {})
	req, err := newClient(demo.CompanyZTEST, maker).NewRequest(http.MethodPost, productsPath, []byte(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	replay, err := http.NewRequest(http.MethodPost, other+productsPath, strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	replay.Header = req.Header.Clone()
	replay.Host = req.URL.Host // the URL the client signed, as a balancer would forward it
	if first := send(t, req); first.status != http.StatusOK {
		t.Fatalf("first use: %d %s", first.status, first.body)
	}
	msg := wantError(t, send(t, replay), http.StatusUnauthorized, "ER-401")
	if !strings.Contains(msg, "already used") {
		t.Errorf("replay at the second replica refused with %q, want the reused identifier named", msg)
	}
}

// TestFilterBounds: the bounds the document publishes for each filter are enforced (issue 12
// item 2): the attack run's searches, each of which held the database for seconds, are refused
// at once with ER-103 naming the field; a search at the bounds still answers.
func TestFilterBounds(t *testing.T) {
	t.Parallel()
	values := func(n, size int) string {
		v := make([]string, n)
		for i := range v {
			v[i] = `"` + strings.Repeat("d", size) + `"`
		}
		return "[" + strings.Join(v, ",") + "]"
	}
	tests := []struct {
		name, path, body, wantField string
	}{
		{name: "60 details of 16,000 characters", path: "/v3/api/servicedesk/requests", body: `{"details":` + values(60, 16000) + `}`, wantField: "details"},
		{name: "1,000 details of 900 characters", path: "/v3/api/servicedesk/requests", body: `{"details":` + values(1000, 900) + `}`, wantField: "details"},
		{name: "one detail of 257 characters", path: "/v3/api/servicedesk/requests", body: `{"details":` + values(1, 257) + `}`, wantField: "details[0]"},
		{name: "an id of 129 characters", path: "/v3/api/trading/wallets", body: `{"ids":` + values(1, 129) + `}`, wantField: "ids[0]"},
		{name: "51 wallet names", path: "/v3/api/trading/wallets", body: `{"names":` + values(51, 4) + `}`, wantField: "names"},
		{name: "101 audit-trail ids", path: "/v3/api/servicedesk/audit-trail", body: `{"requestIds":` + values(101, 8) + `}`, wantField: "requestIds"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := do(t, newClient(demo.CompanyZTEST, maker), http.MethodPost, tt.path, []byte(tt.body))
			msg := wantError(t, r, http.StatusBadRequest, "ER-103")
			if !strings.HasPrefix(msg, tt.wantField+" ") {
				t.Errorf("message %q, want it to name %s", msg, tt.wantField)
			}
		})
	}
	t.Run("at the bounds", func(t *testing.T) {
		t.Parallel()
		body := `{"details":` + values(50, 256) + `,"requestIds":` + values(1024, 8) + `,"paginationLimit":1024}`
		r := do(t, newClient(demo.CompanyZTEST, maker), http.MethodPost, "/v3/api/servicedesk/requests", []byte(body))
		if r.status != http.StatusOK {
			t.Errorf("status %d, want 200; body %.300s", r.status, r.body)
		}
	})
}
