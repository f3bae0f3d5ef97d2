package rules

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func fieldMap(fm Frontmatter) map[string]any {
	m := map[string]any{}
	for _, f := range fm.Fields {
		m[f.Key] = f.Value
	}
	return m
}

func problemCodes(fm Frontmatter) []string {
	var out []string
	for _, p := range fm.Problems {
		out = append(out, p.Code)
	}
	return out
}

// The cases of Cline's frontmatter.test.ts, then the ones this package adds.
func TestParseFrontmatter(t *testing.T) {
	tests := []struct {
		name      string
		in        string
		present   bool
		failed    bool
		lenient   bool
		data      map[string]any
		body      string // compared after TrimSpace
		codes     []string
		rawIsBody bool
	}{
		{name: "cline: no frontmatter returns the original content", in: "Just text",
			data: map[string]any{}, body: "Just text"},
		{name: "cline: valid YAML frontmatter", in: "---\npaths:\n  - \"src/**\"\n---\n\nHello", present: true,
			data: map[string]any{"paths": []any{"src/**"}}, body: "Hello"},
		{name: "cline: malformed YAML fails open", in: "---\npaths: [invalid\n---\nBody", present: true, failed: true,
			data: map[string]any{}, rawIsBody: true, codes: []string{DiagParseError}},
		{name: "BOM, CRLF and leading blank lines", in: "\ufeff\r\n\r\n---\r\nalwaysApply: true\r\n---\r\nBody\r\nline 2\r\n", present: true,
			data: map[string]any{"alwaysApply": true}, body: "Body\nline 2"},
		{name: "cursor unquoted comma globs are read line by line", in: "---\ndescription: x\nglobs: *.ts,*.tsx\nalwaysApply: false\n---\nB", present: true, lenient: true,
			data: map[string]any{"description": "x", "globs": "*.ts,*.tsx", "alwaysApply": false}, body: "B",
			codes: []string{DiagUnquotedStar, DiagNotStrict}},
		{name: "lenient block list", in: "---\nglobs:\n  - **/*.ts\n  - \"*.md\"\n---\nB", present: true, lenient: true,
			data: map[string]any{"globs": []any{"**/*.ts", "*.md"}}, body: "B", codes: []string{DiagNotStrict}},
		{name: "empty frontmatter", in: "---\n---\nB", present: true, data: map[string]any{}, body: "B"},
		{name: "empty values", in: "---\ndescription:\nglobs:\nalwaysApply: true\n---\nB", present: true,
			data: map[string]any{"description": nil, "globs": nil, "alwaysApply": true}, body: "B"},
		{name: "unclosed frontmatter is body", in: "---\npaths: [a]\nBody", data: map[string]any{},
			rawIsBody: true, codes: []string{DiagParseError}},
		{name: "a --- later in the file is not frontmatter", in: "Intro\n---\nx: y\n---\n", data: map[string]any{}, rawIsBody: true},
		{name: "keys without fences", in: "description: x globs: [\"a\"]\n\nBody", data: map[string]any{}, rawIsBody: true,
			codes: []string{DiagNoDelimiters}},
		{name: "a list is not a mapping", in: "---\n- a\n- b\n---\nB", present: true, failed: true, data: map[string]any{},
			rawIsBody: true, codes: []string{DiagParseError}},
		{name: "object-building tags are read as text", in: "---\ndescription: !!python/object:os.system echo\n---\nB", present: true,
			data: map[string]any{"description": "echo"}, body: "B", codes: []string{DiagYAMLTag}},
		{name: "billion laughs is a diagnostic", in: "---\n" + laughs() + "---\nB", present: true, failed: true,
			data: map[string]any{}, rawIsBody: true, codes: []string{DiagYAMLLimits}},
		{name: "comment after a value", in: "---\nglobs: [\"*\"] # always\n---\nB", present: true,
			data: map[string]any{"globs": []any{"*"}}, body: "B"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fm := ParseFrontmatter(tt.in)
			if fm.Present != tt.present || fm.Failed != tt.failed || fm.Lenient != tt.lenient {
				t.Errorf("present/failed/lenient = %v/%v/%v, want %v/%v/%v (problems %v)", fm.Present, fm.Failed, fm.Lenient, tt.present, tt.failed, tt.lenient, fm.Problems)
			}
			if got := fieldMap(fm); !reflect.DeepEqual(got, tt.data) {
				t.Errorf("data = %#v, want %#v", got, tt.data)
			}
			want := tt.body
			if tt.rawIsBody {
				want = strings.TrimSpace(normalizeText(tt.in))
			}
			if got := strings.TrimSpace(fm.Body); got != want {
				t.Errorf("body = %q, want %q", got, want)
			}
			if got := problemCodes(fm); !reflect.DeepEqual(got, tt.codes) {
				t.Errorf("problem codes = %v, want %v (%v)", got, tt.codes, fm.Problems)
			}
		})
	}
}

