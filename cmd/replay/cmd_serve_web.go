package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"time"

	"github.com/tasklog/tasklog/session/serve"
	"github.com/tasklog/tasklog/session/web"
)

// serveWeb serves the web app of srv's store on addr (a loopback address: web.CheckAddr) until
// the returned function stops it, and says where on stdout.
func serveWeb(addr string, srv *serve.Server, stdout io.Writer, lg *log.Logger) (func(), error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--http %s: %w", addr, err)
	}
	hs := &http.Server{Handler: web.Handler(srv), ReadHeaderTimeout: 10 * time.Second, ErrorLog: lg}
	go func() {
		if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			lg.Printf("web app: %v", err)
		}
	}()
	url := "http://" + ln.Addr().String() + "/"
	lg.Printf("web app on %s", url)
	fmt.Fprintf(stdout, "replay serve: the web app is on %s\n", url)
	return func() {
		// Event streams never end by themselves: close what is left after a moment.
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if hs.Shutdown(ctx) != nil {
			hs.Close()
		}
	}, nil
}

// stopArgs are the store flags 'replay serve --stop' needs to reach the same server.
func stopArgs(dbSet, storeSet bool, loc storeLoc) string {
	switch {
	case storeSet:
		return " --store " + loc.String()
	case dbSet:
		return " --db " + loc.String()
	}
	return ""
}
