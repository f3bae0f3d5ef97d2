package termsafe

import "testing"

func TestEscape(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"plain text is unchanged", "Add a cart badge → Header.tsx", "Add a cart badge → Header.tsx"},
		{"newline and tab stay", "a\tb\nc", "a\tb\nc"},
		{"ESC sequence is shown", "red \x1b[31mtext\x1b[0m", `red \x1b[31mtext\x1b[0m`},
		{"carriage return is shown", "ok\rFAIL", `ok\rFAIL`},
		{"bell and DEL", "\a\x7f", `\x07\u007f`},
		{"C1 CSI is shown", "a\u009b2J", `a\u009b2J`},
		{"invalid UTF-8 byte", "a\x9bb", `a\x9bb`},
		{"a real replacement character stays", "a\uFFFDb", "a\uFFFDb"},
		{"right-to-left override is shown", "invoice\u202egpj.exe", `invoice\u202egpj.exe`},
		{"every bidirectional control", "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u2066\u2067\u2068\u2069",
			`\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u2066\u2067\u2068\u2069`},
		{"right-to-left text itself stays", "שלום عربي \u2028", "שלום عربي \u2028"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Escape(tt.in); got != tt.want {
				t.Errorf("Escape(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// BenchmarkEscape escapes a line of plain text (the common case) and one with an escape
// sequence in it.
func BenchmarkEscape(b *testing.B) {
	plain := "   2      6  tool_call        read_file path=\"services/api/routes.ts\"\n"
	esc := "   1      2  user_message     \"Fix the \x1b[2J\x1b[31mred\x1b[0m banner in apps/web\"\n"
	for _, bc := range []struct{ name, s string }{{"plain", plain}, {"escape", esc}} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.s)))
			for b.Loop() {
				Escape(bc.s)
			}
		})
	}
}
