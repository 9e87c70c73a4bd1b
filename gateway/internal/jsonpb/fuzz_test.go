package jsonpb_test

import (
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/structpb"

	tradingv1 "github.com/zcustody/suite/proto/trading/v1"
)

// FuzzMarshalMatchesProtojson reads the input as the binary encoding of a wallet page, of the
// kitchen-sink message and of a google.protobuf.Struct, and compares the two marshalers on each
// reading that decodes. Seeds are random messages of those types.
func FuzzMarshalMatchesProtojson(f *testing.F) {
	sink := sinkDescriptor(f)
	fresh := []func() protoreflect.Message{
		func() protoreflect.Message { return (&tradingv1.SearchWalletsResponse{}).ProtoReflect() },
		func() protoreflect.Message { return newSink(sink) },
		func() protoreflect.Message { return (&structpb.Struct{}).ProtoReflect() },
	}
	f.Add(mustWire(f, walletPage(f)))
	fill := newFiller(1)
	for i := range 30 {
		msg := fresh[i%len(fresh)]()
		fill.message(msg, 0)
		if b, err := proto.Marshal(msg.Interface()); err == nil { // invalid UTF-8 does not encode
			f.Add(b)
		}
	}
	m := newMarshaler()
	f.Fuzz(func(t *testing.T, wire []byte) {
		for _, newMsg := range fresh {
			msg := newMsg()
			if decodes(wire, msg.Interface()) {
				assertSame(t, m, msg.Interface())
			}
		}
	})
}

// decodes reports whether wire decodes into msg. proto.Unmarshal's reflective path, the one
// dynamicpb messages take, panics on a map entry whose key comes twice, the second time with the
// wrong wire type (protobuf-go v1.36: unmarshalMap keeps haveKey but loses the key); that input
// is treated as not decoding, it says nothing about the marshalers.
func decodes(wire []byte, msg proto.Message) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	return proto.Unmarshal(wire, msg) == nil
}

func mustWire(tb testing.TB, msg proto.Message) []byte {
	tb.Helper()
	b, err := proto.Marshal(msg)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}
