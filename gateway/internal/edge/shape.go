package edge

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"

	"github.com/zcustody/suite/platform/apperr"
)

// Shape limits of every JSON body, checked before anything decodes it into messages.
const (
	MaxDepth       = 16    // nesting of objects and arrays
	MaxArrayLength = 1024  // elements of one array (a filter list, settlements)
	MaxStringBytes = 16384 // one string value or key
)

// shapeError is a body refused for its shape.
type shapeError struct{ code, msg string }

func (e shapeError) Error() string { return e.msg }

// checkShape refuses invalid UTF-8, and JSON nested too deep, with too long an array or too
// long a string. Syntax errors are left to the decoder, which names them.
func checkShape(body []byte) error {
	if !utf8.Valid(body) {
		return shapeError{apperr.CodeMalformed, "request body is not valid UTF-8"}
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var stack []int // element count per open array; -1 for objects
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return nil // malformed: the decoder reports it with its position
		}
		if err := step(&stack, tok); err != nil {
			return err
		}
	}
}

func step(stack *[]int, tok json.Token) error {
	s := *stack
	if n := len(s); n > 0 && s[n-1] >= 0 && !isClose(tok) {
		s[n-1]++
		if s[n-1] > MaxArrayLength {
			return shapeError{apperr.CodeLength, fmt.Sprintf("an array holds more than %d elements", MaxArrayLength)}
		}
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '[':
			s = append(s, 0)
		case '{':
			s = append(s, -1)
		default:
			s = s[:len(s)-1]
		}
		if len(s) > MaxDepth {
			return shapeError{apperr.CodeLength, fmt.Sprintf("JSON nested deeper than %d levels", MaxDepth)}
		}
	case string:
		if len(t) > MaxStringBytes {
			return shapeError{apperr.CodeLength, fmt.Sprintf("a string is longer than %d bytes", MaxStringBytes)}
		}
	}
	*stack = s
	return nil
}

func isClose(tok json.Token) bool {
	d, ok := tok.(json.Delim)
	return ok && (d == ']' || d == '}')
}
