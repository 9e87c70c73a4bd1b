package jsonpb_test

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"

	// The well-known types the sink refers to, registered for protodesc.
	_ "google.golang.org/protobuf/types/known/anypb"
	_ "google.golang.org/protobuf/types/known/durationpb"
	_ "google.golang.org/protobuf/types/known/emptypb"
	_ "google.golang.org/protobuf/types/known/fieldmaskpb"
	_ "google.golang.org/protobuf/types/known/structpb"
	_ "google.golang.org/protobuf/types/known/timestamppb"
	_ "google.golang.org/protobuf/types/known/wrapperspb"
)

// Field types of the sink, shorter.
const (
	tBool     = descriptorpb.FieldDescriptorProto_TYPE_BOOL
	tString   = descriptorpb.FieldDescriptorProto_TYPE_STRING
	tBytes    = descriptorpb.FieldDescriptorProto_TYPE_BYTES
	tInt32    = descriptorpb.FieldDescriptorProto_TYPE_INT32
	tSint32   = descriptorpb.FieldDescriptorProto_TYPE_SINT32
	tSfixed32 = descriptorpb.FieldDescriptorProto_TYPE_SFIXED32
	tUint32   = descriptorpb.FieldDescriptorProto_TYPE_UINT32
	tFixed32  = descriptorpb.FieldDescriptorProto_TYPE_FIXED32
	tInt64    = descriptorpb.FieldDescriptorProto_TYPE_INT64
	tSint64   = descriptorpb.FieldDescriptorProto_TYPE_SINT64
	tSfixed64 = descriptorpb.FieldDescriptorProto_TYPE_SFIXED64
	tUint64   = descriptorpb.FieldDescriptorProto_TYPE_UINT64
	tFixed64  = descriptorpb.FieldDescriptorProto_TYPE_FIXED64
	tFloat    = descriptorpb.FieldDescriptorProto_TYPE_FLOAT
	tDouble   = descriptorpb.FieldDescriptorProto_TYPE_DOUBLE
	tEnum     = descriptorpb.FieldDescriptorProto_TYPE_ENUM
	tMessage  = descriptorpb.FieldDescriptorProto_TYPE_MESSAGE
)

// sinkDescriptor builds jsonpbtest.Sink, a proto3 message with a field of every kind and shape
// protojson distinguishes (the suite's own protos use few of them): all scalars singular,
// repeated and proto3-optional, maps of every key kind, a oneof, an enum with a negative and an
// aliased value, recursion, every well-known type, and a json_name.
func sinkDescriptor(tb testing.TB) protoreflect.MessageDescriptor {
	tb.Helper()
	s := &descriptorpb.DescriptorProto{Name: proto.String("Sink")}
	// A real oneof first: synthetic ones (proto3 optional) must come after.
	addOneof(s, "choice", []string{"c_text", "c_child", "c_struct", "c_color"}, []descriptorpb.FieldDescriptorProto_Type{tString, tMessage, tMessage, tEnum},
		[]string{"", ".jsonpbtest.Sink", ".google.protobuf.Struct", ".jsonpbtest.Color"})
	scalars := []descriptorpb.FieldDescriptorProto_Type{
		tBool, tString, tBytes, tInt32, tSint32, tSfixed32, tUint32, tFixed32,
		tInt64, tSint64, tSfixed64, tUint64, tFixed64, tFloat, tDouble,
	}
	for _, typ := range scalars {
		name := strings.ToLower(typ.String()[len("TYPE_"):])
		addField(s, "s_"+name, typ, "", false)
		addField(s, "r_"+name, typ, "", true)
		addOptional(s, "o_"+name, typ, "")
		addMap(s, "m_"+name, tString, typ, "")
	}
	for _, key := range []descriptorpb.FieldDescriptorProto_Type{tBool, tInt32, tSint32, tSfixed32, tUint32, tFixed32, tInt64, tSint64, tSfixed64, tUint64, tFixed64} {
		addMap(s, "k_"+strings.ToLower(key.String()[len("TYPE_"):]), key, tString, "")
	}
	messages := map[string]string{
		"color": ".jsonpbtest.Color", "child": ".jsonpbtest.Sink", "struct": ".google.protobuf.Struct",
		"value": ".google.protobuf.Value", "list": ".google.protobuf.ListValue", "time": ".google.protobuf.Timestamp",
		"duration": ".google.protobuf.Duration", "any": ".google.protobuf.Any", "mask": ".google.protobuf.FieldMask",
		"empty": ".google.protobuf.Empty", "null": ".google.protobuf.NullValue", "bool_w": ".google.protobuf.BoolValue",
		"int32_w": ".google.protobuf.Int32Value", "int64_w": ".google.protobuf.Int64Value",
		"uint32_w": ".google.protobuf.UInt32Value", "uint64_w": ".google.protobuf.UInt64Value",
		"float_w": ".google.protobuf.FloatValue", "double_w": ".google.protobuf.DoubleValue",
		"string_w": ".google.protobuf.StringValue", "bytes_w": ".google.protobuf.BytesValue",
	}
	for _, name := range slices.Sorted(maps.Keys(messages)) {
		typ := tMessage
		if name == "color" || name == "null" {
			typ = tEnum
		}
		addField(s, "s_"+name, typ, messages[name], false)
		addField(s, "r_"+name, typ, messages[name], true)
		addMap(s, "m_"+name, tString, typ, messages[name])
	}
	addOptional(s, "o_color", tEnum, ".jsonpbtest.Color")
	addField(s, "renamed", tString, "", false)
	s.Field[len(s.Field)-1].JsonName = proto.String("Renamed-<&>")
	return newFile(tb, s)
}

