package projections

import (
	"strings"
	"testing"
)

func TestNormalize(t *testing.T) {
	posix := []string{"/ws/app"}
	multi := []string{"/ws/app", "/ws/lib", "/ws/app/packages/core"}
	win := []string{`C:\Users\dev\proj`}
	tests := []struct {
		name      string
		p         string
		roots     []string
		cwd       string
		root, rel string
		reason    string
	}{
		{"relative to primary", "src/a.ts", posix, "", "/ws/app", "src/a.ts", ""},
		{"leading ./", "./src/a.ts", posix, "", "/ws/app", "src/a.ts", ""},
		{"absolute in root", "/ws/app/src/a.ts", posix, "", "/ws/app", "src/a.ts", ""},
		{"directory keeps slash", "/ws/app/src/", posix, "", "/ws/app", "src/", ""},
		{"inner dot and double slash", "/ws/app/./src//a.ts", posix, "", "/ws/app", "src/a.ts", ""},
		{"dotdot inside root", "src/x/../a.ts", posix, "", "/ws/app", "src/a.ts", ""},
		{"dotdot escapes root", "../other/a.ts", posix, "", "", "", ReasonDotDot},
		{"absolute dotdot escapes", "/ws/app/../secret", posix, "", "", "", ReasonDotDot},
		{"dotdot above /", "/../x", posix, "", "", "", ReasonDotDot},
		{"outside root", "/etc/passwd", posix, "", "", "", ReasonOutsideRoot},
		{"prefix is not containment", "/ws/application/x.ts", posix, "", "", "", ReasonOutsideRoot},
		{"root itself", "/ws/app", posix, "", "", "", ReasonRoot},
		{"root itself as dir", "/ws/app/", posix, "", "", "", ReasonRoot},
		{"tilde", "~/notes.md", posix, "", "", "", ReasonUnmappable},
		{"empty", "  ", posix, "", "", "", ReasonNotAPath},
		{"https", "https://example.com/a.ts", posix, "", "", "", ReasonNotAPath},
		{"other scheme", "untitled:Untitled-1", posix, "", "", "", ReasonNotAPath},

		{"multi-root second", "/ws/lib/util.go", multi, "", "/ws/lib", "util.go", ""},
		{"multi-root longest wins", "/ws/app/packages/core/x.ts", multi, "", "/ws/app/packages/core", "x.ts", ""},
		{"multi-root relative is primary", "packages/core/x.ts", multi, "", "/ws/app/packages/core", "x.ts", ""},
		{"multi-root dotdot into sibling root", "../lib/util.go", multi, "", "", "", ReasonDotDot},
		{"multi-root absolute dotdot into sibling root", "/ws/app/../lib/util.go", multi, "", "", "", ReasonDotDot},
		{"multi-root absolute dotdot out of a nested root", "/ws/app/packages/core/../../src/a.ts", multi, "", "", "", ReasonDotDot},
		{"multi-root absolute dotdot inside its root", "/ws/lib/x/../util.go", multi, "", "/ws/lib", "util.go", ""},
		{"absolute dotdot from outside into a root", "/ws/other/../app/a.ts", posix, "", "/ws/app", "a.ts", ""},

		{"cwd absolute", "a.ts", posix, "/ws/app/src", "/ws/app", "src/a.ts", ""},
		{"cwd relative", "a.ts", posix, "src", "/ws/app", "src/a.ts", ""},
		{"cwd in other root", "util.go", multi, "/ws/lib", "/ws/lib", "util.go", ""},
		{"cwd outside roots", "a.ts", posix, "/tmp", "", "", ReasonOutsideRoot},
		{"cwd tilde", "a.ts", posix, "~/x", "", "", ReasonUnmappable},
		{"cwd ignored for absolute", "/ws/app/a.ts", posix, "/tmp", "/ws/app", "a.ts", ""},

		{"windows backslashes", `C:\Users\dev\proj\src\a.ts`, win, "", `C:\Users\dev\proj`, "src/a.ts", ""},
		{"windows drive case", `c:/Users/dev/proj/src/a.ts`, win, "", `C:\Users\dev\proj`, "src/a.ts", ""},
		{"windows relative backslashes", `src\a.ts`, win, "", `C:\Users\dev\proj`, "src/a.ts", ""},
		{"windows other drive", `D:\proj\a.ts`, win, "", "", "", ReasonOutsideRoot},
		{"windows drive-relative", `C:proj\a.ts`, win, "", "", "", ReasonUnmappable},
		{"windows rest is case-sensitive", `C:\users\dev\proj\a.ts`, win, "", "", "", ReasonOutsideRoot},
		{"unc", `\\server\share\proj\a.ts`, []string{`\\server\share\proj`}, "", `\\server\share\proj`, "a.ts", ""},

		{"file uri", "file:///ws/app/src/a%20b.ts", posix, "", "/ws/app", "src/a b.ts", ""},
		{"file uri localhost", "file://localhost/ws/app/a.ts", posix, "", "/ws/app", "a.ts", ""},
		{"file uri windows", "file:///c%3A/Users/dev/proj/a.ts", win, "", `C:\Users\dev\proj`, "a.ts", ""},
		{"file uri windows plain colon", "file:///C:/Users/dev/proj/a.ts", win, "", `C:\Users\dev\proj`, "a.ts", ""},
		{"file uri unc", "file://server/share/proj/a.ts", []string{`\\server\share\proj`}, "", `\\server\share\proj`, "a.ts", ""},
		{"file uri bad escape", "file:///ws/app/%zz", posix, "", "", "", ReasonNotAPath},
		{"file uri root is uri", "/ws/app/a.ts", []string{"file:///ws/app"}, "", "file:///ws/app", "a.ts", ""},

		{"no roots relative", "src/a.ts", nil, "", "", "src/a.ts", ""},
		{"no roots dotdot", "../a.ts", nil, "", "", "", ReasonDotDot},
		{"no roots absolute", "/ws/a.ts", nil, "", "", "", ReasonOutsideRoot},
		{"root /", "/etc/hosts", []string{"/"}, "", "/", "etc/hosts", ""},

		{"nul", "etc/passwd\x00.txt", posix, "", "", "", ReasonControl},
		{"nul in file uri", "file:///ws/app/etc/passwd%00.txt", posix, "", "", "", ReasonControl},
		{"escape", "src/\x1b[31ma.ts", posix, "", "", "", ReasonControl},
		{"tab inside", "src/a\tb.ts", posix, "", "", "", ReasonControl},
		{"delete", "src/a\x7f.ts", posix, "", "", "", ReasonControl},
		{"c1 control", "src/a\u009b.ts", posix, "", "", "", ReasonControl},
		{"nul in cwd", "a.ts", posix, "src\x00", "", "", ReasonControl},
		{"surrounding newline trimmed", "src/a.ts\n", posix, "", "/ws/app", "src/a.ts", ""},
		{"longest kept", strings.Repeat("a/", MaxPathLength/2-1) + "ab", nil, "", "", strings.Repeat("a/", MaxPathLength/2-1) + "ab", ""},
		{"too long", strings.Repeat("a/", MaxPathLength/2) + "b", posix, "", "", "", ReasonTooLong},
		{"too long when decoded", "file:///ws/app/" + strings.Repeat("%61", MaxPathLength), posix, "", "", "", ReasonTooLong},
		{"percent-encoded within bound", "file:///ws/app/" + strings.Repeat("%61", 4000), posix, "", "/ws/app", strings.Repeat("a", 4000), ""},
		{"far too long", strings.Repeat("a", 4*MaxPathLength), posix, "", "", "", ReasonTooLong},
		{"nfd becomes nfc", "docs/Cafe\u0301.md", posix, "", "/ws/app", "docs/Caf\u00e9.md", ""},
		{"nfc stays", "docs/Caf\u00e9.md", posix, "", "/ws/app", "docs/Caf\u00e9.md", ""},
		{"nfd root", "/ws/Cafe\u0301/a.md", []string{"/ws/Caf\u00e9"}, "", "/ws/Caf\u00e9", "a.md", ""},
		{"nfc path in nfd root", "/ws/Caf\u00e9/a.md", []string{"/ws/Cafe\u0301"}, "", "/ws/Cafe\u0301", "a.md", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root, rel, reason := Normalize(tt.p, tt.roots, tt.cwd)
			if root != tt.root || rel != tt.rel || reason != tt.reason {
				t.Errorf("Normalize(%q, %q, %q) = (%q, %q, %q), want (%q, %q, %q)",
					tt.p, tt.roots, tt.cwd, root, rel, reason, tt.root, tt.rel, tt.reason)
			}
		})
	}
}

