package agentlog

import (
	"net/url"
	"path"
	"strings"
)

// resolvePath turns a path as an agent wrote it into an absolute path in the original machine's
// namespace: POSIX separators, Windows drives upper-cased ("C:/Users/x/a.ts"), "." and ".."
// removed. Relative paths are resolved against cwd (itself already resolved) and "~" against
// home. ok is false for what is not a file path (a URL) or cannot be resolved (a relative path
// with no cwd, "~" with no home).
func resolvePath(p, cwd, home string) (string, bool) {
	p = strings.TrimSpace(p)
	p = strings.Trim(p, "\"'`")
	p = strings.TrimPrefix(p, "@")
	if rest, ok := strings.CutPrefix(p, "file://"); ok {
		if u, err := url.PathUnescape(rest); err == nil {
			rest = u
		}
		p = rest
	}
	if p == "" || strings.Contains(p, "://") {
		return "", false
	}
	p = strings.ReplaceAll(p, `\`, "/")
	if len(p) >= 3 && p[0] == '/' && isDrive(p[1:]) {
		p = p[1:] // "/c:/x", the VS Code URI form
	}
	switch {
	case isDrive(p):
		return strings.ToUpper(p[:1]) + ":" + path.Clean("/"+p[2:]), true
	case strings.HasPrefix(p, "//"):
		return "/" + path.Clean(p[1:]), true // UNC share
	case strings.HasPrefix(p, "/"):
		return path.Clean(p), true
	case p == "~" || strings.HasPrefix(p, "~/"):
		if home == "" {
			return "", false
		}
		return joinPath(home, strings.TrimPrefix(strings.TrimPrefix(p, "~"), "/")), true
	}
	if cwd == "" {
		return "", false
	}
	return joinPath(cwd, p), true
}

// joinPath joins a relative path to an absolute base produced by resolvePath.
func joinPath(base, rel string) string {
	if isDrive(base) {
		return base[:2] + path.Clean("/"+base[2:]+"/"+rel)
	}
	if strings.HasPrefix(base, "//") {
		return "/" + path.Clean(base[1:]+"/"+rel)
	}
	return path.Clean(base + "/" + rel)
}

// isDrive reports whether p starts with a Windows drive ("c:", "C:/…").
func isDrive(p string) bool {
	if len(p) < 2 || p[1] != ':' {
		return false
	}
	c := p[0] | 0x20
	return c >= 'a' && c <= 'z' && (len(p) == 2 || p[2] == '/' || p[2] == '\\')
}

// homeOf guesses the home directory from a resolved working directory under a conventional
// home ("/Users/x", "/home/x", "C:/Users/x", "/root"); empty when it cannot tell.
func homeOf(cwd string) string {
	rest := cwd
	prefix := ""
	if isDrive(cwd) {
		prefix, rest = cwd[:2], cwd[2:]
	}
	for _, base := range []string{"/Users/", "/home/"} {
		if r, ok := strings.CutPrefix(rest, base); ok && r != "" {
			user, _, _ := strings.Cut(r, "/")
			return prefix + base + user
		}
	}
	if prefix == "" && (rest == "/root" || strings.HasPrefix(rest, "/root/")) {
		return "/root"
	}
	return ""
}

// osOf infers the operating system from a resolved path when the path tells: a drive letter
// means Windows. Empty otherwise.
func osOf(p string) string {
	if isDrive(p) {
		return "windows"
	}
	return ""
}

// cleanRaw is the fallback spelling of a path that could not be resolved: POSIX separators and
// no leading "@", so it is still comparable.
func cleanRaw(p string) string {
	p = strings.TrimPrefix(strings.TrimSpace(p), "@")
	return path.Clean(strings.ReplaceAll(p, `\`, "/"))
}
