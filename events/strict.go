package events

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// maxStrictDepth is the nesting checkStrict follows, the most encoding/json decodes.
const maxStrictDepth = 10000

// checkStrict refuses what encoding/json would read silently, and other JSON readers read
// otherwise, in one JSON value: an object that gives a key twice (encoding/json keeps the last,
// others the first), a string holding invalid UTF-8 or an escaped lone surrogate (encoding/json
// turns both into U+FFFD). A line that holds one reads as two different events to two readers,
// or as other text than was written; the hash covers the bytes, not a reading of them. The
// error names where, as a path from the line's top (data.params.path). Bad JSON syntax is left
// to the decoder, which says what it expected: checkStrict then returns nil.
func checkStrict(raw []byte) error {
	s := strictScanner{b: raw}
	err := s.value(0)
	if se, ok := err.(*strictError); ok && se.syntax {
		return nil
	}
	return err
}

// strictError is what checkStrict found, and where.
type strictError struct {
	path   []string // from the innermost: the keys and indexes above the value
	what   string
	syntax bool
}

func (e *strictError) Error() string {
	var b strings.Builder
	for i := len(e.path) - 1; i >= 0; i-- {
		p := e.path[i]
		if !strings.HasPrefix(p, "[") && b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(p)
	}
	if b.Len() == 0 {
		return e.what
	}
	return b.String() + ": " + e.what
}

// within adds a key or an index to the path of a strictError, on its way out.
func within(err error, elem string) error {
	if se, ok := err.(*strictError); ok && !se.syntax {
		se.path = append(se.path, elem)
	}
	return err
}

var errSyntax = &strictError{syntax: true}

type strictScanner struct {
	b []byte
	i int
}

func (s *strictScanner) peek() byte {
	for s.i < len(s.b) {
		switch c := s.b[s.i]; c {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return c
		}
	}
	return 0
}

func (s *strictScanner) value(depth int) error {
	if depth > maxStrictDepth {
		return errSyntax // encoding/json refuses it, saying so
	}
	switch c := s.peek(); c {
	case '{':
		return s.object(depth)
	case '[':
		s.i++
		if s.peek() == ']' {
			s.i++
			return nil
		}
		for n := 0; ; n++ {
			if err := s.value(depth + 1); err != nil {
				return within(err, "["+strconv.Itoa(n)+"]")
			}
			switch s.peek() {
			case ',':
				s.i++
			case ']':
				s.i++
				return nil
			default:
				return errSyntax
			}
		}
	case '"':
		_, err := s.str(false)
		return err
	case 0:
		return errSyntax
	}
	// A number or a literal: no string inside, nothing to check; the decoder checks the syntax.
	for s.i < len(s.b) && !strings.ContainsRune(",]} \t\n\r", rune(s.b[s.i])) {
		s.i++
	}
	return nil
}

func (s *strictScanner) object(depth int) error {
	s.i++
	if s.peek() == '}' {
		s.i++
		return nil
	}
	// The keys seen so far, as bytes of the line (unquoted when they hold escapes): most
	// objects have a few keys, compared one by one without allocating; from 16 on, a map.
	var few [16][]byte
	keys := few[:0]
	var index map[string]bool
	for {
		if s.peek() != '"' {
			return errSyntax
		}
		key, err := s.key()
		if err != nil {
			return within(err, "(key)")
		}
		seen := index[string(key)]
		if index == nil {
			for _, k := range keys {
				seen = seen || string(k) == string(key)
			}
		}
		if seen {
			return &strictError{what: fmt.Sprintf("key %s appears twice in one object (JSON readers disagree on which one counts): give each key once",
				strconv.Quote(string(key)))}
		}
		if keys = append(keys, key); len(keys) == 16 {
			index = map[string]bool{}
			for _, k := range keys {
				index[string(k)] = true
			}
		} else if index != nil {
			index[string(key)] = true
		}
		if s.peek() != ':' {
			return errSyntax
		}
		s.i++
		if err := s.value(depth + 1); err != nil {
			return within(err, string(key))
		}
		switch s.peek() {
		case ',':
			s.i++
		case '}':
			s.i++
			return nil
		default:
			return errSyntax
		}
	}
}

// key moves past the key at s.b[s.i] == '"', checking it, and returns it unquoted: the line's
// own bytes when it holds no escape.
func (s *strictScanner) key() ([]byte, error) {
	start := s.i + 1
	for j := start; j < len(s.b); j++ {
		switch c := s.b[j]; {
		case c == '"':
			s.i = j + 1
			return s.b[start:j], nil
		case c == '\\' || c >= utf8.RuneSelf:
			k, err := s.str(true)
			return []byte(k), err
		}
	}
	return nil, errSyntax
}

// str moves past the string at s.b[s.i] == '"', checking it, and returns it unquoted when
// unquote is set (a key, compared with the object's other keys).
func (s *strictScanner) str(unquote bool) (string, error) {
	start := s.i + 1
	plain := true
	for j := start; ; {
		if j = plainUntil(s.b, j); j >= len(s.b) {
			break
		}
		c := s.b[j]
		switch {
		case c == '"':
			s.i = j + 1
			if !unquote {
				return "", nil
			}
			if plain {
				return string(s.b[start:j]), nil
			}
			var out string
			if json.Unmarshal(s.b[start-1:j+1], &out) != nil {
				return "", errSyntax
			}
			return out, nil
		case c == '\\':
			plain = false
			if j+1 < len(s.b) && s.b[j+1] == 'u' {
				r, ok := hex4(s.b, j+2)
				if !ok {
					return "", errSyntax
				}
				j += 6
				switch {
				case utf16.IsSurrogate(r) && r < 0xdc00:
					if r2, ok := hex4(s.b, j+2); ok && j+1 < len(s.b) && s.b[j] == '\\' && s.b[j+1] == 'u' &&
						utf16.DecodeRune(r, r2) != utf8.RuneError {
						j += 6
						continue
					}
					return "", &strictError{what: fmt.Sprintf(`\u%04x is half of a UTF-16 surrogate pair, without its other half: the text is not valid Unicode`, r)}
				case utf16.IsSurrogate(r):
					return "", &strictError{what: fmt.Sprintf(`\u%04x is half of a UTF-16 surrogate pair, without its other half: the text is not valid Unicode`, r)}
				}
				continue
			}
			j += 2
		case c < utf8.RuneSelf:
			j++
		default:
			r, n := utf8.DecodeRune(s.b[j:])
			if r == utf8.RuneError && n == 1 {
				return "", &strictError{what: fmt.Sprintf("byte 0x%02x is not valid UTF-8: write the text in UTF-8", c)}
			}
			j += n
		}
	}
	return "", errSyntax
}

// hex4 reads the four hex digits of a \u escape at b[i:].
func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	v, err := strconv.ParseUint(string(b[i:i+4]), 16, 16)
	return rune(v), err == nil
}
