package httperr_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/zcustody/suite/gateway/internal/httperr"
	"github.com/zcustody/suite/gateway/internal/routes"
	"github.com/zcustody/suite/platform/apperr"
	commonv1 "github.com/zcustody/suite/proto/common/v1"
)

// leak is what an infrastructure failure may say; it must never reach a client.
const leak = "dial tcp 10.0.0.1:9000: connect: connection refused"

// overTheWire returns err as the gateway's gRPC client sees it: a status rebuilt from the
// wire form, not the service's Go value.
func overTheWire(err error) error {
	return status.FromProto(status.Convert(err).Proto()).Err()
}

func TestDetailedAppErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		give       error
		wantStatus int
		want       httperr.Detail
	}{
		{name: "missing", give: apperr.Missing("name"), wantStatus: http.StatusBadRequest,
			want: httperr.Detail{Code: "ER-101", Message: "Missing mandatory field: name"}},
		{name: "invalid", give: apperr.Invalid(apperr.CodeFormat, "valid", "valid must be true or false"), wantStatus: http.StatusBadRequest,
			want: httperr.Detail{Code: "ER-108", Message: "valid must be true or false"}},
		{name: "not found", give: apperr.NotFound("walletId", "W1"), wantStatus: http.StatusNotFound,
			want: httperr.Detail{Code: "ER-102", Message: "Entity with id: W1 does not exist"}},
		{name: "forbidden", give: apperr.Forbidden("role MAKER required"), wantStatus: http.StatusForbidden,
			want: httperr.Detail{Code: "ER-403", Message: "role MAKER required"}},
		{name: "conflict", give: apperr.Conflict(apperr.CodeExists, "trustline exists"), wantStatus: http.StatusConflict,
			want: httperr.Detail{Code: "ER-104", Message: "trustline exists"}},
		{name: "unauthenticated", give: apperr.Unauthenticated("no principal"), wantStatus: http.StatusUnauthorized,
			want: httperr.Detail{Code: "ER-401", Message: "no principal"}},
		{name: "deactivated as failed precondition", give: &apperr.Error{Status: codes.FailedPrecondition, Code: apperr.CodeDeactivated, Message: "wallet is deactivated"},
			wantStatus: http.StatusConflict, want: httperr.Detail{Code: "ER-113", Message: "wallet is deactivated"}},
		{name: "internal from apperr.ToStatus", give: apperr.ToStatus(errors.New(leak)), wantStatus: http.StatusInternalServerError,
			want: httperr.Detail{Code: "ER-500", Message: "internal error"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			for _, give := range []error{tt.give, overTheWire(tt.give)} {
				gotStatus, got := httperr.Detailed(give)
				if gotStatus != tt.wantStatus {
					t.Errorf("Detailed(%v) status = %d, want %d", give, gotStatus, tt.wantStatus)
				}
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("Detailed(%v) detail mismatch (-want +got):\n%s", give, diff)
				}
			}
		})
	}
}

func TestDetailedPlainStatus(t *testing.T) {
	t.Parallel()
	tests := []struct {
		give       codes.Code
		wantStatus int
		wantCode   string
	}{
		{give: codes.OutOfRange, wantStatus: http.StatusBadRequest, wantCode: "ER-100"},
		{give: codes.Unauthenticated, wantStatus: http.StatusUnauthorized, wantCode: "ER-401"},
		{give: codes.PermissionDenied, wantStatus: http.StatusForbidden, wantCode: "ER-403"},
		{give: codes.NotFound, wantStatus: http.StatusNotFound, wantCode: "ER-102"},
		{give: codes.AlreadyExists, wantStatus: http.StatusConflict, wantCode: "ER-409"},
		{give: codes.Aborted, wantStatus: http.StatusConflict, wantCode: "ER-409"},
		{give: codes.FailedPrecondition, wantStatus: http.StatusConflict, wantCode: "ER-409"},
		{give: codes.ResourceExhausted, wantStatus: http.StatusTooManyRequests, wantCode: "ER-429"},
		{give: codes.Unimplemented, wantStatus: http.StatusNotImplemented, wantCode: "ER-501"},
		{give: codes.Unavailable, wantStatus: http.StatusServiceUnavailable, wantCode: "ER-503"},
		{give: codes.DeadlineExceeded, wantStatus: http.StatusGatewayTimeout, wantCode: "ER-504"},
		{give: codes.Internal, wantStatus: http.StatusInternalServerError, wantCode: "ER-500"},
		{give: codes.Unknown, wantStatus: http.StatusInternalServerError, wantCode: "ER-500"},
		{give: codes.DataLoss, wantStatus: http.StatusInternalServerError, wantCode: "ER-500"},
	}
	for _, tt := range tests {
		t.Run(tt.give.String(), func(t *testing.T) {
			t.Parallel()
			gotStatus, got := httperr.Detailed(status.Error(tt.give, leak))
			if gotStatus != tt.wantStatus || got.Code != tt.wantCode {
				t.Errorf("Detailed(%s) = %d %s, want %d %s", tt.give, gotStatus, got.Code, tt.wantStatus, tt.wantCode)
			}
			if got.Message == "" || strings.Contains(got.Message, "10.0.0.1") || strings.Contains(got.Message, "dial") {
				t.Errorf("Detailed(%s) message = %q, want a generic message", tt.give, got.Message)
			}
		})
	}
}

