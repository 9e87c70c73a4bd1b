package scenario

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Call is one operation issued in-process: a gRPC call or a store (driver) operation.
type Call func(ctx context.Context) error

// inProcessURL is the URL of the targets the in-process layers answer; nothing listens there.
const inProcessURL = "http://in-process.invalid/"

// callClient is an *http.Client whose transport runs call in-process instead of sending a
// request: it lets vegeta's attacker (its workers, pacer, clock and metrics) drive a gRPC call
// or a driver operation exactly as it drives the gateway, with nothing added but building
// the small request and response values (about a microsecond, the same for every layer).
func callClient(call Call) *http.Client {
	return &http.Client{Transport: callTransport(call), Timeout: 30 * time.Second}
}

// staticTargets is the targeter of an in-process layer: the target only names the layer.
func staticTargets(name string) func(context.Context, int) vegeta.Targeter {
	return func(context.Context, int) vegeta.Targeter {
		return vegeta.NewStaticTargeter(vegeta.Target{Method: http.MethodPost, URL: inProcessURL + name})
	}
}

type callTransport Call

// RoundTrip runs the call and answers 200, or the HTTP status the gateway would give the
// call's error (429 and 503 stay recognisable as load shedding).
func (c callTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		_ = r.Body.Close()
	}
	code, text := http.StatusOK, "OK"
	if err := c(r.Context()); err != nil {
		code = httpStatus(err)
		text = strings.ReplaceAll(err.Error(), "\n", " ")
	}
	return &http.Response{StatusCode: code, Status: strconv.Itoa(code) + " " + text, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{}, Body: io.NopCloser(strings.NewReader("")), ContentLength: 0, Request: r}, nil
}

func httpStatus(err error) int {
	switch status.Code(err) {
	case codes.ResourceExhausted:
		return http.StatusTooManyRequests
	case codes.Unavailable:
		return http.StatusServiceUnavailable
	case codes.DeadlineExceeded:
		return http.StatusGatewayTimeout
	}
	return http.StatusInternalServerError
}
