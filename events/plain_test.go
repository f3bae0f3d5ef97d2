package events

import (
	"strings"
	"testing"
)

// plainUntilByByte is plainUntil one byte at a time, as the scanners looked before.
func plainUntilByByte(s string, i int) int {
	for ; i < len(s) && plainByte[s[i]]; i++ {
	}
	return i
}

func TestPlainUntil(t *testing.T) {
	long := strings.Repeat("apps/web/src/components/", 3)
	cases := []struct {
		name string
		s    string
		from int
	}{
		{"empty", "", 0},
		{"all plain, shorter than a word", "src/a.ts", 0},
		{"all plain, longer than a word", long, 0},
		{"quote in the first word", `ab"cdefghij`, 0},
		{"quote in the second word", `abcdefghij"kl`, 0},
		{"backslash after the words", long + `\n`, 0},
		{"control byte", "abcdefgh\x1fijk", 0},
		{"tab", "abcdefghijk\tl", 0},
		{"DEL is plain", "abcdefgh\x7fijklmnop", 0},
		{"byte 0x80", "abcdefghij\x80", 0},
		{"UTF-8", "abcdefghijklmnöp", 0},
		{"a match above the first one", "ab\x01\"cdefgh", 0},
		{"0x01 above a quote (a borrow marks it)", "abc\"\x01defgh", 0},
		{"from the middle", `abc"defghijklmnop"`, 4},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got, want := plainUntil(c.s, c.from), plainUntilByByte(c.s, c.from); got != want {
				t.Errorf("plainUntil(%q, %d) = %d, want %d", c.s, c.from, got, want)
			}
			if got, want := plainUntil([]byte(c.s), c.from), plainUntilByByte(c.s, c.from); got != want {
				t.Errorf("plainUntil([]byte(%q), %d) = %d, want %d", c.s, c.from, got, want)
			}
		})
	}
	// Every byte value at every place of a 17-byte string of plain bytes.
	base := []byte("abcdefghijklmnopq")
	for at := range base {
		for v := range 256 {
			s := append([]byte(nil), base...)
			s[at] = byte(v)
			if got, want := plainUntil(s, 0), plainUntilByByte(string(s), 0); got != want {
				t.Fatalf("byte 0x%02x at %d: plainUntil = %d, want %d", v, at, got, want)
			}
		}
	}
}

func FuzzPlainUntil(f *testing.F) {
	for _, s := range awkward {
		f.Add(s, 0)
	}
	f.Add(strings.Repeat("ab\"\\\x00\x7f\x80", 5), 3)
	f.Fuzz(func(t *testing.T, s string, from int) {
		if from < 0 || from > len(s) {
			return
		}
		if got, want := plainUntil(s, from), plainUntilByByte(s, from); got != want {
			t.Fatalf("plainUntil(%q, %d) = %d, want %d", s, from, got, want)
		}
	})
}

// BenchmarkPlainUntil moves past a path of a monorepo, eight bytes at a time and one at a time.
func BenchmarkPlainUntil(b *testing.B) {
	s := "internal-packages/database/prisma/migrations/20240101_init/migration.sql\""
	b.Run("words", func(b *testing.B) {
		for b.Loop() {
			if plainUntil(s, 0) != len(s)-1 {
				b.Fatal("wrong end")
			}
		}
	})
	b.Run("bytes", func(b *testing.B) {
		for b.Loop() {
			if plainUntilByByte(s, 0) != len(s)-1 {
				b.Fatal("wrong end")
			}
		}
	})
}
