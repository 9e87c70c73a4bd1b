package address

import (
	"strings"
	"unicode/utf8"

	"github.com/zcustody/suite/platform/apperr"
)

// single unwraps a one-element array (the template's form); it reports whether the key is
// present with a value. Unlike payload.Text, several values answer ER-108 (not ER-103) and
// [null] counts as absent.
func single(payload map[string]any, key string) (any, bool, error) {
	v, ok := payload[key]
	if list, isList := v.([]any); isList {
		switch len(list) {
		case 0:
			return nil, false, apperr.Invalid(apperr.CodeEmptyList, key, "%s must hold one value", key)
		case 1:
			v = list[0]
		default:
			return nil, false, apperr.Invalid(apperr.CodeFormat, key, "%s must hold one value, not %d", key, len(list))
		}
	}
	return v, ok && v != nil, nil
}

// text reads a mandatory string given as "x" or ["x"]: not blank, at most maxLen characters.
func text(payload map[string]any, key string, maxLen int) (string, error) {
	v, ok, err := single(payload, key)
	if err != nil {
		return "", err
	}
	if !ok {
		return "", apperr.Missing(key)
	}
	return checkText(key, v, maxLen, false)
}

// optionalText reads an optional string: absent or "" is empty; blank is refused unless
// blankOK; at most maxLen characters.
func optionalText(payload map[string]any, key string, maxLen int, blankOK bool) (string, error) {
	v, ok, err := single(payload, key)
	if err != nil || !ok || v == "" {
		return "", err
	}
	s, err := checkText(key, v, maxLen, blankOK)
	if blankOK {
		s = strings.TrimSpace(s)
	}
	return s, err
}

func checkText(key string, v any, maxLen int, blankOK bool) (string, error) {
	s, isString := v.(string)
	if !isString {
		return "", apperr.Invalid(apperr.CodeFormat, key, "%s must be a string or a one-element array of strings", key)
	}
	if !blankOK && strings.TrimSpace(s) == "" {
		return "", apperr.Invalid(apperr.CodeBlank, key, "%s must not be blank", key)
	}
	if utf8.RuneCountInString(s) > maxLen {
		return "", apperr.Invalid(apperr.CodeLength, key, "%s must be 1 to %d characters", key, maxLen)
	}
	return s, nil
}

// flag reads an optional boolean given as true or [true]; absent is false.
func flag(payload map[string]any, key string) (bool, error) {
	v, ok, err := single(payload, key)
	if err != nil || !ok {
		return false, err
	}
	b, isBool := v.(bool)
	if !isBool {
		return false, apperr.Invalid(apperr.CodeFormat, key, "%s must be true or false", key)
	}
	return b, nil
}
