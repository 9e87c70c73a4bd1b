package jsonpb

import (
	"google.golang.org/protobuf/reflect/protoreflect"
)

// form is how a message type is rendered.
type form uint8

const (
	ordinary     form = iota // a JSON object of its fields
	fallback                 // protojson renders it (Any, Duration, FieldMask, proto2, editions…)
	structWKT                // google.protobuf.Struct: its fields map
	valueWKT                 // google.protobuf.Value: its one set kind
	listWKT                  // google.protobuf.ListValue: its values list
	wrapperWKT               // google.protobuf.*Value wrappers: their value field
	timestampWKT             // google.protobuf.Timestamp: an RFC 3339 string
	emptyWKT                 // google.protobuf.Empty: {}
)

// plan is what the walk needs to know about one message type, worked out once.
type plan struct {
	desc   protoreflect.MessageDescriptor
	form   form
	fields []field // in declaration order, the order protojson writes them
}

// field is one field of an ordinary message, or the field a well-known type is rendered from.
type field struct {
	fd       protoreflect.FieldDescriptor
	name     []byte // the quoted JSON name and its colon
	presence bool   // written only when set: messages, proto3 optional and oneof members
	list     bool
	mapKey   protoreflect.Kind // non-zero for maps
	value    valuePlan         // a single value, an element or a map value
}

// valuePlan renders one singular value.
type valuePlan struct {
	kind protoreflect.Kind
	msg  *plan                              // message kinds
	enum map[protoreflect.EnumNumber][]byte // enum kinds: quoted value names
	null bool                               // google.protobuf.NullValue, always null
}

// wellKnown tells whether protojson renders the message type name in its own way, how, and with
// how many fields.
func wellKnown(name protoreflect.FullName) (f form, fields int, ok bool) {
	switch name {
	case "google.protobuf.Any", "google.protobuf.Duration", "google.protobuf.FieldMask":
		return fallback, -1, true // left to protojson
	case "google.protobuf.Struct":
		return structWKT, 1, true
	case "google.protobuf.Value":
		return valueWKT, 6, true
	case "google.protobuf.ListValue":
		return listWKT, 1, true
	case "google.protobuf.Timestamp":
		return timestampWKT, 2, true
	case "google.protobuf.Empty":
		return emptyWKT, 0, true
	case "google.protobuf.BoolValue", "google.protobuf.Int32Value", "google.protobuf.Int64Value",
		"google.protobuf.UInt32Value", "google.protobuf.UInt64Value", "google.protobuf.FloatValue",
		"google.protobuf.DoubleValue", "google.protobuf.StringValue", "google.protobuf.BytesValue":
		return wrapperWKT, 1, true
	}
	return ordinary, 0, false
}

// plan returns the plan of md, building and caching it and the plans it refers to the first time.
func (m *Marshaler) plan(md protoreflect.MessageDescriptor) *plan {
	if p, ok := m.plans.Load(md.FullName()); ok && p.(*plan).desc == md {
		return p.(*plan)
	}
	built := map[protoreflect.FullName]*plan{}
	p := build(md, built)
	for name, q := range built {
		m.plans.LoadOrStore(name, q)
	}
	return p
}

// build plans md and, recursively, the message types its fields hold; built breaks cycles.
func build(md protoreflect.MessageDescriptor, built map[protoreflect.FullName]*plan) *plan {
	if p, ok := built[md.FullName()]; ok && p.desc == md {
		return p
	}
	p := &plan{desc: md, form: formOf(md)}
	built[md.FullName()] = p
	if p.form == fallback {
		return p
	}
	fds := md.Fields()
	for i := range fds.Len() {
		f, ok := planField(fds.Get(i), built)
		if !ok {
			p.form, p.fields = fallback, nil
			return p
		}
		p.fields = append(p.fields, f)
	}
	return p
}

func formOf(md protoreflect.MessageDescriptor) form {
	if f, n, ok := wellKnown(md.FullName()); ok {
		if md.Fields().Len() != n {
			return fallback // not the shape the walk expects
		}
		return f
	}
	// Only proto3 is planned: proto2 and editions bring required fields, extensions, closed
	// enums and defaults, which protojson handles and the walk does not.
	if md.ParentFile().Syntax() != protoreflect.Proto3 || md.IsMapEntry() {
		return fallback
	}
	return ordinary
}

func planField(fd protoreflect.FieldDescriptor, built map[protoreflect.FullName]*plan) (field, bool) {
	name, ok := appendString(nil, fd.JSONName())
	if !ok {
		return field{}, false
	}
	f := field{
		fd:       fd,
		name:     append(name, ':'),
		presence: fd.HasPresence() || fd.ContainingOneof() != nil,
		list:     fd.IsList(),
	}
	vd := fd
	if fd.IsMap() {
		f.mapKey, vd = fd.MapKey().Kind(), fd.MapValue()
	}
	f.value, ok = planValue(vd, built)
	return f, ok
}

func planValue(fd protoreflect.FieldDescriptor, built map[protoreflect.FullName]*plan) (valuePlan, bool) {
	v := valuePlan{kind: fd.Kind()}
	switch v.kind {
	case protoreflect.MessageKind, protoreflect.GroupKind:
		v.msg = build(fd.Message(), built)
	case protoreflect.EnumKind:
		if fd.Enum().FullName() == "google.protobuf.NullValue" {
			v.null = true
			return v, true
		}
		names, ok := enumNames(fd.Enum())
		v.enum = names
		return v, ok
	}
	return v, true
}

// enumNames quotes the value names of ed. A value carrying options with extensions (a custom
// JSON name, for one) or unknown fields is refused: protojson may render it otherwise.
func enumNames(ed protoreflect.EnumDescriptor) (map[protoreflect.EnumNumber][]byte, bool) {
	vals := ed.Values()
	names := make(map[protoreflect.EnumNumber][]byte, vals.Len())
	for i := range vals.Len() {
		vd := vals.Get(i)
		if !plainOptions(vd.Options()) {
			return nil, false
		}
		if _, dup := names[vd.Number()]; dup {
			continue // an alias: protojson writes the first name of a number
		}
		name, ok := appendString(nil, string(vd.Name()))
		if !ok {
			return nil, false
		}
		names[vd.Number()] = name
	}
	return names, true
}

func plainOptions(opts interface{ ProtoReflect() protoreflect.Message }) bool {
	if opts == nil || !opts.ProtoReflect().IsValid() {
		return true
	}
	om := opts.ProtoReflect()
	plain := len(om.GetUnknown()) == 0
	om.Range(func(fd protoreflect.FieldDescriptor, _ protoreflect.Value) bool {
		plain = !fd.IsExtension()
		return plain
	})
	return plain
}