func TestDetailedDoesNotTrustForeignDetails(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		give       error
		wantStatus int
		wantCode   string
	}{
		{name: "plain Go error", give: errors.New(leak), wantStatus: http.StatusInternalServerError, wantCode: "ER-500"},
		{name: "wrapped Go error", give: fmt.Errorf("call custody: %w", errors.New(leak)), wantStatus: http.StatusInternalServerError, wantCode: "ER-500"},
		{name: "ErrorInfo of another domain", give: withInfo(t, codes.Unavailable, "googleapis.com", "ER-101"), wantStatus: http.StatusServiceUnavailable, wantCode: "ER-503"},
		{name: "ErrorInfo of another domain on internal", give: withInfo(t, codes.Internal, "", "ER-108"), wantStatus: http.StatusInternalServerError, wantCode: "ER-500"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			gotStatus, got := httperr.Detailed(tt.give)
			if gotStatus != tt.wantStatus || got.Code != tt.wantCode {
				t.Errorf("Detailed = %d %s, want %d %s", gotStatus, got.Code, tt.wantStatus, tt.wantCode)
			}
			if strings.Contains(got.Message, "10.0.0.1") {
				t.Errorf("Detailed message = %q leaks the cause", got.Message)
			}
		})
	}
}

func withInfo(t *testing.T, c codes.Code, domain, reason string) error {
	t.Helper()
	st, err := status.New(c, leak).WithDetails(&errdetails.ErrorInfo{Domain: domain, Reason: reason})
	if err != nil {
		t.Fatal(err)
	}
	return st.Err()
}

// decodeError is what grpc-gateway returns when protojson refuses the body.
func decodeError(t *testing.T, body string) error {
	t.Helper()
	err := protojson.Unmarshal([]byte(body), &commonv1.Sort{})
	if err == nil {
		t.Fatalf("protojson accepted %s", body)
	}
	return status.Errorf(codes.InvalidArgument, "%v", err)
}

func TestDetailedDecodeErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		give       error
		wantCode   string
		wantPrefix string
	}{
		{name: "unknown field literal", give: status.Error(codes.InvalidArgument, `proto: (line 1:2): unknown field "foo"`),
			wantCode: "ER-108", wantPrefix: "Unknown field: foo"},
		{name: "unknown field from protojson", give: decodeError(t, `{"by":"id","companyId":"OTHER"}`),
			wantCode: "ER-108", wantPrefix: "Unknown field: companyId"},
		{name: "syntax error from protojson", give: decodeError(t, `{"by":`),
			wantCode: "ER-100", wantPrefix: "Malformed JSON body: "},
		{name: "not an object", give: decodeError(t, `[]`),
			wantCode: "ER-100", wantPrefix: "Malformed JSON body: "},
		{name: "wrong type from protojson", give: decodeError(t, `{"by":1}`),
			wantCode: "ER-108", wantPrefix: "Field has the wrong type: "},
		{name: "path parameter type mismatch", give: status.Error(codes.InvalidArgument, `type mismatch, parameter: valid, error: strconv.ParseBool: parsing "x": invalid syntax`),
			wantCode: "ER-108", wantPrefix: "Field has the wrong type: type mismatch, parameter: valid"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			gotStatus, got := httperr.Detailed(tt.give)
			if gotStatus != http.StatusBadRequest || got.Code != tt.wantCode {
				t.Errorf("Detailed(%v) = %d %s, want 400 %s", tt.give, gotStatus, got.Code, tt.wantCode)
			}
			if !strings.HasPrefix(got.Message, tt.wantPrefix) {
				t.Errorf("Detailed(%v) message = %q, want prefix %q", tt.give, got.Message, tt.wantPrefix)
			}
			if strings.Contains(got.Message, "proto:") {
				t.Errorf("Detailed(%v) message = %q, want the proto: prefix trimmed", tt.give, got.Message)
			}
		})
	}
}

