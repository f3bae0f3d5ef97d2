// Package jsonlite reads and writes the JSON that a hook program needs, without encoding/json.
//
// A hook is a new process each time the agent calls it, and the agent waits for it: every page
// of code the program touches before it answers costs a page fault, tens of microseconds on a
// virtual machine. encoding/json brings reflection and its own initialisation; replay-hook,
// which only passes a payload on and reads a reply back, starts about 2 ms sooner without it.
// What this package accepts and produces is what encoding/json does for the same input
// (FuzzAgreesWithEncodingJSON): Valid and Compact as json.Valid and json.Compact, Parse as
// json.Unmarshal into an any.
package jsonlite

import (
	"errors"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// ErrSyntax is the error of input that is not one JSON value.
var ErrSyntax = errors.New("jsonlite: not a JSON value")

// maxDepth bounds the nesting of arrays and objects, as encoding/json does.
const maxDepth = 10000

// Valid reports whether data is one JSON value, with nothing but white space around it.
func Valid(data []byte) bool {
	_, err := Compact(nil, data)
	return err == nil
}

// Compact appends data to dst without its insignificant white space, and fails with ErrSyntax,
// dst unchanged, when data is not one JSON value.
func Compact(dst, data []byte) ([]byte, error) {
	p := parser{data: data, out: dst, compact: true}
	if err := p.document(); err != nil {
		return dst, err
	}
	return p.out, nil
}

// Parse decodes one JSON value as json.Unmarshal does into an any: objects as map[string]any
// (a repeated key keeps its last value), arrays as []any, numbers as float64, strings (invalid
// UTF-8 as U+FFFD), bool and nil.
func Parse(data []byte) (any, error) {
	p := parser{data: data, build: true}
	if err := p.document(); err != nil {
		return nil, err
	}
	return p.value, nil
}

// Quote appends s to dst as a JSON string.
func Quote(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			dst = append(dst, '\\', c)
		case c < 0x20:
			dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		case c < utf8.RuneSelf:
			dst = append(dst, c)
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				dst = append(dst, `\ufffd`...)
			} else {
				dst = append(dst, s[i:i+size]...)
			}
			i += size
			continue
		}
		i++
	}
	return append(dst, '"')
}

// parser is a recursive descent over data that checks it, and appends it without white space
// to out (compact) or builds its value (build).
type parser struct {
	data    []byte
	pos     int
	depth   int
	out     []byte
	compact bool
	build   bool
	value   any
}

func (p *parser) document() error {
	p.space()
	if err := p.any(); err != nil {
		return err
	}
	p.space()
	if p.pos != len(p.data) {
		return ErrSyntax
	}
	return nil
}

func (p *parser) space() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

// emit appends data[from:p.pos] to the output when compacting.
func (p *parser) emit(from int) {
	if p.compact {
		p.out = append(p.out, p.data[from:p.pos]...)
	}
}

// any reads one value; with build, it is left in p.value.
func (p *parser) any() error {
	if p.pos >= len(p.data) {
		return ErrSyntax
	}
	switch c := p.data[p.pos]; {
	case c == '{':
		return p.object()
	case c == '[':
		return p.array()
	case c == '"':
		s, err := p.str()
		p.value = s
		return err
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	default:
		for _, lit := range [...]struct {
			text  string
			value any
		}{{"true", true}, {"false", false}, {"null", nil}} {
			if len(p.data)-p.pos >= len(lit.text) && string(p.data[p.pos:p.pos+len(lit.text)]) == lit.text {
				from := p.pos
				p.pos += len(lit.text)
				p.emit(from)
				p.value = lit.value
				return nil
			}
		}
		return ErrSyntax
	}
}

func (p *parser) object() error {
	var obj map[string]any
	if p.build {
		obj = map[string]any{}
	}
	more, err := p.open('}')
	for more && err == nil {
		p.space()
		if p.pos >= len(p.data) || p.data[p.pos] != '"' {
			return ErrSyntax
		}
		var key string
		if key, err = p.str(); err != nil {
			return err
		}
		p.space()
		if p.pos >= len(p.data) || p.data[p.pos] != ':' {
			return ErrSyntax
		}
		p.pos++
		p.emit(p.pos - 1)
		p.space()
		if err = p.any(); err != nil {
			return err
		}
		if p.build {
			obj[key] = p.value
		}
		more, err = p.next('}')
	}
	p.value = obj
	return err
}

func (p *parser) array() error {
	var arr []any
	if p.build {
		arr = []any{}
	}
	more, err := p.open(']')
	for more && err == nil {
		p.space()
		if err = p.any(); err != nil {
			return err
		}
		if p.build {
			arr = append(arr, p.value)
		}
		more, err = p.next(']')
	}
	p.value = arr
	return err
}

// open reads the opening bracket of an array or object, and its closing one too when it is
// empty: more tells whether members follow.
func (p *parser) open(closing byte) (more bool, err error) {
	if p.depth++; p.depth > maxDepth {
		return false, ErrSyntax
	}
	p.pos++ // [ or {
	p.emit(p.pos - 1)
	p.space()
	if p.pos < len(p.data) && p.data[p.pos] == closing {
		p.pos++
		p.emit(p.pos - 1)
		p.depth--
		return false, nil
	}
	return true, nil
}

