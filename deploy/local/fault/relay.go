package fault

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
)

// Call is one unary call passing through a Relay.
type Call struct {
	// Method is the full method name, "/pkg.Service/Method".
	Method string
	// Request is the request message in its wire form (decode it with proto.Unmarshal).
	Request []byte
}

// Hook decides the fate of one call: forward sends it to the target and waits for the
// answer, which reaches the caller only once the hook returns nil. A hook may wait before
// forwarding (a slow or hung service), wait after it (the service acted, its answer is late
// or lost), or return an error instead (the caller gets that error; use a gRPC status).
// It must return when ctx ends.
type Hook func(ctx context.Context, call Call, forward func() error) error

// Relay is a transparent gRPC relay for unary calls (every method of the suite is unary):
// point a client at Addr and it reaches the target through the hook.
type Relay struct {
	srv  *grpc.Server
	lis  net.Listener
	conn *grpc.ClientConn

	mu   sync.Mutex
	hook Hook
}

// NewRelay listens on a free port of 127.0.0.1 and relays to target.
func NewRelay(target string) (*Relay, error) {
	conn, err := grpc.NewClient(target, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, fmt.Errorf("relay dial: %w", err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		_ = conn.Close()
		return nil, fmt.Errorf("relay listen: %w", err)
	}
	r := &Relay{lis: lis, conn: conn}
	r.srv = grpc.NewServer(grpc.ForceServerCodec(rawCodec{}), grpc.UnknownServiceHandler(r.handle))
	go func() { _ = r.srv.Serve(lis) }()
	return r, nil
}

// Addr is the relay's address.
func (r *Relay) Addr() string { return r.lis.Addr().String() }

// SetHook sets the hook of the calls that start from now on; nil forwards every call.
func (r *Relay) SetHook(h Hook) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.hook = h
}

// Close stops the relay, cutting the calls in flight.
func (r *Relay) Close() {
	r.srv.Stop()
	_ = r.conn.Close()
}

func (r *Relay) handle(_ any, stream grpc.ServerStream) error {
	method, _ := grpc.MethodFromServerStream(stream)
	var req frame
	if err := stream.RecvMsg(&req); err != nil {
		return err
	}
	ctx := stream.Context()
	md, _ := metadata.FromIncomingContext(ctx)
	out := metadata.MD{}
	for k, v := range md {
		if strings.HasPrefix(k, ":") || strings.HasPrefix(k, "grpc-") || k == "content-type" || k == "user-agent" || k == "te" {
			continue
		}
		out[k] = v
	}
	outCtx := metadata.NewOutgoingContext(ctx, out)
	var resp frame
	var header, trailer metadata.MD
	var upstreamErr error
	forwarded := false
	forward := func() error {
		forwarded = true
		upstreamErr = r.conn.Invoke(outCtx, method, &req, &resp, grpc.ForceCodec(rawCodec{}), grpc.Header(&header), grpc.Trailer(&trailer))
		return upstreamErr
	}
	r.mu.Lock()
	hook := r.hook
	r.mu.Unlock()
	if hook == nil {
		hook = func(_ context.Context, _ Call, forward func() error) error { return forward() }
	}
	if err := hook(ctx, Call{Method: method, Request: req.data}, forward); err != nil && err != upstreamErr {
		return err
	}
	if !forwarded {
		if err := forward(); err != nil {
			return err
		}
	}
	if upstreamErr != nil {
		return upstreamErr
	}
	if len(header) > 0 {
		_ = stream.SetHeader(header)
	}
	stream.SetTrailer(trailer)
	return stream.SendMsg(&resp)
}

// frame is a message in its wire form.
type frame struct{ data []byte }

// rawCodec passes messages through without decoding them.
type rawCodec struct{}

func (rawCodec) Marshal(v any) ([]byte, error) {
	f, ok := v.(*frame)
	if !ok {
		return nil, fmt.Errorf("relay codec: unexpected %T", v)
	}
	return f.data, nil
}

func (rawCodec) Unmarshal(data []byte, v any) error {
	f, ok := v.(*frame)
	if !ok {
		return fmt.Errorf("relay codec: unexpected %T", v)
	}
	f.data = append([]byte(nil), data...)
	return nil
}

func (rawCodec) Name() string { return "proto" }
