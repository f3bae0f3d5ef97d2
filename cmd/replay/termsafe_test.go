package main

import "testing"

func TestEscapeControls(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"plain text is unchanged", "Add a cart badge → Header.tsx", "Add a cart badge → Header.tsx"},
		{"newline and tab stay", "a\tb\nc", "a\tb\nc"},
		{"ESC sequence is shown", "red \x1b[31mtext\x1b[0m", `red \x1b[31mtext\x1b[0m`},
		{"carriage return is shown", "ok\rFAIL", `ok\rFAIL`},
		{"bell and DEL", "\a\x7f", `\x07\u007f`},
		{"C1 CSI is shown", "a\u009b2J", `a\u009b2J`},
		{"invalid UTF-8 byte", "a\x9bb", `a\x9bb`},
		{"a real replacement character stays", "a\uFFFDb", "a\uFFFDb"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := escapeControls(tt.in); got != tt.want {
				t.Errorf("escapeControls(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}
