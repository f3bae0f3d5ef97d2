// Package termsafe escapes the characters of recorded text that a terminal or a browser would
// obey rather than show: control characters, bidirectional controls and invalid UTF-8.
package termsafe

import (
	"strings"
	"unicode/utf8"
)

// Escape returns s with every control character but newline and tab written as a Go
// escape (\x1b, \r, \u007f, \u009b), each bidirectional control (U+202E and the others of
// IsBidiControl) as \uNNNN, and each byte of invalid UTF-8 as \xNN: text recorded from an agent
// or a user is shown, never obeyed by the terminal (an ESC in a prompt must not recolour or
// clear the screen; a right-to-left override must not show a line in another order than its
// bytes). JSON passes through unchanged in meaning: its encoder escapes C0 itself, and DEL, C1
// and the bidirectional controls come out as the \u escapes JSON reads.
func Escape(s string) string {
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
		case IsBidiControl(r):
			b.WriteString(`\u`)
			b.WriteString(hex2(byte(r >> 8)))
			b.WriteString(hex2(byte(r)))
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// IsBidiControl reports the characters that reorder how text around them is displayed (the
// Unicode bidirectional formatting characters): U+061C, U+200E, U+200F, U+202A to U+202E and
// U+2066 to U+2069. Shown raw, "a\u202eb.exe" prints as "aexe.b".
func IsBidiControl(r rune) bool {
	return r == 0x061c || r == 0x200e || r == 0x200f || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069
}

// hex2 is a byte in two lower-case hex digits.
func hex2(c byte) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[c>>4], digits[c&0xf]})
}

// needsEscape reports whether s holds anything Escape changes.
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
		case r < 0x20 && r != '\n' && r != '\t', r >= 0x7f && r <= 0x9f, IsBidiControl(r):
			return true
		}
	}
	return false
}