func newFile(tb testing.TB, s *descriptorpb.DescriptorProto) protoreflect.MessageDescriptor {
	tb.Helper()
	fdp := &descriptorpb.FileDescriptorProto{
		Name: proto.String("jsonpbtest/sink.proto"), Package: proto.String("jsonpbtest"), Syntax: proto.String("proto3"),
		Dependency: []string{
			"google/protobuf/any.proto", "google/protobuf/duration.proto", "google/protobuf/empty.proto",
			"google/protobuf/field_mask.proto", "google/protobuf/struct.proto", "google/protobuf/timestamp.proto",
			"google/protobuf/wrappers.proto",
		},
		MessageType: []*descriptorpb.DescriptorProto{s},
		EnumType: []*descriptorpb.EnumDescriptorProto{{
			Name:    proto.String("Color"),
			Options: &descriptorpb.EnumOptions{AllowAlias: proto.Bool(true)},
			Value: []*descriptorpb.EnumValueDescriptorProto{
				{Name: proto.String("COLOR_UNSPECIFIED"), Number: proto.Int32(0)},
				{Name: proto.String("COLOR_RED"), Number: proto.Int32(1)},
				{Name: proto.String("COLOR_CRIMSON"), Number: proto.Int32(1)},
				{Name: proto.String("COLOR_NEGATIVE"), Number: proto.Int32(-7)},
			},
		}},
	}
	fd, err := protodesc.NewFile(fdp, protoregistry.GlobalFiles)
	if err != nil {
		tb.Fatal(err)
	}
	return fd.Messages().ByName("Sink")
}

func newSink(md protoreflect.MessageDescriptor) protoreflect.Message {
	return dynamicpb.NewMessage(md)
}

func addField(s *descriptorpb.DescriptorProto, name string, typ descriptorpb.FieldDescriptorProto_Type, typeName string, repeated bool) *descriptorpb.FieldDescriptorProto {
	label := descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL
	if repeated {
		label = descriptorpb.FieldDescriptorProto_LABEL_REPEATED
	}
	f := &descriptorpb.FieldDescriptorProto{
		Name: proto.String(name), Number: proto.Int32(int32(len(s.Field) + 1)), Label: label.Enum(), Type: typ.Enum(),
	}
	if typeName != "" {
		f.TypeName = proto.String(typeName)
	}
	s.Field = append(s.Field, f)
	return f
}

func addOptional(s *descriptorpb.DescriptorProto, name string, typ descriptorpb.FieldDescriptorProto_Type, typeName string) {
	f := addField(s, name, typ, typeName, false)
	f.Proto3Optional, f.OneofIndex = proto.Bool(true), proto.Int32(int32(len(s.OneofDecl)))
	s.OneofDecl = append(s.OneofDecl, &descriptorpb.OneofDescriptorProto{Name: proto.String("_" + name)})
}

func addOneof(s *descriptorpb.DescriptorProto, oneof string, names []string, types []descriptorpb.FieldDescriptorProto_Type, typeNames []string) {
	for i, name := range names {
		addField(s, name, types[i], typeNames[i], false).OneofIndex = proto.Int32(int32(len(s.OneofDecl)))
	}
	s.OneofDecl = append(s.OneofDecl, &descriptorpb.OneofDescriptorProto{Name: proto.String(oneof)})
}

// addMap adds map<key, value> name and its entry type, as protoc would.
func addMap(s *descriptorpb.DescriptorProto, name string, key, value descriptorpb.FieldDescriptorProto_Type, valueType string) {
	entry := &descriptorpb.DescriptorProto{
		Name:    proto.String(mapEntryName(name)),
		Options: &descriptorpb.MessageOptions{MapEntry: proto.Bool(true)},
	}
	addField(entry, "key", key, "", false)
	addField(entry, "value", value, valueType, false)
	s.NestedType = append(s.NestedType, entry)
	addField(s, name, tMessage, ".jsonpbtest.Sink."+entry.GetName(), true)
}

// mapEntryName is protoc's name for the entry type of a map field: m_foo_bar → MFooBarEntry.
func mapEntryName(field string) string {
	var b []byte
	upper := true
	for _, c := range []byte(field) {
		switch {
		case c == '_':
			upper = true
		case upper && 'a' <= c && c <= 'z':
			b, upper = append(b, c-'a'+'A'), false
		default:
			b, upper = append(b, c), false
		}
	}
	return string(b) + "Entry"
}