// next reads what follows a member: a comma (more follow) or the closing bracket.
func (p *parser) next(closing byte) (more bool, err error) {
	p.space()
	if p.pos >= len(p.data) {
		return false, ErrSyntax
	}
	c := p.data[p.pos]
	p.pos++
	p.emit(p.pos - 1)
	switch c {
	case ',':
		return true, nil
	case closing:
		p.depth--
		return false, nil
	}
	return false, ErrSyntax
}

// number reads a number as JSON spells one.
func (p *parser) number() error {
	from := p.pos
	if p.data[p.pos] == '-' {
		p.pos++
	}
	switch {
	case p.pos < len(p.data) && p.data[p.pos] == '0':
		p.pos++
	case p.digits() == 0:
		return ErrSyntax
	}
	if p.pos < len(p.data) && p.data[p.pos] == '.' {
		p.pos++
		if p.digits() == 0 {
			return ErrSyntax
		}
	}
	if p.pos < len(p.data) && (p.data[p.pos] == 'e' || p.data[p.pos] == 'E') {
		p.pos++
		if p.pos < len(p.data) && (p.data[p.pos] == '+' || p.data[p.pos] == '-') {
			p.pos++
		}
		if p.digits() == 0 {
			return ErrSyntax
		}
	}
	p.emit(from)
	if p.build {
		f, err := strconv.ParseFloat(string(p.data[from:p.pos]), 64)
		if err != nil {
			return ErrSyntax // out of float64's range, as encoding/json refuses it
		}
		p.value = f
	}
	return nil
}

func (p *parser) digits() int {
	n := 0
	for p.pos < len(p.data) && p.data[p.pos] >= '0' && p.data[p.pos] <= '9' {
		p.pos++
		n++
	}
	return n
}

// str reads a string; with build it returns it decoded.
func (p *parser) str() (string, error) {
	from := p.pos
	p.pos++ // "
	var b []byte
	plain := p.pos // start of the run not yet copied to b
	for {
		if p.pos >= len(p.data) {
			return "", ErrSyntax
		}
		c := p.data[p.pos]
		switch {
		case c == '"':
			if p.build {
				b = appendText(b, p.data[plain:p.pos])
			}
			p.pos++
			p.emit(from)
			return string(b), nil
		case c < 0x20:
			return "", ErrSyntax
		case c == '\\':
			if p.build {
				b = appendText(b, p.data[plain:p.pos])
			}
			r, err := p.escape()
			if err != nil {
				return "", err
			}
			if p.build {
				b = utf8.AppendRune(b, r)
			}
			plain = p.pos
		default:
			p.pos++
		}
	}
}

// escape reads one escape sequence at p.pos (a backslash) and returns its rune; a \u escape of
// a surrogate pair is read as one rune, a lone surrogate is U+FFFD.
func (p *parser) escape() (rune, error) {
	if p.pos+1 >= len(p.data) {
		return 0, ErrSyntax
	}
	c := p.data[p.pos+1]
	p.pos += 2
	switch c {
	case '"', '\\', '/':
		return rune(c), nil
	case 'b':
		return '\b', nil
	case 'f':
		return '\f', nil
	case 'n':
		return '\n', nil
	case 'r':
		return '\r', nil
	case 't':
		return '\t', nil
	case 'u':
		r, ok := p.hex4()
		if !ok {
			return 0, ErrSyntax
		}
		if utf16.IsSurrogate(r) {
			// A high surrogate followed by \u and a low one is one rune; anything else leaves
			// the first alone, and the next escape is read on its own.
			if p.pos+1 < len(p.data) && p.data[p.pos] == '\\' && p.data[p.pos+1] == 'u' {
				save := p.pos
				p.pos += 2
				if r2, ok := p.hex4(); ok {
					if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
						return dec, nil
					}
				}
				p.pos = save
			}
			return utf8.RuneError, nil
		}
		return r, nil
	}
	return 0, ErrSyntax
}

func (p *parser) hex4() (rune, bool) {
	if p.pos+4 > len(p.data) {
		return 0, false
	}
	var r rune
	for _, c := range p.data[p.pos : p.pos+4] {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c - 'a' + 10)
		case c >= 'A' && c <= 'F':
			r |= rune(c - 'A' + 10)
		default:
			return 0, false
		}
	}
	p.pos += 4
	return r, true
}

// appendText appends raw string bytes, each invalid UTF-8 byte as U+FFFD.
func appendText(b, raw []byte) []byte {
	for len(raw) > 0 {
		r, size := utf8.DecodeRune(raw)
		if r == utf8.RuneError && size == 1 {
			b = utf8.AppendRune(b, utf8.RuneError)
		} else {
			b = append(b, raw[:size]...)
		}
		raw = raw[size:]
	}
	return b
}