func laughs() string {
	var sb strings.Builder
	sb.WriteString("a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n")
	prev := "a"
	for _, n := range []string{"b", "c", "d", "e", "f", "g", "h", "i"} {
		sb.WriteString(n + ": &" + n + " [")
		for i := 0; i < 9; i++ {
			if i > 0 {
				sb.WriteString(",")
			}
			sb.WriteString("*" + prev)
		}
		sb.WriteString("]\n")
		prev = n
	}
	return sb.String()
}

func TestSplitTopLevel(t *testing.T) {
	got := splitTopLevel(`**/*.{ts,tsx}, *.md,[a,b]/x, "q,r"`, ',')
	want := []string{"**/*.{ts,tsx}", " *.md", "[a,b]/x", ` "q,r"`}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// A key given twice is read from its first line, in strict YAML and line by line alike, with
// a warning on the second line naming the first.
func TestDuplicateKeyFirstIsRead(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		lenient  bool
		want     any
	}{
		{"strict", "---\npaths:\n  - \"src/**\"\ndescription: x\npaths: [\"docs/**\"]\n---\nBody", false, []any{"src/**"}},
		{"line by line", "---\nglobs: *.ts\nalwaysApply: false\nglobs: *.md\n---\nBody", true, "*.ts"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fm := ParseFrontmatter(tc.in)
			if fm.Lenient != tc.lenient || fm.Failed {
				t.Fatalf("lenient/failed = %v/%v, want %v/false", fm.Lenient, fm.Failed, tc.lenient)
			}
			key := "paths"
			if tc.lenient {
				key = "globs"
			}
			if f, _ := fm.Lookup(key); !reflect.DeepEqual(f.Value, tc.want) || f.Line != 2 {
				t.Errorf("%s = %#v on line %d, want %#v on line 2", key, f.Value, f.Line, tc.want)
			}
			var dup []Problem
			for _, p := range fm.Problems {
				if p.Code == DiagDuplicateKey {
					dup = append(dup, p)
				}
			}
			if len(dup) != 1 || dup[0].Severity != SeverityWarning || dup[0].Line < 4 ||
				!strings.Contains(dup[0].Message, `key "`+key+`" is given again (first on line 2)`) {
				t.Errorf("duplicate_key problems %+v, want one warning on the second %s naming line 2", dup, key)
			}
		})
	}
}

