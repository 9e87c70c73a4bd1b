package jsonpb

import (
	"encoding/base64"
	"slices"
	"strconv"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// encoder is the walk's state, pooled by the Marshaler. Every method reports false when the
// value has to be rendered by protojson instead; out is then left half-written.
type encoder struct {
	out     []byte
	entries []entry  // map entries being sorted, a stack shared by nested maps
	keys    []string // the same for google.protobuf.Struct keys
}

type entry struct {
	key protoreflect.MapKey
	val protoreflect.Value
}

// top renders msg, with protojson when the walk cannot render it exactly, and reports false
// only when protojson fails too (the caller then reports protojson's error).
func (e *encoder) top(m *Marshaler, msg proto.Message) bool {
	start := len(e.out)
	r := msg.ProtoReflect()
	if r.IsValid() && e.message(m.plan(r.Descriptor()), r) {
		return true
	}
	clear(e.entries)
	clear(e.keys)
	e.out, e.entries, e.keys = e.out[:start], e.entries[:0], e.keys[:0]
	out, err := m.MarshalOptions.MarshalAppend(e.out, msg)
	if err != nil {
		return false
	}
	e.out = out
	return true
}

func (e *encoder) message(p *plan, m protoreflect.Message) bool {
	switch p.form {
	case ordinary:
		return e.object(p, m)
	case structWKT:
		if ok, handled := e.goStruct(m); handled {
			return ok
		}
		return e.mapField(&p.fields[0], m)
	case valueWKT:
		if ok, handled := e.goValue(m); handled {
			return ok
		}
		return e.kind(p, m)
	case listWKT:
		if ok, handled := e.goList(m); handled {
			return ok
		}
		return e.listField(&p.fields[0], m)
	case wrapperWKT:
		return e.value(&p.fields[0].value, m.Get(p.fields[0].fd))
	case timestampWKT:
		return e.timestamp(m.Get(p.fields[0].fd).Int(), m.Get(p.fields[1].fd).Int())
	case emptyWKT:
		e.out = append(e.out, '{', '}')
		return true
	}
	return false
}

// object writes the fields protojson writes with EmitDefaultValues: those with presence when
// set, all others always.
func (e *encoder) object(p *plan, m protoreflect.Message) bool {
	e.out = append(e.out, '{')
	first := true
	for i := range p.fields {
		f := &p.fields[i]
		if f.presence && !m.Has(f.fd) {
			continue
		}
		if !first {
			e.out = append(e.out, ',')
		}
		first = false
		e.out = append(e.out, f.name...)
		if !e.field(f, m) {
			return false
		}
	}
	e.out = append(e.out, '}')
	return true
}

func (e *encoder) field(f *field, m protoreflect.Message) bool {
	switch {
	case f.list:
		return e.listField(f, m)
	case f.mapKey != 0:
		return e.mapField(f, m)
	}
	return e.value(&f.value, m.Get(f.fd))
}

// kind writes the set kind of a google.protobuf.Value; with none set protojson fails.
func (e *encoder) kind(p *plan, m protoreflect.Message) bool {
	fd := m.WhichOneof(p.desc.Oneofs().Get(0))
	if fd == nil {
		return false
	}
	return e.value(&p.fields[fd.Index()].value, m.Get(fd))
}

func (e *encoder) listField(f *field, m protoreflect.Message) bool {
	if !m.Has(f.fd) {
		e.out = append(e.out, '[', ']')
		return true
	}
	l := m.Get(f.fd).List()
	e.out = append(e.out, '[')
	for i := range l.Len() {
		if i > 0 {
			e.out = append(e.out, ',')
		}
		if !e.value(&f.value, l.Get(i)) {
			return false
		}
	}
	e.out = append(e.out, ']')
	return true
}

func (e *encoder) value(v *valuePlan, val protoreflect.Value) bool {
	switch v.kind {
	case protoreflect.StringKind:
		var ok bool
		e.out, ok = appendString(e.out, val.String())
		return ok
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return e.message(v.msg, val.Message())
	case protoreflect.BoolKind:
		e.out = strconv.AppendBool(e.out, val.Bool())
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		e.out = strconv.AppendInt(e.out, val.Int(), 10)
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		e.out = strconv.AppendUint(e.out, val.Uint(), 10)
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		e.out = append(strconv.AppendInt(append(e.out, '"'), val.Int(), 10), '"')
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		e.out = append(strconv.AppendUint(append(e.out, '"'), val.Uint(), 10), '"')
	case protoreflect.FloatKind:
		return e.float(val.Float(), 32)
	case protoreflect.DoubleKind:
		return e.float(val.Float(), 64)
	case protoreflect.BytesKind:
		e.out = append(base64.StdEncoding.AppendEncode(append(e.out, '"'), val.Bytes()), '"')
	case protoreflect.EnumKind:
		e.enum(v, val.Enum())
	default:
		return false
	}
	return true
}

func (e *encoder) float(f float64, bits int) bool {
	var ok bool
	e.out, ok = appendFloat(e.out, f, bits)
	return ok
}

// enum writes the value's name, a number unknown to the enum as a number, NullValue as null.
func (e *encoder) enum(v *valuePlan, n protoreflect.EnumNumber) {
	if v.null {
		e.out = append(e.out, "null"...)
		return
	}
	if name, ok := v.enum[n]; ok {
		e.out = append(e.out, name...)
		return
	}
	e.out = strconv.AppendInt(e.out, int64(n), 10)
}

// mapField writes a map as an object with its keys in protojson's order: numeric for numbers,
// false before true, byte order for strings.
func (e *encoder) mapField(f *field, m protoreflect.Message) bool {
	if !m.Has(f.fd) {
		e.out = append(e.out, '{', '}')
		return true
	}
	start := len(e.entries)
	m.Get(f.fd).Map().Range(func(k protoreflect.MapKey, v protoreflect.Value) bool {
		e.entries = append(e.entries, entry{k, v})
		return true
	})
	end := len(e.entries)
	slices.SortFunc(e.entries[start:end], compareFor(f.mapKey))
	e.out = append(e.out, '{')
	for i := start; i < end; i++ {
		if i > start {
			e.out = append(e.out, ',')
		}
		en := e.entries[i]
		if !e.mapKey(f.mapKey, en.key) || !e.value(&f.value, en.val) {
			return false
		}
	}
	e.out = append(e.out, '}')
	clear(e.entries[start:end])
	e.entries = e.entries[:start]
	return true
}

func (e *encoder) mapKey(kind protoreflect.Kind, k protoreflect.MapKey) bool {
	var ok bool
	if kind == protoreflect.StringKind {
		e.out, ok = appendString(e.out, k.String())
	} else {
		e.out, ok = append(e.out, '"'), true
		e.out = append(append(e.out, k.String()...), '"')
	}
	e.out = append(e.out, ':')
	return ok
}
