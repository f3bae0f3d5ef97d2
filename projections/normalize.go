package projections

import (
	"net/url"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// MaxPathLength is the longest path kept, in bytes (as spelled, and again once a file URI is
// decoded): longer than any operating system's path limit, so what is longer is not a path.
const MaxPathLength = 4096

// The reasons a candidate path is left out of the context, as Dropped reports them.
const (
	// ReasonOutsideRoot: an absolute path (or one resolved against a cwd) that no workspace root
	// contains.
	ReasonOutsideRoot = "outside_root"
	// ReasonDotDot: a ".." segment took the path out of its root.
	ReasonDotDot = "dotdot"
	// ReasonUnmappable: a path that cannot be placed on the file system from the log alone ("~",
	// a drive-relative "C:x", a file URI on another host).
	ReasonUnmappable = "unmappable"
	// ReasonNotAPath: empty, or a URI of a scheme other than file.
	ReasonNotAPath = "not_a_path"
	// ReasonRoot: the workspace root itself, which no rule pattern can match.
	ReasonRoot = "root"
	// ReasonOverCap: evidence beyond MaxPaths, the oldest and least confident first.
	ReasonOverCap = "over_cap"
	// ReasonControl: a NUL or another control character (C0, DEL or C1), which no file name a
	// person means holds and which would let "etc/**" match "etc/passwd\x00.txt".
	ReasonControl = "control_char"
	// ReasonTooLong: longer than MaxPathLength bytes.
	ReasonTooLong = "too_long"
	// ReasonUnconfirmed: a path guessed from prose or a shell command that was neither in a root
	// nor named by other evidence when it was recorded (see Config.ActivateUnconfirmed).
	ReasonUnconfirmed = "unconfirmed"
)

// reasons lists every reason in the order snapshots store their counts; appending is a change of
// Version.
var reasons = [...]string{ReasonOutsideRoot, ReasonDotDot, ReasonUnmappable, ReasonNotAPath,
	ReasonRoot, ReasonOverCap, ReasonControl, ReasonTooLong, ReasonUnconfirmed}

const numReasons = len(reasons)

func reasonIndex(r string) int {
	for i, s := range reasons {
		if s == r {
			return i
		}
	}
	panic("projections: unknown drop reason " + r)
}

// Normalize maps a path as an agent or editor spelled it to the workspace root that contains it
// and the root-relative POSIX path under it. roots are the workspace roots of task_started (the
// first is the primary); cwd, when set, is what a relative p is relative to (itself relative to
// the primary root when it is relative). It returns the root as recorded in roots, the relative
// path (directories end in "/") and reason "" when the path is kept, or one of the Reason
// constants when it is not.
//
// Accepted spellings: POSIX and Windows separators, drive letters in either case, UNC paths,
// file:// URIs (percent-decoded), a leading "./". The root with the longest match wins, so a root
// nested in another owns its files. Only the drive letter is compared without regard to case:
// the log does not say whether the file system folds case. Paths and roots are compared, and
// returned, in Unicode NFC, so that a name macOS spelled decomposed (NFD) is the name typed
// elsewhere; a path holding a control character or longer than MaxPathLength is dropped.
func Normalize(p string, roots []string, cwd string) (root, rel string, reason string) {
	rs := prepareRoots(roots)
	i, rel, reason := rs.normalize(p, cwd)
	if reason != "" {
		return "", "", reason
	}
	if i >= 0 {
		root = roots[i]
	}
	return root, rel, ""
}

// absPath is a lexically cleaned path: prefix is "/" (POSIX), "c:/" (a drive, lower-cased), "//"
// (UNC) or "" (relative, only when the task has no usable root).
type absPath struct {
	prefix string
	segs   []string
}

func (a absPath) String() string { return a.prefix + strings.Join(a.segs, "/") }

// rootSet holds the normalized workspace roots of a task.
type rootSet struct {
	roots []absPath
	strs  []string // roots[i].String(); "" for a root that is not absolute, which never matches
	// primaryDir is strs[0] ending in "/", what a relative path is joined to.
	primaryDir string
}

func prepareRoots(roots []string) rootSet {
	rs := rootSet{roots: make([]absPath, len(roots)), strs: make([]string, len(roots))}
	for i, r := range roots {
		prefix, rest, reason := splitPath(r)
		if reason != "" || prefix == "" {
			continue
		}
		a, escaped := resolve(absPath{prefix: prefix}, rest)
		if escaped {
			continue
		}
		rs.roots[i], rs.strs[i] = a, a.String()
	}
	if len(rs.strs) > 0 && rs.strs[0] != "" {
		rs.primaryDir = strings.TrimSuffix(rs.strs[0], "/") + "/"
	}
	return rs
}

// primary is the base of relative paths: roots[0] when it is usable.
func (rs rootSet) primary() (absPath, bool) {
	if len(rs.roots) == 0 || rs.strs[0] == "" {
		return absPath{}, false
	}
	return rs.roots[0], true
}

// contains returns the index of the root with the longest match for the clean absolute path
// abs, and the path relative to it ("" for the root itself), or -1.
func (rs rootSet) contains(abs string) (int, string) { return rs.containsJoined(abs, "") }

// normalize is Normalize on prepared roots; it returns the root's index (-1 for a relative path
// in a task without roots).
func (rs rootSet) normalize(p, cwd string) (int, string, string) {
	prefix, rest, reason := splitPath(p)
	if reason != "" {
		return -1, "", reason
	}
	dir := strings.HasSuffix(rest, "/")
	hadDotDot := false
	baseRoot := -1
	var abs string
	switch {
	case prefix != "" && isClean(rest):
		// The common case: nothing to resolve, and the path is prefix + rest.
		i, rel := rs.containsJoined(prefix, strings.TrimSuffix(rest, "/"))
		return rs.kept(i, rel, false, dir)
	case prefix == "" && strings.TrimSpace(cwd) == "" && len(rs.strs) > 0 && rs.strs[0] != "" && isClean(rest):
		i, rel := rs.containsJoined(rs.primaryDir, strings.TrimSuffix(rest, "/"))
		return rs.kept(i, rel, false, dir)
	case prefix != "":
		a, escaped := resolve(absPath{prefix: prefix}, rest)
		if escaped {
			return -1, "", ReasonDotDot
		}
		abs, hadDotDot = a.String(), hasDotDot(rest)
		if hadDotDot {
			// The root the path stands in before its first "..": a ".." may not take it out of
			// that root, as it may not a path relative to a folder in it (/ws/../ws2/x is not
			// ws2's x, and a nested root's ../x is dropped, not its parent root's x).
			head, _ := resolve(absPath{prefix: prefix}, beforeDotDot(rest))
			baseRoot, _ = rs.contains(head.String())
		}
	default:
		base, ok, reason := rs.base(cwd)
		if reason != "" {
			return -1, "", reason
		}
		a, escaped := resolve(base, rest)
		if escaped {
			return -1, "", ReasonDotDot
		}
		if !ok {
			return rs.relativeOnly(a, dir)
		}
		abs, hadDotDot = a.String(), hasDotDot(rest)
		if hadDotDot {
			baseRoot, _ = rs.contains(base.String())
		}
	}
	i, rel := rs.contains(abs)
	if hadDotDot && baseRoot >= 0 && i != baseRoot {
		return -1, "", ReasonDotDot
	}
	return rs.kept(i, rel, hadDotDot, dir)
}

// beforeDotDot is rest up to its first ".." segment.
func beforeDotDot(rest string) string {
	segs := strings.Split(rest, "/")
	for i, s := range segs {
		if s == ".." {
			return strings.Join(segs[:i], "/")
		}
	}
	return rest
}

// kept is normalize's answer for the path rel under root i (-1 for none).
func (rs rootSet) kept(i int, rel string, hadDotDot, dir bool) (int, string, string) {
	switch {
	case i < 0 && hadDotDot:
		return -1, "", ReasonDotDot
	case i < 0:
		return -1, "", ReasonOutsideRoot
	case rel == "":
		return -1, "", ReasonRoot
	}
	if dir {
		rel += "/"
	}
	return i, rel, ""
}

// containsJoined is contains(a + b), joining the two only when the relative path starts inside
// a: for a path under a root (a the prefix or the primary root's directory) it is a part of b.
func (rs rootSet) containsJoined(a, b string) (int, string) {
	n := len(a) + len(b)
	best, rel := -1, ""
	for i, r := range rs.strs {
		if r == "" || len(r) > n || best >= 0 && len(r) <= len(rs.strs[best]) || !joinedHasPrefix(a, b, r) {
			continue
		}
		switch {
		case n == len(r):
			best, rel = i, ""
		case strings.HasSuffix(r, "/"): // "/" or "c:/"
			best, rel = i, joinedFrom(a, b, len(r))
		case joinedAt(a, b, len(r)) == '/':
			best, rel = i, joinedFrom(a, b, len(r)+1)
		}
	}
	return best, rel
}

// joinedHasPrefix is strings.HasPrefix(a+b, r).
func joinedHasPrefix(a, b, r string) bool {
	if len(r) <= len(a) {
		return strings.HasPrefix(a, r)
	}
	return strings.HasPrefix(r, a) && strings.HasPrefix(b, r[len(a):])
}

// joinedAt is (a+b)[i].
func joinedAt(a, b string, i int) byte {
	if i < len(a) {
		return a[i]
	}
	return b[i-len(a)]
}

// joinedFrom is (a+b)[i:].
func joinedFrom(a, b string, i int) string {
	if i >= len(a) {
		return b[i-len(a):]
	}
	return a[i:] + b
}

// isClean reports a path remainder with no empty, "." or ".." segment (a trailing "/" aside).
func isClean(rest string) bool {
	rest = strings.TrimSuffix(rest, "/")
	if rest == "" {
		return true
	}
	for s := range strings.SplitSeq(rest, "/") {
		if s == "" || s == "." || s == ".." {
			return false
		}
	}
	return true
}

// relativeOnly keeps a relative path of a task that has no usable root: it is relative to the
// workspace, whatever that is.
func (rs rootSet) relativeOnly(a absPath, dir bool) (int, string, string) {
	if len(a.segs) == 0 {
		return -1, "", ReasonRoot
	}
	rel := strings.Join(a.segs, "/")
	if dir {
		rel += "/"
	}
	return -1, rel, ""
}

// base is what a relative path is relative to: the cwd, itself resolved against the primary root
// when relative, else the primary root. ok is false when there is no absolute base at all.
func (rs rootSet) base(cwd string) (absPath, bool, string) {
	primary, hasPrimary := rs.primary()
	if strings.TrimSpace(cwd) == "" {
		return primary, hasPrimary, ""
	}
	prefix, rest, reason := splitPath(cwd)
	if reason != "" {
		return absPath{}, false, reason
	}
	if prefix != "" {
		a, escaped := resolve(absPath{prefix: prefix}, rest)
		if escaped {
			return absPath{}, false, ReasonDotDot
		}
		return a, true, ""
	}
	a, escaped := resolve(primary, rest)
	if escaped {
		return absPath{}, false, ReasonDotDot
	}
	return a, hasPrimary, ""
}

// splitPath undoes URI encoding and Windows spelling and splits off the absolute prefix; rest is
// the remainder with "/" separators.
func splitPath(p string) (prefix, rest, reason string) {
	if len(p) > 3*MaxPathLength+64 { // room for percent-encoding and spaces; checked exactly below
		return "", "", ReasonTooLong
	}
	p = strings.TrimSpace(p)
	if p == "" {
		return "", "", ReasonNotAPath
	}
	if hasSchemeFold(p, "file") {
		var reason string
		if p, reason = fromFileURI(p); reason != "" {
			return "", "", reason
		}
	} else if hasScheme(p) {
		return "", "", ReasonNotAPath
	}
	if p, reason = cleanText(p); reason != "" {
		return "", "", reason
	}
	p = strings.ReplaceAll(p, `\`, "/")
	switch {
	case p == "~" || strings.HasPrefix(p, "~"):
		return "", "", ReasonUnmappable
	case isDrive(p):
		if len(p) == 2 || p[2] != '/' {
			return "", "", ReasonUnmappable // drive-relative: depends on that drive's cwd
		}
		return strings.ToLower(p[:1]) + ":/", p[3:], ""
	case strings.HasPrefix(p, "//"):
		return "//", p[2:], ""
	case strings.HasPrefix(p, "/"):
		return "/", p[1:], ""
	}
	return "", p, ""
}

// cleanText checks a path's text (a URI decoded) and returns it in NFC.
func cleanText(p string) (string, string) {
	if len(p) > MaxPathLength {
		return "", ReasonTooLong
	}
	ascii := true
	for i := 0; i < len(p); i++ {
		c := p[i]
		if c < 0x20 || c == 0x7f {
			return "", ReasonControl
		}
		if c >= utf8.RuneSelf {
			ascii = false
		}
	}
	if ascii {
		return p, ""
	}
	for _, r := range p {
		if r >= 0x80 && r <= 0x9f {
			return "", ReasonControl
		}
	}
	p = norm.NFC.String(p)
	if len(p) > MaxPathLength { // a few characters are longer composed
		return "", ReasonTooLong
	}
	return p, ""
}

func isDrive(p string) bool {
	return len(p) >= 2 && p[1] == ':' && isASCIILetter(p[0])
}

func isASCIILetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

// hasScheme reports a URI scheme of two or more characters; a single letter is a drive.
func hasScheme(p string) bool {
	i := strings.IndexByte(p, ':')
	if i < 2 || !isASCIILetter(p[0]) {
		return false
	}
	for j := 1; j < i; j++ {
		c := p[j]
		if !isASCIILetter(c) && (c < '0' || c > '9') && c != '+' && c != '-' && c != '.' {
			return false
		}
	}
	return true
}

func hasSchemeFold(p, scheme string) bool {
	return len(p) > len(scheme) && p[len(scheme)] == ':' && strings.EqualFold(p[:len(scheme)], scheme)
}

// fromFileURI turns file:///c%3A/x, file:///home/x and file://host/share/x into paths.
func fromFileURI(p string) (string, string) {
	p = p[len("file:"):]
	if strings.HasPrefix(p, "//") {
		p = p[2:]
		host := p
		if i := strings.IndexByte(p, '/'); i >= 0 {
			host, p = p[:i], p[i:]
		} else {
			p = ""
		}
		switch {
		case host == "" || strings.EqualFold(host, "localhost"):
		default:
			p = "//" + host + p // a UNC share, which a root may name
		}
	}
	if i := strings.IndexAny(p, "?#"); i >= 0 {
		p = p[:i]
	}
	dec, err := url.PathUnescape(p)
	if err != nil || dec == "" {
		return "", ReasonNotAPath
	}
	if len(dec) >= 3 && dec[0] == '/' && isDrive(dec[1:]) {
		dec = dec[1:] // "/c:/x" is how a URI spells a drive
	}
	return dec, ""
}

func hasDotDot(rest string) bool {
	for s := range strings.SplitSeq(rest, "/") {
		if s == ".." {
			return true
		}
	}
	return false
}

// resolve appends rest's segments to base, dropping "" and "." and applying "..". escaped
// reports a ".." that climbed above base's prefix.
func resolve(base absPath, rest string) (absPath, bool) {
	segs := make([]string, len(base.segs), len(base.segs)+strings.Count(rest, "/")+1)
	copy(segs, base.segs)
	for s := range strings.SplitSeq(rest, "/") {
		switch s {
		case "", ".":
		case "..":
			if len(segs) == 0 {
				return absPath{}, true
			}
			segs = segs[:len(segs)-1]
		default:
			segs = append(segs, s)
		}
	}
	return absPath{prefix: base.prefix, segs: segs}, false
}
