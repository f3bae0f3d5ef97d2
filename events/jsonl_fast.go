package events

import (
	"encoding/json"
	"strconv"
)

// decodeLineFast reads a line's envelope into jl without reflection, for the lines an export
// writes (and the like): every key spelled as its tag, once; the string fields plain ASCII
// without escapes; the numbers plain digits that fit their field; an origin object. data is
// left in raw (jl.Data aliases it). It returns false for anything else (a key spelled
// otherwise, an unknown key, a null, an escape, a number in another form, bad syntax anywhere
// in the line), and the caller decodes with decodeStrict, which gives the envelope or the error
// it always gave; where it returns true, decodeStrict would have given the same envelope. The
// whole line's syntax is checked, so checkStrict, run before, has checked all of it.
func decodeLineFast(raw []byte, jl *jsonLine) bool {
	s := fastScanner{b: raw}
	ok := s.object(func(k []byte) bool {
		switch string(k) {
		case "task":
			return s.once(0) && s.ascii(&jl.Task)
		case "seq":
			return s.once(1) && s.uint(&jl.Seq, 64)
		case "id":
			return s.once(2) && s.ascii(&jl.ID)
		case "turn":
			return s.once(3) && s.int(&jl.Turn)
		case "time":
			return s.once(4) && s.ascii(&jl.Time)
		case "type":
			var t string
			ok := s.once(5) && s.ascii(&t)
			jl.Type = Type(t)
			return ok
		case "v":
			return s.once(6) && s.int(&jl.V)
		case "origin":
			return s.once(7) && s.origin(&jl.Origin)
		case "data":
			start := s.i
			if !s.once(8) || !s.value(0) {
				return false
			}
			jl.Data = json.RawMessage(s.b[start:s.i:s.i])
			return true
		case "prev":
			return s.once(9) && s.ascii(&jl.Prev)
		case "hash":
			return s.once(10) && s.ascii(&jl.Hash)
		}
		return false
	})
	return ok && s.end()
}

// ascii reads a string of printable ASCII without escapes into dst.
func (s *fastScanner) ascii(dst *string) bool {
	if s.peek() != '"' {
		return false
	}
	start := s.i + 1
	j := plainUntil(s.b, start)
	if j >= len(s.b) || s.b[j] != '"' {
		return false
	}
	*dst = string(s.b[start:j])
	s.i = j + 1
	return true
}

// uint reads a number of plain digits, without a leading zero, that fits in bits.
func (s *fastScanner) uint(dst *uint64, bits int) bool {
	start := s.i
	if s.digits() == 0 || s.b[start] == '0' && s.i-start > 1 {
		return false
	}
	if s.i < len(s.b) && (s.b[s.i] == '.' || s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		return false
	}
	v, err := strconv.ParseUint(string(s.b[start:s.i]), 10, bits)
	*dst = v
	return err == nil
}

// int reads a number of plain digits into an int, refusing a negative one (which the caller's
// checks refuse, saying why).
func (s *fastScanner) int(dst *int) bool {
	var v uint64
	if !s.uint(&v, strconv.IntSize-1) {
		return false
	}
	*dst = int(v)
	return true
}

// origin reads an origin object with the decoder events.Origin always had.
func (s *fastScanner) origin(dst **Origin) bool {
	if s.peek() != '{' {
		return false
	}
	start := s.i
	if !s.value(0) {
		return false
	}
	var o Origin
	if decodeStrict(s.b[start:s.i], &o) != nil {
		return false
	}
	*dst = &o
	return true
}
