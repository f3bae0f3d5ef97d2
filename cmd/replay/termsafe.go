package main

import (
	"io"
	"strings"
	"unicode/utf8"
)

// escapeControls returns s with every control character but newline and tab written as a Go
// escape (\x1b, \r, \u007f, \u009b), and each byte of invalid UTF-8 as \xNN: text recorded from
// an agent or a user is shown, never obeyed by the terminal (an ESC in a prompt must not recolour
// or clear the screen). JSON passes through unchanged in meaning: its encoder escapes C0 itself,
// and DEL and C1 come out as the \u escapes JSON reads.
func escapeControls(s string) string {
	if !needsEscape(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b.WriteString(`\x`)
			b.WriteString(hex2(s[i]))
		case r == '\n' || r == '\t':
			b.WriteRune(r)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20:
			b.WriteString(`\x`)
			b.WriteString(hex2(byte(r)))
		case r >= 0x7f && r <= 0x9f:
			b.WriteString(`\u00`)
			b.WriteString(hex2(byte(r)))
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// hex2 is a byte in two lower-case hex digits.
func hex2(c byte) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[c>>4], digits[c&0xf]})
}

// needsEscape reports whether s holds anything escapeControls changes.
func needsEscape(s string) bool {
	for i := 0; i < len(s); i++ { // ASCII first, byte by byte
		c := s[i]
		if c >= utf8.RuneSelf {
			return needsEscapeRunes(s[i:])
		}
		if c < 0x20 && c != '\n' && c != '\t' || c == 0x7f {
			return true
		}
	}
	return false
}

// needsEscapeRunes is needsEscape past the first byte that is not ASCII.
func needsEscapeRunes(s string) bool {
	for i, r := range s {
		switch {
		case r == utf8.RuneError:
			if _, n := utf8.DecodeRuneInString(s[i:]); n == 1 {
				return true
			}
		case r < 0x20 && r != '\n' && r != '\t', r >= 0x7f && r <= 0x9f:
			return true
		}
	}
	return false
}

// safeWriter escapes control characters in everything written through it (see escapeControls).
// A verb that prints recorded text for a person writes through one; JSON output needs none, as
// the encoder escapes them already.
type safeWriter struct{ w io.Writer }

func (s safeWriter) Write(p []byte) (int, error) {
	if _, err := io.WriteString(s.w, escapeControls(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}
