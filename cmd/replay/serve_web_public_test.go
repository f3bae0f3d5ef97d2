package main

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tasklog/tasklog/cmd/replay/internal/testenv"
	"github.com/tasklog/tasklog/session/web"
)

// TestServeWebPublic: 'replay serve --http ADDR --http-public' (here on 127.0.0.1, as any
// address) prints the path of its token's file, never the token; every page, event stream and
// hook without the token is answered 401; ?token= logs a browser in with an HttpOnly,
// SameSite=Strict cookie, which opens the pages; the hooks take the same token as a bearer.
func TestServeWebPublic(t *testing.T) {
	bin := testenv.ReplayBinary(t)
	db := filepath.Join(t.TempDir(), "tasklog.db")
	base, said := startWebServerArgs(t, bin, db, nil, "--http-public")
	tokenFile := db + ".http-token"
	raw, err := os.ReadFile(tokenFile)
	if err != nil {
		t.Fatal(err)
	}
	token := strings.TrimSpace(string(raw))
	if fi, err := os.Stat(tokenFile); err != nil {
		t.Errorf("the token's file: %v", err)
	} else if fi.Mode().Perm() != 0o600 {
		t.Errorf("the token's file has mode %v, want 0600", fi.Mode().Perm())
	}
	if !strings.Contains(said, "open it once with ?token= and the token in "+tokenFile) || strings.Contains(said, token) {
		t.Errorf("the server printed %q: want the token's file named, and the token not shown", said)
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	status := func(method, path string, set func(*http.Request)) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(method, base+strings.TrimPrefix(path, "/"), strings.NewReader("{}"))
		req.Host = "tasks.example"
		if set != nil {
			set(req)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	for _, p := range []struct{ method, path string }{
		{"GET", "/"}, {"GET", "/rules"}, {"GET", "/task/0b3c7f2a-1d4e-4f5a-9b6c-7d8e9f0a1b2c/events"}, {"GET", "/?token=nope"}, {"POST", "/hook/claude-code"},
	} {
		if resp := status(p.method, p.path, nil); resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s %s without the token: %s, want 401", p.method, p.path, resp.Status)
		}
	}
	resp := status("GET", "/?token="+token, nil)
	cookies := resp.Cookies()
	if resp.StatusCode != http.StatusSeeOther || len(cookies) != 1 || cookies[0].Name != web.TokenCookie || !cookies[0].HttpOnly || cookies[0].SameSite != http.SameSiteStrictMode {
		t.Fatalf("?token=: %s, cookies %+v: want 303 and an HttpOnly, SameSite=Strict cookie", resp.Status, cookies)
	}
	if resp := status("GET", "/", func(r *http.Request) { r.AddCookie(cookies[0]) }); resp.StatusCode != http.StatusOK {
		t.Errorf("GET / with the cookie: %s", resp.Status)
	}
	if resp := status("POST", "/hook/claude-code", func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+token) }); resp.StatusCode != http.StatusOK {
		t.Errorf("a hook with the token: %s", resp.Status)
	}
}
