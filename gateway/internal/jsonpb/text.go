package jsonpb

import (
	"cmp"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"google.golang.org/protobuf/reflect/protoreflect"
)

// appendString appends s quoted the way protojson quotes: only '"', '\\' and control characters
// are escaped (not '<', '>', '&', U+2028 or U+2029). It reports false on invalid UTF-8, which
// protojson refuses.
func appendString(b []byte, s string) ([]byte, bool) {
	b = append(b, '"')
	done := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && n == 1 {
				return b, false
			}
			i += n
			continue
		}
		if c >= ' ' && c != '"' && c != '\\' {
			i++
			continue
		}
		b = appendEscape(append(b, s[done:i]...), c)
		i++
		done = i
	}
	return append(append(b, s[done:]...), '"'), true
}

func appendEscape(b []byte, c byte) []byte {
	switch c {
	case '"', '\\':
		return append(b, '\\', c)
	case '\b':
		return append(b, '\\', 'b')
	case '\f':
		return append(b, '\\', 'f')
	case '\n':
		return append(b, '\\', 'n')
	case '\r':
		return append(b, '\\', 'r')
	case '\t':
		return append(b, '\\', 't')
	}
	const hex = "0123456789abcdef"
	return append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
}

// appendFloat appends f as protojson writes a float of the given bit size: the shortest
// representation that reads back to the same value, in exponent form below 1e-6 and from 1e21
// on (ECMAScript's rule), with a one-digit negative exponent not padded. NaN and infinities,
// which protojson writes as strings, and refuses in a google.protobuf.Value, are reported false.
func appendFloat(b []byte, f float64, bits int) ([]byte, bool) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return b, false
	}
	format := byte('f')
	if exponentForm(f, bits) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, bits)
	if n := len(b); format == 'e' && n >= 4 && string(b[n-4:n-1]) == "e-0" {
		b[n-2] = b[n-1]
		b = b[:n-1]
	}
	return b, true
}

func exponentForm(f float64, bits int) bool {
	if f == 0 {
		return false
	}
	if bits == 32 {
		a := float32(math.Abs(f))
		return a < 1e-6 || a >= 1e21
	}
	a := math.Abs(f)
	return a < 1e-6 || a >= 1e21
}

// The range protojson accepts for a google.protobuf.Timestamp: 0001-01-01 to 9999-12-31 UTC.
const (
	minTimestamp = -62135596800
	maxTimestamp = 253402300799
)

// timestamp writes an RFC 3339 UTC time with 0, 3, 6 or 9 fractional digits, as protojson does;
// values outside its range fall back (protojson refuses them).
func (e *encoder) timestamp(secs, nanos int64) bool {
	if secs < minTimestamp || secs > maxTimestamp || nanos < 0 || nanos > 999_999_999 {
		return false
	}
	b := time.Unix(secs, nanos).UTC().AppendFormat(append(e.out, '"'), "2006-01-02T15:04:05")
	digits := 9
	for digits > 0 && nanos%1000 == 0 {
		nanos /= 1000
		digits -= 3
	}
	if digits > 0 {
		var frac [9]byte
		for i := digits - 1; i >= 0; i-- {
			frac[i] = byte('0' + nanos%10)
			nanos /= 10
		}
		b = append(append(b, '.'), frac[:digits]...)
	}
	e.out = append(b, 'Z', '"')
	return true
}

// compareFor orders map entries as protojson does.
func compareFor(kind protoreflect.Kind) func(x, y entry) int {
	switch kind {
	case protoreflect.BoolKind:
		return compareBool
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind,
		protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return compareInt
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind, protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return compareUint
	}
	return compareString
}

func compareBool(x, y entry) int {
	return cmp.Compare(boolRank(x.key.Bool()), boolRank(y.key.Bool()))
}

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

func compareInt(x, y entry) int    { return cmp.Compare(x.key.Int(), y.key.Int()) }
func compareUint(x, y entry) int   { return cmp.Compare(x.key.Uint(), y.key.Uint()) }
func compareString(x, y entry) int { return strings.Compare(x.key.String(), y.key.String()) }
