package main

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tasklog/tasklog/cmd/replay/internal/hookconf"
	"github.com/tasklog/tasklog/events/agentlog"
	"github.com/tasklog/tasklog/session/serve"
	"github.com/tasklog/tasklog/session/web"
)

// The files beside the database (its side file) that the HTTP hooks need: the address of the
// running server's HTTP listener, there while it runs, and the token every hook must carry,
// owner-only and kept across restarts so that installed hooks go on working.
func httpAddrFile(side string) string  { return side + ".http" }
func httpTokenFile(side string) string { return side + ".http-token" }

// hookToken reads the HTTP hooks' token beside the database, making one (32 random bytes, in
// an owner-only file) when there is none.
func hookToken(side string) (string, error) {
	p := httpTokenFile(side)
	for range 2 {
		b, err := os.ReadFile(p)
		if err == nil {
			fi, serr := os.Stat(p)
			if serr == nil && fi.Mode().Perm()&0o077 != 0 {
				return "", fmt.Errorf("%s can be read by other users: chmod 600 it, or remove it for a new token", p)
			}
			tok := strings.TrimSpace(string(b))
			if tok == "" {
				return "", fmt.Errorf("%s is empty: remove it for a new token", p)
			}
			return tok, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		var raw [32]byte
		if _, err := rand.Read(raw[:]); err != nil {
			return "", err
		}
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue // made by another process meanwhile: read that one
		}
		if err != nil {
			return "", err
		}
		_, werr := f.WriteString(hex.EncodeToString(raw[:]) + "\n")
		if err := errors.Join(werr, f.Close()); err != nil {
			return "", err
		}
	}
	return "", fmt.Errorf("%s: could not be read or made", p)
}

// serveHTTP listens on addr (loopback unless public: the caller checks it with web.CheckAddr) until srv stops, answering the agents'
// HTTP hooks under /hook/ and the read-only web app on every other path, says where the web
// app is on stdout, and writes the address beside the database for 'replay install --http'. A
// hook payload it could not record is spooled, and the fault logged, as 'replay hook' does.
// The returned function removes the address file.
//
// public lets addr be any address; the pages and the event streams then need the token, as
// the hooks always do, and the path of its file is printed (never the token).
func serveHTTP(srv *serve.Server, side, addr string, public bool, stdout io.Writer, lg *log.Logger) (func(), error) {
	token, err := hookToken(side)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--http %s: %w", addr, err)
	}
	endpoint := "http://" + localAddr(ln.Addr())
	if err := writeFileAtomic(httpAddrFile(side), []byte(endpoint+"\n"), 0o644); err != nil {
		ln.Close()
		return nil, err
	}
	var pageOpts web.Options
	if public {
		pageOpts.Token = token
	}
	pages := web.NewHandler(srv, pageOpts)
	opts := serve.HTTPOptions{Token: token, Budget: hookBudget, Pages: pages, Unrecorded: func(agent string, payload []byte, cause error) {
		line := fmt.Sprintf("%s replay serve HTTP hook %s: %v", time.Now().UTC().Format(time.RFC3339Nano), agent, cause)
		if err := spool(side, agentlog.Agent(agent), payload, time.Now()); err != nil {
			line += fmt.Sprintf("; spooling the payload failed too: %v", err)
		} else {
			line += "; the payload was spooled for the next hook to record"
		}
		hookconf.AppendLog(side, line+"\n")
	}}
	go func() {
		if err := srv.ServeHTTPHooks(ln, opts); err != nil {
			lg.Printf("HTTP: %v", err)
		}
	}()
	lg.Printf("web app on %s/", endpoint)
	if public {
		lg.Printf("web app public on %s: every request needs the token in %s", ln.Addr(), httpTokenFile(side))
		fmt.Fprintf(stdout, "replay serve: the web app is on http://%s/ for every machine that reaches it; open it once with ?token= and the token in %s\n",
			ln.Addr(), httpTokenFile(side))
	}
	fmt.Fprintf(stdout, "replay serve: the web app is on %s/\n", endpoint)
	return func() {
		if b, err := os.ReadFile(httpAddrFile(side)); err == nil && strings.TrimSpace(string(b)) == endpoint {
			os.Remove(httpAddrFile(side))
		}
	}, nil
}

// localAddr is where a client on this machine reaches a listener: an unspecified address
// (0.0.0.0, ::) as the loopback address of its family.
func localAddr(a net.Addr) string {
	ta, ok := a.(*net.TCPAddr)
	if !ok || !ta.IP.IsUnspecified() {
		return a.String()
	}
	ip := net.IPv4(127, 0, 0, 1)
	if ta.IP.To4() == nil {
		ip = net.IPv6loopback
	}
	return net.JoinHostPort(ip.String(), fmt.Sprint(ta.Port))
}

// writeFileAtomic writes a file through a temporary file renamed over it.
func writeFileAtomic(path string, data []byte, mode os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	_, werr := tmp.Write(data)
	if err := errors.Join(werr, tmp.Chmod(mode), tmp.Close()); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return nil
}

// errNoHTTPServer is returned by 'replay install --http' when no server answers HTTP hooks for
// the database.
var errNoHTTPServer = errors.New("no 'replay serve --http' is running for this database")

// httpHookEndpoint is the running server's HTTP hook URL for agent and its token, read beside
// the database (side file). A server must be running: its address file is there only then.
func httpHookEndpoint(side, agent string) (hookURL, token string, err error) {
	b, err := os.ReadFile(httpAddrFile(side))
	if errors.Is(err, fs.ErrNotExist) {
		return "", "", fmt.Errorf("%w (%s): start it first, 'replay serve --http 127.0.0.1:PORT --db %s', or install the command hook (without --http)",
			errNoHTTPServer, side, side)
	}
	if err != nil {
		return "", "", err
	}
	base := strings.TrimSpace(string(b))
	u, err := url.Parse(base)
	if err != nil || u.Scheme != "http" || web.CheckAddr(u.Host) != nil {
		return "", "", fmt.Errorf("%s holds %q, not a loopback http:// address: stop the server and start it again", httpAddrFile(side), base)
	}
	token, err = hookToken(side)
	if err != nil {
		return "", "", err
	}
	return base + serve.HTTPHookPath + agent, token, nil
}
