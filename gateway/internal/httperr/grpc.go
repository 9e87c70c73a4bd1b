package httperr

import (
	"context"
	"net/http"
	"regexp"
	"strings"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/zcustody/suite/platform/apperr"
)

// httpStatus maps gRPC codes to HTTP statuses. It differs from grpc-gateway's default where
// the suite's error model says so: a state conflict (FailedPrecondition) is a 409.
var httpStatus = map[codes.Code]int{
	codes.OK:                 http.StatusOK,
	codes.Canceled:           http.StatusRequestTimeout,
	codes.InvalidArgument:    http.StatusBadRequest,
	codes.OutOfRange:         http.StatusBadRequest,
	codes.NotFound:           http.StatusNotFound,
	codes.AlreadyExists:      http.StatusConflict,
	codes.Aborted:            http.StatusConflict,
	codes.FailedPrecondition: http.StatusConflict,
	codes.PermissionDenied:   http.StatusForbidden,
	codes.Unauthenticated:    http.StatusUnauthorized,
	codes.ResourceExhausted:  http.StatusTooManyRequests,
	codes.Unimplemented:      http.StatusNotImplemented,
	codes.Unavailable:        http.StatusServiceUnavailable,
	codes.DeadlineExceeded:   http.StatusGatewayTimeout,
}

// fallback gives the ER code and the message sent when a status carries no ErrorInfo of ours.
// Messages of infrastructure failures are never passed through: they may name hosts.
var fallback = map[int]Detail{
	http.StatusBadRequest:          {Code: apperr.CodeMalformed, Message: "malformed request"},
	http.StatusUnauthorized:        {Code: apperr.CodeUnauthorized, Message: "authentication failed"},
	http.StatusForbidden:           {Code: apperr.CodeForbidden, Message: "forbidden"},
	http.StatusNotFound:            {Code: apperr.CodeNotFound, Message: "entity does not exist"},
	http.StatusConflict:            {Code: apperr.CodeConflict, Message: "conflict with the current state"},
	http.StatusTooManyRequests:     {Code: apperr.CodeRateLimited, Message: "too many requests"},
	http.StatusNotImplemented:      {Code: apperr.CodeUnimplemented, Message: "this endpoint is not implemented yet"},
	http.StatusServiceUnavailable:  {Code: apperr.CodeUnavailable, Message: "service unavailable, retry later"},
	http.StatusGatewayTimeout:      {Code: apperr.CodeTimeout, Message: "the service did not answer in time"},
	http.StatusRequestTimeout:      {Code: apperr.CodeTimeout, Message: "request canceled"},
	http.StatusInternalServerError: {Code: apperr.CodeInternal, Message: "internal error"},
}

var unknownField = regexp.MustCompile(`unknown field "([^"]+)"`)

// StatusOf returns the HTTP status of a gRPC code.
func StatusOf(c codes.Code) int {
	if s, ok := httpStatus[c]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// Detailed returns the HTTP status and the detail to send for err.
func Detailed(err error) (int, Detail) {
	if he, ok := err.(*runtime.HTTPStatusError); ok {
		st, d := Detailed(he.Err)
		if he.HTTPStatus != 0 {
			st = he.HTTPStatus
		}
		return st, d
	}
	s := status.Convert(err)
	code := StatusOf(s.Code())
	for _, d := range s.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok && info.GetDomain() == apperr.Domain {
			return code, Detail{Code: info.GetReason(), Message: s.Message()}
		}
	}
	if s.Code() == codes.InvalidArgument {
		return code, decodeDetail(s.Message())
	}
	if d, ok := fallback[code]; ok {
		return code, d
	}
	return http.StatusInternalServerError, fallback[http.StatusInternalServerError]
}

// decodeDetail explains a body or path the gateway could not decode.
func decodeDetail(msg string) Detail {
	if strings.Contains(msg, "trailing data after the JSON body") { // jsonpb.ErrTrailingData
		return Detail{Code: apperr.CodeFormat, Message: "The body holds data after its JSON value"}
	}
	if m := unknownField.FindStringSubmatch(msg); m != nil {
		return Detail{Code: apperr.CodeFormat, Message: "Unknown field: " + m[1]}
	}
	if strings.Contains(msg, "type mismatch") || strings.Contains(msg, "invalid value") {
		return Detail{Code: apperr.CodeFormat, Message: "Field has the wrong type: " + trimProto(msg)}
	}
	return Detail{Code: apperr.CodeMalformed, Message: "Malformed JSON body: " + trimProto(msg)}
}

func trimProto(msg string) string {
	return strings.TrimSpace(strings.TrimPrefix(msg, "proto:"))
}

// ErrorHandler is grpc-gateway's error handler: every gRPC or decoding failure in the body.
func ErrorHandler(_ context.Context, _ *runtime.ServeMux, _ runtime.Marshaler, w http.ResponseWriter, _ *http.Request, err error) {
	st, d := Detailed(err)
	Write(w, st, d.Code, d.Message)
}

// RoutingErrorHandler answers unknown paths with 404 and wrong methods with 405, ER-204 and
// an Allow header listing the methods the path serves.
func RoutingErrorHandler(allowed func(path string) []string) runtime.RoutingErrorHandlerFunc {
	return func(_ context.Context, _ *runtime.ServeMux, _ runtime.Marshaler, w http.ResponseWriter, r *http.Request, code int) {
		switch code {
		case http.StatusMethodNotAllowed:
			methods := strings.Join(allowed(r.URL.Path), ",")
			w.Header().Set("Allow", strings.ReplaceAll(methods, ",", ", "))
			Write(w, code, apperr.CodeMethod, "Available methods : "+methods)
		case http.StatusNotFound:
			Write(w, code, apperr.CodePathNotFound, "no such path: "+r.URL.Path)
		default:
			Write(w, code, fallback[http.StatusBadRequest].Code, http.StatusText(code))
		}
	}
}
