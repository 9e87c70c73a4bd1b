package jsonpb_test

import (
	"hash/fnv"
	"testing"

	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/zcustody/suite/gateway/internal/jsonpb"

	// The suite's protos, registered in protoregistry.
	_ "github.com/zcustody/suite/proto/compliance/v1"
	_ "github.com/zcustody/suite/proto/custody/v1"
	_ "github.com/zcustody/suite/proto/interchange/v1"
	_ "github.com/zcustody/suite/proto/plugin/v1"
	_ "github.com/zcustody/suite/proto/servicedesk/v1"
	_ "github.com/zcustody/suite/proto/trading/v1"
)

// gatewayServices are the services the gateway serves over HTTP (gateway/app).
func gatewayServices() []protoreflect.FullName {
	return []protoreflect.FullName{
		"servicedesk.v1.ServicedeskService", "trading.v1.TradingService", "interchange.v1.InterchangeService",
		"custody.v1.CustodyService", "compliance.v1.ComplianceService",
	}
}

// suitePackages are the proto packages of the suite.
func suitePackages() []protoreflect.FullName {
	return []protoreflect.FullName{
		"common.v1", "compliance.v1", "custody.v1", "interchange.v1", "plugin.v1", "servicedesk.v1", "trading.v1",
	}
}

// responseTypes are the output types of every method of the gateway's services.
func responseTypes(tb testing.TB) []protoreflect.MessageType {
	tb.Helper()
	var types []protoreflect.MessageType
	for _, name := range gatewayServices() {
		d, err := protoregistry.GlobalFiles.FindDescriptorByName(name)
		if err != nil {
			tb.Fatal(err)
		}
		methods := d.(protoreflect.ServiceDescriptor).Methods()
		for i := range methods.Len() {
			types = append(types, messageType(tb, methods.Get(i).Output()))
		}
	}
	return types
}

// suiteTypes are all message types of the suite's packages, nested ones included.
func suiteTypes(tb testing.TB) []protoreflect.MessageType {
	tb.Helper()
	var types []protoreflect.MessageType
	var walk func(protoreflect.MessageDescriptors)
	walk = func(mds protoreflect.MessageDescriptors) {
		for i := range mds.Len() {
			if md := mds.Get(i); !md.IsMapEntry() {
				types = append(types, messageType(tb, md))
				walk(md.Messages())
			}
		}
	}
	for _, pkg := range suitePackages() {
		protoregistry.GlobalFiles.RangeFilesByPackage(pkg, func(fd protoreflect.FileDescriptor) bool {
			walk(fd.Messages())
			return true
		})
	}
	return types
}

func messageType(tb testing.TB, md protoreflect.MessageDescriptor) protoreflect.MessageType {
	tb.Helper()
	mt, err := protoregistry.GlobalTypes.FindMessageByName(md.FullName())
	if err != nil {
		tb.Fatal(err)
	}
	return mt
}

func TestMatchesProtojsonForEveryResponse(t *testing.T) {
	t.Parallel()
	types := responseTypes(t)
	if len(types) < len(gatewayServices()) {
		t.Fatalf("%d response types found for %d services", len(types), len(gatewayServices()))
	}
	m := newMarshaler()
	for _, mt := range types {
		t.Run(string(mt.Descriptor().FullName()), func(t *testing.T) {
			t.Parallel()
			matchRandom(t, m, mt.New, 500)
		})
	}
}

func TestMatchesProtojsonForEverySuiteMessage(t *testing.T) {
	t.Parallel()
	types := suiteTypes(t)
	if len(types) < 100 {
		t.Fatalf("only %d message types found in the suite's packages", len(types))
	}
	m := newMarshaler()
	for _, mt := range types {
		t.Run(string(mt.Descriptor().FullName()), func(t *testing.T) {
			t.Parallel()
			assertSame(t, m, mt.Zero().Interface()) // a typed nil
			matchRandom(t, m, mt.New, 100)
		})
	}
}

func TestMatchesProtojsonForEveryKind(t *testing.T) {
	t.Parallel()
	md := sinkDescriptor(t)
	matchRandom(t, newMarshaler(), func() protoreflect.Message { return newSink(md) }, 3000)
}

// matchRandom compares the two marshalers on an empty message and n random ones from fresh.
// The seed is the test's name, so a failure repeats.
func matchRandom(t *testing.T, m *jsonpb.Marshaler, fresh func() protoreflect.Message, n int) {
	t.Helper()
	h := fnv.New64a()
	h.Write([]byte(t.Name()))
	f := newFiller(h.Sum64())
	fast := 0
	for i := range n + 1 {
		msg := fresh()
		if i > 0 {
			f.message(msg, 0)
		}
		assertSame(t, m, msg.Interface())
		if m.Fast(msg.Interface()) {
			fast++
		}
	}
	t.Logf("%d of %d rendered without protojson", fast, n+1)
}