// Cline's reading of a file's frontmatter (rules/4): what its fence pattern and its YAML reader
// reject fails the rule open, and what only yaml.v3 rejects is read strictly; the block and the
// body are where Cline's fence pattern puts them. Each case was checked against Cline's pattern
// and js-yaml 4.
func TestClineRejects(t *testing.T) {
	for _, tt := range []struct {
		name, text string
		failed     bool
		// why is in the parse_error's message when failed; paths is the paths field otherwise.
		why, paths string
	}{
		{"strict YAML", "---\npaths:\n  - \"src/**\"\n---\nbody", false, "", "src/**"},
		{"an unquoted * in a list", "---\npaths: [**/*.ts]\n---\nbody", true, `quote each pattern that starts with * ("**/*.ts")`, ""},
		{"a tab in the indentation", "---\npaths:\n\t- \"src/**\"\n---\nbody", true, "indent with spaces", ""},
		{"a key given twice", "---\npaths:\n  - \"a/**\"\npaths:\n  - \"b/**\"\n---\nbody", true, `gives the key "paths" twice`, ""},
		{"a tag Cline does not know", "---\npaths:\n  - \"src/**\"\nx: !foo bar\n---\nbody", true, "a YAML tag Cline's YAML reader does not know", ""},
		{"a tab on a blank line", "---\npaths:\n  - \"src/**\"\n\t\n---\nbody", false, "", "src/**"},
		{"a tab before a comment", "---\npaths:\n  - \"src/**\"\n\t# the API\n---\nbody", false, "", "src/**"},
		{"an opening fence with a trailing space", "--- \npaths:\n  - \"src/**\"\n---\nbody", true, "Cline finds no frontmatter in this file", ""},
		{"a block closed by ...", "---\npaths:\n  - \"src/**\"\n...\nbody", true, "Cline finds no frontmatter in this file", ""},
		{"CRLF, a tab in the indentation and a * in the body", "---\r\npaths:\r\n\t- \"src/**\"\r\n---\r\n- **bold**\r\n", true, "indent with spaces", ""},
		{"leading blank lines and a BOM", "\ufeff\n\n---\npaths:\n  - \"src/**\"\n---\nbody", false, "", "src/**"},
		{"an indented opening fence", "  ---\npaths:\n  - \"src/**\"\n---\nbody", false, "", "src/**"},
		{"a closing line ---foo", "---\npaths:\n  - \"src/**\"\n---foo\nbody", false, "", "src/**"},
		{"a line ---- in the block", "---\npaths:\n  - \"src/**\"\n----\nmore: x\n---\nbody", false, "", "src/**"},
		{"an empty block", "---\n---\nbody", true, "Cline finds no frontmatter in this file", ""},
		{"a second document", "---\npaths:\n  - \"src/**\"\n...\nfoo: 1\n---\nbody", true, "more than one YAML document", ""},
		{"a second document after '... # end'", "---\npaths:\n  - \"src/**\"\n... # end\nfoo: 1\n---\nbody", true, "more than one YAML document", ""},
		{"a NEL before the fence, which JavaScript's trim keeps", "\u0085\n---\npaths:\n  - \"src/**\"\n---\nbody", true, "Cline finds no frontmatter in this file", ""},
		{"a block that is one value", "---\njust text\n---\nbody", false, "", ""},
		{"one value, then a second document", "---\ntext\n...\nfoo: 1\n---\nbody", true, "more than one YAML document", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fm := clineRejects(ParseFrontmatter(tt.text), normalizeText(tt.text))
			if fm.Failed != tt.failed {
				t.Fatalf("failed %v, want %v: %+v", fm.Failed, tt.failed, fm.Problems)
			}
			if tt.failed {
				var msgs []string
				for _, p := range fm.Problems {
					if p.Code == DiagParseError {
						msgs = append(msgs, p.Message)
					}
				}
				if len(msgs) != 1 || !strings.Contains(msgs[0], tt.why) || !strings.HasSuffix(msgs[0], "; Cline keeps the rule always on, with the whole file as its body") {
					t.Errorf("parse_error %q, want one saying %q", msgs, tt.why)
				}
				if fm.Body != normalizeText(tt.text) {
					t.Errorf("body %q, want the whole file", fm.Body)
				}
				return
			}
			f, ok := fm.Lookup("paths")
			if tt.paths == "" && ok || tt.paths != "" && (!ok || fmt.Sprint(f.Value) != "["+tt.paths+"]") || fm.Lenient {
				t.Errorf("paths %v (%v), lenient %v; want [%s] read strictly", f.Value, ok, fm.Lenient, tt.paths)
			}
			// Cline's body is what follows its closing line's ---.
			if body := strings.TrimSpace(fm.Body); !strings.HasSuffix(body, "body") || strings.Contains(body, "paths:") {
				t.Errorf("body %q, want what follows the block", body)
			}
		})
	}
}
