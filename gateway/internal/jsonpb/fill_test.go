package jsonpb_test

import (
	"math"
	"math/rand/v2"

	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// maxDepth bounds how deep the filler nests messages.
const maxDepth = 4

// filler sets random fields of a message to values chosen for the edges of JSON rendering.
// Now and then (one time in rare) it picks a value the fast path leaves to protojson: a NaN or
// infinite float, invalid UTF-8 (refused), an out-of-range timestamp (refused), a Value with no
// kind (refused), an Any, Duration or FieldMask; so that most messages still take the fast path.
type filler struct {
	r *rand.Rand
}

// rare is the odds of a value the fast path leaves to protojson.
const rare = 400

func newFiller(seed uint64) filler {
	return filler{r: rand.New(rand.NewPCG(seed, 1))}
}

func (f filler) message(m protoreflect.Message, depth int) {
	switch m.Descriptor().FullName() {
	case "google.protobuf.Value":
		f.value(m, depth)
		return
	case "google.protobuf.Timestamp":
		f.timestamp(m)
		return
	case "google.protobuf.Any":
		f.any(m)
		return
	}
	fds := m.Descriptor().Fields()
	for i := range fds.Len() {
		fd := fds.Get(i)
		// Sparser deeper down, or a message holding itself grows without bound.
		if f.r.IntN(10*(3*depth*depth+1)) < 6 && (!leftToProtojson(fd) || f.r.IntN(rare) == 0) {
			f.field(m, fd, depth)
		}
	}
}

func leftToProtojson(fd protoreflect.FieldDescriptor) bool {
	if fd.IsMap() {
		fd = fd.MapValue()
	}
	if fd.Message() == nil {
		return false
	}
	switch fd.Message().FullName() {
	case "google.protobuf.Any", "google.protobuf.Duration", "google.protobuf.FieldMask":
		return true
	}
	return false
}

func (f filler) field(m protoreflect.Message, fd protoreflect.FieldDescriptor, depth int) {
	if depth >= maxDepth && isMessage(fd) {
		return
	}
	switch {
	case fd.IsList():
		l := m.Mutable(fd).List()
		for range f.r.IntN(4) {
			l.Append(f.single(fd, l.NewElement, depth))
		}
	case fd.IsMap():
		mp := m.Mutable(fd).Map()
		for range f.r.IntN(4) {
			mp.Set(f.scalar(fd.MapKey()).MapKey(), f.single(fd.MapValue(), mp.NewValue, depth))
		}
	default:
		m.Set(fd, f.single(fd, func() protoreflect.Value { return m.NewField(fd) }, depth))
	}
}

func isMessage(fd protoreflect.FieldDescriptor) bool {
	if fd.IsMap() {
		fd = fd.MapValue()
	}
	return fd.Message() != nil
}

// single is a value for one element of fd; fresh makes an empty message for message kinds.
func (f filler) single(fd protoreflect.FieldDescriptor, fresh func() protoreflect.Value, depth int) protoreflect.Value {
	if fd.Message() == nil {
		return f.scalar(fd)
	}
	v := fresh()
	f.message(v.Message(), depth+1)
	return v
}

func (f filler) scalar(fd protoreflect.FieldDescriptor) protoreflect.Value {
	switch fd.Kind() {
	case protoreflect.BoolKind:
		return protoreflect.ValueOfBool(f.r.IntN(2) == 0)
	case protoreflect.StringKind:
		return protoreflect.ValueOfString(f.text())
	case protoreflect.BytesKind:
		return protoreflect.ValueOfBytes([]byte(pick(f, texts())))
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return protoreflect.ValueOfInt32(int32(f.integer()))
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return protoreflect.ValueOfUint32(uint32(f.integer()))
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return protoreflect.ValueOfInt64(f.integer())
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return protoreflect.ValueOfUint64(uint64(f.integer()))
	case protoreflect.FloatKind:
		return protoreflect.ValueOfFloat32(f.float32())
	case protoreflect.DoubleKind:
		return protoreflect.ValueOfFloat64(f.float())
	case protoreflect.EnumKind:
		return protoreflect.ValueOfEnum(protoreflect.EnumNumber(pick(f, []int64{0, 0, 1, 2, -7, 99, math.MaxInt32})))
	}
	panic("unexpected kind " + fd.Kind().String())
}

// texts are strings with characters JSON escapes, HTML characters protojson leaves alone,
// multi-byte and astral runes, and U+FFFD written out.
func texts() []string {
	return []string{
		"", "", "a", "ZTEST-TW-BN00000000", "api-maker@ztest.example", "0.00", "héllo wörld", "日本語",
		"emoji 😀 🏦", "\x00", "\x01\x1f\x7f", "tab\tnew\nline\rret\bback\fform", `"quoted" \ back\slash /`,
		"<script>alert('x')</script> & more", "\u2028\u2029", "\ufffd", "a\u00a0b", "{\"not\":\"json\"}",
		"\U0010FFFF",
	}
}

// text is one of texts, now and then with invalid UTF-8, which protojson refuses.
func (f filler) text() string {
	if f.r.IntN(rare) == 0 {
		return "bad \xff utf-8"
	}
	return pick(f, texts())
}

func (f filler) integer() int64 {
	if f.r.IntN(4) == 0 {
		return f.r.Int64() - f.r.Int64()
	}
	return pick(f, []int64{0, 1, -1, 42, -42, math.MaxInt32, math.MinInt32, math.MaxUint32, 1<<53 + 1, math.MaxInt64, math.MinInt64})
}

func (f filler) float() float64 {
	if f.r.IntN(rare) == 0 {
		return pick(f, []float64{math.NaN(), math.Inf(1), math.Inf(-1)})
	}
	if f.r.IntN(4) == 0 {
		return math.Float64frombits(f.r.Uint64() &^ (1 << 62)) // any sign, mantissa and exponent but the top
	}
	return pick(f, []float64{
		0, math.Copysign(0, -1), 0.1, -0.1, 1, -1.5, 0.3, 1e20, 1e21, -1e21, 123456789012345678, 1e-6, 9.99e-7, 1e-7,
		1.5e-7, 1e100, 5e-324, math.MaxFloat64, math.SmallestNonzeroFloat32, math.MaxFloat32, 3.4028235e38, 2.5e-8,
		656500.00, 1313000.5, 1 << 53, 1<<53 + 2, 100, 1e6,
	})
}

func (f filler) float32() float32 {
	if f.r.IntN(rare) == 0 {
		return pick(f, []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))})
	}
	if f.r.IntN(4) == 0 {
		return math.Float32frombits(f.r.Uint32() &^ (1 << 30)) // any sign, mantissa and exponent but the top
	}
	return pick(f, []float32{
		0, float32(math.Copysign(0, -1)), 0.1, -0.1, 1, 0.3, 1e20, 1e21, -1e21, 1e-6, 9.99e-7, 1e-7, 16777217,
		math.MaxFloat32, math.SmallestNonzeroFloat32, 1e-38, 656500.00, 123456.79,
	})
}

