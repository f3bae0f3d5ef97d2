package events

import (
	"reflect"
	"strconv"
	"strings"
)

// shape is what a payload's JSON must look like for encoding/json to decode it into a Go type
// without error: for a struct, an object of its fields' keys, each once; for a slice, an array;
// for a string, a bool, an int or a uint64, a value of that kind. It lets a line whose data is
// kept as it is (an export's) be checked without building the payload.
type shape struct {
	kind   reflect.Kind
	fields map[string]field // of a struct, by JSON key
	elem   *shape           // of a slice
}

type field struct {
	bit   uint
	shape *shape
}

// shapeOf builds the shape of t, a struct of the kinds above (a payload type of this package).
func shapeOf(t reflect.Type) *shape {
	s := &shape{kind: t.Kind()}
	switch t.Kind() {
	case reflect.Struct:
		s.fields = map[string]field{}
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			s.fields[name] = field{bit: uint(i), shape: shapeOf(f.Type)}
		}
	case reflect.Slice:
		s.elem = shapeOf(t.Elem())
	case reflect.String, reflect.Bool, reflect.Int, reflect.Uint64:
	default:
		panic("events: no shape for " + t.String())
	}
	return s
}

// decisionShape is the shape of a Decision.
var decisionShape = shapeOf(reflect.TypeFor[Decision]())

// checkDecisionFast reports whether data is sure to decode as a Decision (decodeStrict) and to
// pass its validation; false means it is not sure, and the caller decodes it to find out. It
// refuses, besides what encoding/json refuses, anything encoding/json reads in a way of its own:
// a key spelled otherwise than its tag or given twice, a null, nesting deeper than maxFastDepth.
func checkDecisionFast(data []byte) bool {
	s := fastScanner{b: data}
	if !s.shaped(decisionShape, 0) || !s.end() {
		return false
	}
	h, err := readHead(data)
	return err == nil && h.Turn >= 1
}

// shaped moves past a value of shape sh, checking it.
func (s *fastScanner) shaped(sh *shape, depth int) bool {
	if depth > maxFastDepth {
		return false
	}
	switch sh.kind {
	case reflect.Struct:
		return s.object(func(k []byte) bool {
			f, ok := sh.fields[string(k)]
			if !ok || !s.once(f.bit) {
				return false
			}
			seen := s.seen
			ok = s.shaped(f.shape, depth+1)
			s.seen = seen
			return ok
		})
	case reflect.Slice:
		return s.array(func() bool { return s.shaped(sh.elem, depth+1) })
	case reflect.String:
		_, _, ok := s.stringToken()
		return ok
	case reflect.Bool:
		var b bool
		return s.boolean(&b)
	case reflect.Int, reflect.Uint64:
		start := s.i
		if s.peek() == '-' && sh.kind == reflect.Int {
			s.i++
		}
		if s.digits() == 0 {
			return false
		}
		if s.i < len(s.b) && (s.b[s.i] == '.' || s.b[s.i] == 'e' || s.b[s.i] == 'E') {
			return false
		}
		digits := string(s.b[start:s.i])
		if len(digits) > 1 && (digits[0] == '0' || digits[0] == '-' && digits[1] == '0' && len(digits) > 2) {
			return false // a leading zero: not JSON
		}
		var err error
		if sh.kind == reflect.Int {
			_, err = strconv.ParseInt(digits, 10, strconv.IntSize)
		} else {
			_, err = strconv.ParseUint(digits, 10, 64)
		}
		return err == nil
	}
	return false
}
