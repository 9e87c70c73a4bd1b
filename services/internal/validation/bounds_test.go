package validation_test

import (
	"testing"

	"buf.build/gen/go/bufbuild/protovalidate/protocolbuffers/go/buf/validate"
	"google.golang.org/genproto/googleapis/api/annotations"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	compliancev1 "github.com/zcustody/suite/proto/compliance/v1"
	custodyv1 "github.com/zcustody/suite/proto/custody/v1"
	interchangev1 "github.com/zcustody/suite/proto/interchange/v1"
	servicedeskv1 "github.com/zcustody/suite/proto/servicedesk/v1"
	tradingv1 "github.com/zcustody/suite/proto/trading/v1"
	"github.com/zcustody/suite/services/internal/page"
)

// publicFiles are the protos of the REST API (the gateway's routes).
var publicFiles = []protoreflect.FileDescriptor{
	servicedeskv1.File_servicedesk_v1_servicedesk_proto,
	tradingv1.File_trading_v1_trading_proto,
	interchangev1.File_interchange_v1_interchange_proto,
	custodyv1.File_custody_v1_custody_proto,
	compliancev1.File_compliance_v1_compliance_proto,
}

// TestEveryRequestFieldIsBounded walks the request message of every REST operation, and every
// message it holds: each string carries a maximum length, each repeated field a maximum count
// (and its strings a maximum length), each pagination limit the page bounds. A field added
// without a bound fails here, before a client can send a megabyte in it (issue 12 item 2). The
// services' own guards (internal/page) hold the same values.
func TestEveryRequestFieldIsBounded(t *testing.T) {
	t.Parallel()
	seen := map[protoreflect.FullName]bool{}
	var walk func(md protoreflect.MessageDescriptor)
	walk = func(md protoreflect.MessageDescriptor) {
		if seen[md.FullName()] || md.FullName().Parent() == "google.protobuf" {
			// Struct payloads are bounded by the gateway's shape limits and each plugin.
			return
		}
		seen[md.FullName()] = true
		for i := range md.Fields().Len() {
			checkField(t, md.Fields().Get(i))
			if m := md.Fields().Get(i).Message(); m != nil {
				walk(m)
			}
		}
	}
	for _, fd := range publicFiles {
		for i := range fd.Services().Len() {
			methods := fd.Services().Get(i).Methods()
			for j := range methods.Len() {
				if proto.HasExtension(methods.Get(j).Options(), annotations.E_Http) {
					walk(methods.Get(j).Input())
				}
			}
		}
	}
	if len(seen) < 23 {
		t.Fatalf("walked %d request messages, want at least one per REST operation", len(seen))
	}
}

func checkField(t *testing.T, f protoreflect.FieldDescriptor) {
	t.Helper()
	rules, _ := proto.GetExtension(f.Options(), validate.E_Field).(*validate.FieldRules)
	name := f.FullName()
	switch {
	case f.Name() == "pagination_limit":
		r := rules.GetInt32()
		if r.GetGte() != 1 || r.GetLte() != page.MaxLimit {
			t.Errorf("%s: bounds %v, want 1..%d", name, r, page.MaxLimit)
		}
	case f.Name() == "pagination_offset":
		if !rules.GetInt32().HasGte() || rules.GetInt32().GetGte() != 0 {
			t.Errorf("%s: want gte 0", name)
		}
	case f.IsList():
		r := rules.GetRepeated()
		if !r.HasMaxItems() || r.GetMaxItems() > page.MaxFilterValues {
			t.Errorf("%s: max_items %d, want a bound of at most %d", name, r.GetMaxItems(), page.MaxFilterValues)
		}
		if f.Kind() == protoreflect.StringKind && !r.GetItems().GetString().HasMaxLen() {
			t.Errorf("%s: its strings have no max_len", name)
		}
	case f.IsMap():
		t.Errorf("%s: a map in a request has no declared bound", name)
	case f.Kind() == protoreflect.StringKind:
		if !rules.GetString().HasMaxLen() {
			t.Errorf("%s: string without max_len", name)
		}
	}
}
