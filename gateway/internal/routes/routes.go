// Package routes reads the HTTP rules of the public protos (their google.api.http options) so
// the gateway knows, for any request path, which methods it serves (the Allow header of a 405)
// and whether the contract requires submitter-id (the method's openapi.v3.operation declares
// the header required). The protos are the one source of the paths for the gateway's mux, this
// table and the OpenAPI document.
package routes

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	openapiv3 "github.com/google/gnostic/openapiv3"
	"google.golang.org/genproto/googleapis/api/annotations"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/zcustody/suite/platform/signing"
	compliancev1 "github.com/zcustody/suite/proto/compliance/v1"
	custodyv1 "github.com/zcustody/suite/proto/custody/v1"
	eventsv1 "github.com/zcustody/suite/proto/events/v1"
	interchangev1 "github.com/zcustody/suite/proto/interchange/v1"
	servicedeskv1 "github.com/zcustody/suite/proto/servicedesk/v1"
	tradingv1 "github.com/zcustody/suite/proto/trading/v1"
)

// Route is one mapped method and path.
type Route struct {
	Method   string
	Template string
	// Selector is the gRPC method's full name (package.Service.Method).
	Selector string
	// OperationID is the operation's name in the published document.
	OperationID string
	// SubmitterRequired is true where the contract's endpoint sends submitter-id.
	SubmitterRequired bool
	pattern           *regexp.Regexp
}

// Table is the set of routes of the public protos.
type Table struct {
	routes []Route
}

var variable = regexp.MustCompile(`\{[^/}]+\}`)

// Files are the proto files whose services the gateway exposes.
func Files() []protoreflect.FileDescriptor {
	return []protoreflect.FileDescriptor{
		servicedeskv1.File_servicedesk_v1_servicedesk_proto,
		tradingv1.File_trading_v1_trading_proto,
		interchangev1.File_interchange_v1_interchange_proto,
		custodyv1.File_custody_v1_custody_proto,
		compliancev1.File_compliance_v1_compliance_proto,
		eventsv1.File_events_v1_events_proto,
		eventsv1.File_events_v1_webhooks_proto,
	}
}

// Load reads the routes of the public protos.
func Load() (*Table, error) { return FromFiles(Files()...) }

// FromFiles reads the routes of every method of files that has an HTTP rule.
func FromFiles(files ...protoreflect.FileDescriptor) (*Table, error) {
	var rs []Route
	for _, fd := range files {
		for i := range fd.Services().Len() {
			methods := fd.Services().Get(i).Methods()
			for j := range methods.Len() {
				r, ok, err := fromMethod(methods.Get(j))
				if err != nil {
					return nil, err
				}
				if ok {
					rs = append(rs, r)
				}
			}
		}
	}
	return New(rs...)
}

func fromMethod(md protoreflect.MethodDescriptor) (Route, bool, error) {
	rule, _ := proto.GetExtension(md.Options(), annotations.E_Http).(*annotations.HttpRule)
	if rule == nil {
		return Route{}, false, nil
	}
	if len(rule.GetAdditionalBindings()) > 0 {
		return Route{}, false, fmt.Errorf("routes: %s: additional bindings are not supported", md.FullName())
	}
	r := Route{Selector: string(md.FullName())}
	switch p := rule.GetPattern().(type) {
	case *annotations.HttpRule_Get:
		r.Method, r.Template = "GET", p.Get
	case *annotations.HttpRule_Post:
		r.Method, r.Template = "POST", p.Post
	case *annotations.HttpRule_Put:
		r.Method, r.Template = "PUT", p.Put
	case *annotations.HttpRule_Patch:
		r.Method, r.Template = "PATCH", p.Patch
	case *annotations.HttpRule_Delete:
		r.Method, r.Template = "DELETE", p.Delete
	default:
		return Route{}, false, fmt.Errorf("routes: %s: unsupported HTTP pattern", md.FullName())
	}
	if op, _ := proto.GetExtension(md.Options(), openapiv3.E_Operation).(*openapiv3.Operation); op != nil {
		r.OperationID = op.GetOperationId()
		for _, p := range op.GetParameters() {
			if h := p.GetParameter(); h != nil && h.GetIn() == "header" && strings.EqualFold(h.GetName(), signing.HeaderSubmitter) {
				r.SubmitterRequired = h.GetRequired()
			}
		}
	}
	return r, true, nil
}

// New builds a table of routes, sorted by path template then method.
func New(rs ...Route) (*Table, error) {
	if len(rs) == 0 {
		return nil, fmt.Errorf("routes: no routes")
	}
	t := &Table{routes: make([]Route, 0, len(rs))}
	for _, r := range rs {
		if r.Method == "" || !strings.HasPrefix(r.Template, "/") {
			return nil, fmt.Errorf("routes: %s: bad route %q %q", r.Selector, r.Method, r.Template)
		}
		// QuoteMeta escapes the braces; undo that before substituting the variables. A variable
		// may be empty, as grpc-gateway routes it: the service then reports the missing value.
		expr := "^" + variable.ReplaceAllString(strings.NewReplacer(`\{`, "{", `\}`, "}").Replace(regexp.QuoteMeta(r.Template)), "[^/]*") + "$"
		r.pattern = regexp.MustCompile(expr)
		t.routes = append(t.routes, r)
	}
	slices.SortFunc(t.routes, func(a, b Route) int {
		return strings.Compare(a.Template+" "+a.Method, b.Template+" "+b.Method)
	})
	return t, nil
}

// Match returns the route of method and path, if any.
func (t *Table) Match(method, path string) (Route, bool) {
	for _, r := range t.routes {
		if r.Method == method && r.pattern.MatchString(path) {
			return r, true
		}
	}
	return Route{}, false
}

// Allowed returns the methods served on path, sorted.
func (t *Table) Allowed(path string) []string {
	var out []string
	for _, r := range t.routes {
		if r.pattern.MatchString(path) && !slices.Contains(out, r.Method) {
			out = append(out, r.Method)
		}
	}
	slices.Sort(out)
	return out
}

// Routes returns every route.
func (t *Table) Routes() []Route { return slices.Clone(t.routes) }
