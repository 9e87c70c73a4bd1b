package inproc

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"testing"

	"github.com/google/uuid"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/zcustody/suite/deploy/bench/internal/data"
	"github.com/zcustody/suite/deploy/local/demo"
	"github.com/zcustody/suite/platform/principal"
	"github.com/zcustody/suite/platform/signing"
	servicedeskv1 "github.com/zcustody/suite/proto/servicedesk/v1"
	tradingv1 "github.com/zcustody/suite/proto/trading/v1"
)

// The gateway benchmarks sign every request before the timer starts (RSA 2048 signing costs
// about 0.7 ms, more than the gateway's work) and send them over keep-alive HTTP; the direct
// benchmarks call the same stub backend over gRPC with a token signed once. Each op includes
// its client's work (HTTP or gRPC), in this process.

// Request paths and bodies, as the suite's scenarios send them.
const (
	ReadPath  = "/v3/api/trading/wallets"
	ReadBody  = `{"venueIds":["` + data.ReadVenue + `"],"paginationLimit":10}`
	WritePath = "/v3/api/servicedesk/create"
)

// WriteBody is a create with a fresh endToEndId.
func WriteBody() []byte {
	return fmt.Appendf(nil, `{"serviceId":%q,"endToEndId":%q,"payload":%s}`, data.WriteService, uuid.NewString(), data.WritePayload)
}

// Client signs as ZTEST for user and sends to the harness's gateway.
func (h *Harness) Client(user string) (*signing.Client, error) {
	pemKey, err := demo.Key("ztest-company.pem")
	if err != nil {
		return nil, err
	}
	key, err := signing.ParsePrivateKey(pemKey)
	if err != nil {
		return nil, err
	}
	return &signing.Client{BaseURL: h.GatewayURL, Company: data.Company, Submitter: user, Key: key,
		HTTP: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}}, nil
}

// Gateway is a benchmark of b.N signed requests through the gateway, from parallel goroutines.
func (h *Harness) Gateway(user, path string, body func() []byte) func(*testing.B) {
	return func(b *testing.B) {
		c, err := h.Client(user)
		if err != nil {
			b.Fatal(err)
		}
		reqs := make(chan *http.Request, b.N)
		for range b.N {
			req, err := c.NewRequest(http.MethodPost, path, body())
			if err != nil {
				b.Fatal(err)
			}
			reqs <- req
		}
		close(reqs)
		b.ReportAllocs()
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if err := send(c.HTTP, <-reqs); err != nil {
					h.failed.Add(1)
					b.Error(err)
					return
				}
			}
		})
	}
}

func send(c *http.Client, req *http.Request) error {
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s %s: status %d", req.Method, req.URL.Path, resp.StatusCode)
	}
	return nil
}

// Direct is a benchmark of b.N calls of call with user's token, from parallel goroutines.
func (h *Harness) Direct(user string, call func(context.Context) error) func(*testing.B) {
	return func(b *testing.B) {
		token, err := h.UserToken(user)
		if err != nil {
			b.Fatal(err)
		}
		ctx := metadata.AppendToOutgoingContext(context.Background(), principal.MetadataKey, token)
		b.ReportAllocs()
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if err := call(ctx); err != nil {
					h.failed.Add(1)
					b.Error(err)
					return
				}
			}
		})
	}
}

// DirectRead is the read's gRPC call to the stub trading service.
func (h *Harness) DirectRead(ctx context.Context) error {
	_, err := h.Trading.SearchWallets(ctx, &tradingv1.SearchWalletsRequest{VenueIds: []string{data.ReadVenue}, PaginationLimit: proto.Int32(10)})
	return err
}

// DirectWrite returns the write's gRPC call to the stub service desk.
func (h *Harness) DirectWrite() (func(context.Context) error, error) {
	payload := &structpb.Struct{}
	if err := protojson.Unmarshal([]byte(data.WritePayload), payload); err != nil {
		return nil, fmt.Errorf("write payload: %w", err)
	}
	return func(ctx context.Context) error {
		_, err := h.Servicedesk.CreateRequest(ctx, &servicedeskv1.CreateRequestRequest{ServiceId: data.WriteService,
			EndToEndId: uuid.NewString(), Payload: payload})
		return err
	}, nil
}

// Result is one benchmark's outcome.
type Result struct {
	Name        string
	NsPerOp     int64
	AllocsPerOp int64
	BytesPerOp  int64
}

// Run starts a harness in dir (emptied first) and runs the read and the write through the
// gateway and directly, each with testing.Benchmark.
func Run(ctx context.Context, dir string) ([]Result, error) {
	if err := os.RemoveAll(dir); err != nil {
		return nil, fmt.Errorf("clear %s: %w", dir, err)
	}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("create %s: %w", dir, err)
	}
	h, err := Start(ctx, dir)
	if err != nil {
		return nil, err
	}
	defer h.Close()
	write, err := h.DirectWrite()
	if err != nil {
		return nil, err
	}
	benches := []struct {
		name string
		fn   func(*testing.B)
	}{
		{"read via gateway", h.Gateway(data.Viewer, ReadPath, func() []byte { return []byte(ReadBody) })},
		{"read direct gRPC", h.Direct(data.Viewer, h.DirectRead)},
		{"write via gateway", h.Gateway(data.Maker, WritePath, WriteBody)},
		{"write direct gRPC", h.Direct(data.Maker, write)},
	}
	var out []Result
	for _, bb := range benches {
		r := testing.Benchmark(bb.fn)
		if r.N == 0 || h.failed.Load() > 0 {
			return nil, fmt.Errorf("in-process benchmark %q failed", bb.name)
		}
		out = append(out, Result{Name: bb.name, NsPerOp: r.NsPerOp(), AllocsPerOp: r.AllocsPerOp(), BytesPerOp: r.AllocedBytesPerOp()})
	}
	return out, nil
}