func TestDetailedHTTPStatusError(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		give       *runtime.HTTPStatusError
		wantStatus int
		want       httperr.Detail
	}{
		{name: "status overrides the code's", give: &runtime.HTTPStatusError{HTTPStatus: http.StatusBadGateway, Err: status.Error(codes.Internal, leak)},
			wantStatus: http.StatusBadGateway, want: httperr.Detail{Code: "ER-500", Message: "internal error"}},
		{name: "app error keeps its detail", give: &runtime.HTTPStatusError{HTTPStatus: http.StatusUnprocessableEntity, Err: apperr.Missing("amount")},
			wantStatus: http.StatusUnprocessableEntity, want: httperr.Detail{Code: "ER-101", Message: "Missing mandatory field: amount"}},
		{name: "zero status keeps the code's", give: &runtime.HTTPStatusError{Err: status.Error(codes.Unavailable, leak)},
			wantStatus: http.StatusServiceUnavailable, want: httperr.Detail{Code: "ER-503", Message: "service unavailable, retry later"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			gotStatus, got := httperr.Detailed(tt.give)
			if gotStatus != tt.wantStatus {
				t.Errorf("status = %d, want %d", gotStatus, tt.wantStatus)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("detail mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestStatusOf(t *testing.T) {
	t.Parallel()
	tests := []struct {
		give codes.Code
		want int
	}{
		{give: codes.OK, want: http.StatusOK},
		{give: codes.Canceled, want: http.StatusRequestTimeout},
		{give: codes.InvalidArgument, want: http.StatusBadRequest},
		{give: codes.FailedPrecondition, want: http.StatusConflict},
		{give: codes.Code(99), want: http.StatusInternalServerError},
	}
	for _, tt := range tests {
		t.Run(tt.give.String(), func(t *testing.T) {
			t.Parallel()
			if got := httperr.StatusOf(tt.give); got != tt.want {
				t.Errorf("StatusOf(%s) = %d, want %d", tt.give, got, tt.want)
			}
		})
	}
}

func TestErrorHandler(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		give       error
		wantStatus int
		want       []httperr.Detail
	}{
		{name: "unknown field", give: decodeError(t, `{"foo":1}`), wantStatus: http.StatusBadRequest,
			want: []httperr.Detail{{Code: "ER-108", Message: "Unknown field: foo"}}},
		{name: "not found", give: overTheWire(apperr.NotFound("vaspId", "V")), wantStatus: http.StatusNotFound,
			want: []httperr.Detail{{Code: "ER-102", Message: "Entity with id: V does not exist"}}},
		{name: "unavailable", give: status.Error(codes.Unavailable, leak), wantStatus: http.StatusServiceUnavailable,
			want: []httperr.Detail{{Code: "ER-503", Message: "service unavailable, retry later"}}},
		{name: "overridden status sets the title", give: &runtime.HTTPStatusError{HTTPStatus: http.StatusTeapot, Err: status.Error(codes.Internal, leak)},
			wantStatus: http.StatusTeapot, want: []httperr.Detail{{Code: "ER-500", Message: "internal error"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rec := httptest.NewRecorder()
			req := httptest.NewRequest(http.MethodPost, "/v3/api/trading/wallets", nil)
			httperr.ErrorHandler(context.Background(), nil, nil, rec, req, tt.give)
			if rec.Code != tt.wantStatus {
				t.Errorf("status = %d, want %d", rec.Code, tt.wantStatus)
			}
			b := decode(t, rec)
			if diff := cmp.Diff(tt.want, b.Details); diff != "" {
				t.Errorf("details mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// contractMux is a grpc-gateway mux that serves the contract's routes with the suite's
// routing error handler, as the gateway does.
func contractMux(t *testing.T) *runtime.ServeMux {
	t.Helper()
	table, err := routes.Load()
	if err != nil {
		t.Fatal(err)
	}
	mux := runtime.NewServeMux(runtime.WithRoutingErrorHandler(httperr.RoutingErrorHandler(table.Allowed)))
	for _, r := range table.Routes() {
		if err := mux.HandlePath(r.Method, r.Template, func(w http.ResponseWriter, _ *http.Request, _ map[string]string) {
			w.WriteHeader(http.StatusNoContent)
		}); err != nil {
			t.Fatalf("HandlePath(%s %s): %v", r.Method, r.Template, err)
		}
	}
	return mux
}

func TestRoutingErrorHandler(t *testing.T) {
	t.Parallel()
	mux := contractMux(t)
	tests := []struct {
		name       string
		giveMethod string
		givePath   string
		wantStatus int
		wantAllow  string
		want       []httperr.Detail
	}{
		{name: "GET on a POST endpoint", giveMethod: http.MethodGet, givePath: "/v3/api/servicedesk/products",
			wantStatus: http.StatusMethodNotAllowed, wantAllow: "POST", want: []httperr.Detail{{Code: "ER-204", Message: "Available methods : POST"}}},
		{name: "DELETE on a path with variables", giveMethod: http.MethodDelete, givePath: "/v3/api/compliance/vasps/V/activate/true",
			wantStatus: http.StatusMethodNotAllowed, wantAllow: "POST", want: []httperr.Detail{{Code: "ER-204", Message: "Available methods : POST"}}},
		{name: "POST on the GET endpoint", giveMethod: http.MethodPost, givePath: "/v2/api/core/wallets",
			wantStatus: http.StatusMethodNotAllowed, wantAllow: "GET", want: []httperr.Detail{{Code: "ER-204", Message: "Available methods : GET"}}},
		{name: "unknown path", giveMethod: http.MethodPost, givePath: "/v3/api/nope",
			wantStatus: http.StatusNotFound, want: []httperr.Detail{{Code: "ER-404", Message: "no such path: /v3/api/nope"}}},
		{name: "extra segment", giveMethod: http.MethodPost, givePath: "/v3/api/trading/wallets/x",
			wantStatus: http.StatusNotFound, want: []httperr.Detail{{Code: "ER-404", Message: "no such path: /v3/api/trading/wallets/x"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rec := httptest.NewRecorder()
			mux.ServeHTTP(rec, httptest.NewRequest(tt.giveMethod, tt.givePath, nil))
			if rec.Code != tt.wantStatus {
				t.Fatalf("status = %d, want %d", rec.Code, tt.wantStatus)
			}
			if got := rec.Header().Get("Allow"); got != tt.wantAllow {
				t.Errorf("Allow = %q, want %q", got, tt.wantAllow)
			}
			b := decode(t, rec)
			if diff := cmp.Diff(tt.want, b.Details); diff != "" {
				t.Errorf("details mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRoutingErrorHandlerServesMatchedRoutes(t *testing.T) {
	t.Parallel()
	rec := httptest.NewRecorder()
	contractMux(t).ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/v3/api/servicedesk/products", nil))
	if rec.Code != http.StatusNoContent {
		t.Errorf("status = %d, want the route's 204", rec.Code)
	}
}

func TestRoutingErrorHandlerDirect(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		giveCode   int
		giveAllow  []string
		wantAllow  string
		wantDetail httperr.Detail
	}{
		{name: "several methods", giveCode: http.StatusMethodNotAllowed, giveAllow: []string{"GET", "POST"},
			wantAllow: "GET, POST", wantDetail: httperr.Detail{Code: "ER-204", Message: "Available methods : GET,POST"}},
		{name: "bad request", giveCode: http.StatusBadRequest,
			wantDetail: httperr.Detail{Code: "ER-100", Message: "Bad Request"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := httperr.RoutingErrorHandler(func(string) []string { return tt.giveAllow })
			rec := httptest.NewRecorder()
			h(context.Background(), nil, nil, rec, httptest.NewRequest(http.MethodGet, "/x", nil), tt.giveCode)
			if rec.Code != tt.giveCode {
				t.Errorf("status = %d, want %d", rec.Code, tt.giveCode)
			}
			if got := rec.Header().Get("Allow"); got != tt.wantAllow {
				t.Errorf("Allow = %q, want %q", got, tt.wantAllow)
			}
			b := decode(t, rec)
			if diff := cmp.Diff([]httperr.Detail{tt.wantDetail}, b.Details); diff != "" {
				t.Errorf("details mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