// TestContainsJoined: looking a path up in two parts finds what looking it up whole finds,
// whichever part the roots end in.
// containsWhole is what contains and containsJoined find, worked out on the whole path: the
// root with the longest match and the path relative to it ("" for the root itself), or -1.
func containsWhole(rs rootSet, abs string) (int, string) {
	best, rel := -1, ""
	for i, r := range rs.strs {
		if r == "" || len(r) > len(abs) || best >= 0 && len(r) <= len(rs.strs[best]) {
			continue
		}
		switch {
		case abs == r:
			best, rel = i, ""
		case strings.HasPrefix(abs, r) && strings.HasSuffix(r, "/"): // "/" or "c:/"
			best, rel = i, abs[len(r):]
		case strings.HasPrefix(abs, r) && abs[len(r)] == '/':
			best, rel = i, abs[len(r)+1:]
		}
	}
	return best, rel
}

func TestContainsJoined(t *testing.T) {
	rootSets := [][]string{
		{"/ws/app"}, {"/"}, {"/ws/app", "/ws/app/packages/core", "/ws/lib"}, {`C:\`, `C:\w`},
		{"//host/share", "/ws"}, {"relative", "/ws"}, {},
	}
	paths := []string{"/ws/app", "/ws/app/", "/ws/app/src/a.ts", "/ws/application/x", "/ws/app/packages/core/x.ts",
		"/ws/lib", "/", "/x", "c:/w/a", "c:/", "c:/wx", "//host/share/a", "//host/sharex", "//", "/ws", ""}
	for _, roots := range rootSets {
		rs := prepareRoots(roots)
		for _, p := range paths {
			wantRoot, wantRel := containsWhole(rs, p)
			for cut := 0; cut <= len(p); cut++ {
				root, rel := rs.containsJoined(p[:cut], p[cut:])
				if root != wantRoot || rel != wantRel {
					t.Errorf("roots %q: %q + %q gives %d %q; whole, %d %q", roots, p[:cut], p[cut:],
						root, rel, wantRoot, wantRel)
				}
			}
		}
	}
}