func (f filler) value(m protoreflect.Message, depth int) {
	fds := m.Descriptor().Fields()
	if f.r.IntN(rare) == 0 {
		return // no kind: protojson refuses
	}
	switch n := f.r.IntN(60); {
	case n < 10:
		m.Set(fds.ByName("null_value"), protoreflect.ValueOfEnum(0))
	case n < 20:
		m.Set(fds.ByName("number_value"), protoreflect.ValueOfFloat64(f.float()))
	case n < 30:
		m.Set(fds.ByName("string_value"), protoreflect.ValueOfString(f.text()))
	case n < 40:
		m.Set(fds.ByName("bool_value"), protoreflect.ValueOfBool(n%2 == 0))
	case n < 50 && depth < maxDepth:
		f.field(m, fds.ByName("struct_value"), depth)
	case depth < maxDepth:
		f.field(m, fds.ByName("list_value"), depth)
	default:
		m.Set(fds.ByName("string_value"), protoreflect.ValueOfString("leaf"))
	}
}

func (f filler) timestamp(m protoreflect.Message) {
	seconds := pick(f, []int64{0, -1, 1, 1767225600, 1767225600, -62135596800, 253402300799, 951782400})
	nanos := pick(f, []int64{0, 0, 1, 10, 1000, 120000000, 1000000, 500000000, 123456789, 999999999, 100, 1010})
	if f.r.IntN(rare) == 0 {
		seconds, nanos = pick(f, []int64{-62135596801, 253402300800, 0}), pick(f, []int64{0, -1, 1000000000})
	}
	fds := m.Descriptor().Fields()
	m.Set(fds.ByName("seconds"), protoreflect.ValueOfInt64(seconds))
	m.Set(fds.ByName("nanos"), protoreflect.ValueOfInt32(int32(nanos)))
}

// any holds a registered type now and then, protojson expands it; otherwise a name it cannot
// resolve, which it refuses.
func (f filler) any(m protoreflect.Message) {
	s, _ := structpb.NewStruct(map[string]any{"a": 1.5, "b": []any{"x", nil}})
	packed, _ := anypb.New(s)
	if f.r.IntN(2) == 0 {
		packed, _ = anypb.New(timestamppb.New(timestamppb.Now().AsTime()))
	}
	if f.r.IntN(3) == 0 {
		packed.TypeUrl = "type.googleapis.com/no.such.Type"
	}
	fds := m.Descriptor().Fields()
	m.Set(fds.ByName("type_url"), protoreflect.ValueOfString(packed.GetTypeUrl()))
	m.Set(fds.ByName("value"), protoreflect.ValueOfBytes(packed.GetValue()))
}

func pick[T any](f filler, from []T) T {
	return from[f.r.IntN(len(from))]
}
