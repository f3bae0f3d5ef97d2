package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/tasklog/tasklog/session/serve"
	"github.com/tasklog/tasklog/session/web"
	"github.com/tasklog/tasklog/store"
	"github.com/tasklog/tasklog/store/location"
)

// serveLogName is the server's log file beside the database.
const serveLogName = "tasklog-serve.log"

// cmdServe is 'replay serve [--db PATH | --store URL] [--idle D] [--hold D] [--stop]': the
// resident server of one store, on a Unix socket beside it (for a NATS store, in its folder
// under the user's data folder: location.Location.sideFile), until it has been idle for --idle or gets
// SIGTERM.
func cmdServe(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	db := fs.String("db", defaultHookDB(), "the database to serve, the one the hooks record to: $TASKLOG_DB, else tasklog/tasklog.db in the user's data folder")
	storeURL := fs.String("store", "", "serve the task log on a NATS JetStream server, nats://HOST:PORT[/STREAM], instead of --db; $"+location.Env+" sets the default")
	idle := fs.Duration("idle", serve.DefaultIdle, "exit after this long without a connection (0: never)")
	hold := fs.Duration("hold", serve.DefaultHold, "close the database this long after the last request, so other commands can open it (0: keep it open; a NATS store is always kept open)")
	timeout := fs.Duration("timeout", 0, "for a NATS store: how long each server call may take (default 5s)")
	logPath := fs.String("log", "", "append the server's log here (default: "+serveLogName+" beside the database)")
	stop := fs.Bool("stop", false, "ask the running server to finish what it accepted and exit")
	maxConns := fs.Int("max-conns", serve.DefaultMaxConns, "the most connections at once; past it the one idle longest is closed, or the new one answered busy")
	inFlight := byteSize(serve.DefaultMaxInFlight)
	fs.Var(&inFlight, "max-in-flight", "the most bytes of messages read and answered at once, over all connections (64KiB of each message do not count); a message past it is answered busy (e.g. 64MiB)")
	connIdle := fs.Duration("conn-idle", serve.DefaultConnIdle, "close a connection that waits this long for its next message (0: never)")
	httpAddr := fs.String("http", "", "also listen on this loopback HOST:PORT (e.g. 127.0.0.1:8080; port 0 picks a free one) for the read-only web app (the tasks, each task's report, live) and the agents' HTTP hooks (POST /hook/AGENT); the server then keeps running without connections unless --idle is given")
	httpPublic := fs.Bool("http-public", false, "let --http take any address, another machine's browsers and hooks included: every page, event stream and hook then needs the token of the file beside the database (DB.http-token, made owner-only when absent), which a browser gives once as ?token=")
	otelCfg := otelFlagSet(fs)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: replay serve [--db PATH | --store nats://HOST:PORT[/STREAM]] [--http 127.0.0.1:PORT [--http-public]] [--idle D] [--hold D] [--max-conns N] [--max-in-flight SIZE] [--conn-idle D] [--log PATH] [--otel-endpoint URL] [--stop]\n\n"+
			"Serves the database to 'replay hook' and to runtimes in other languages over a Unix socket\n"+
			"beside it (JSON messages, one per line; docs/server.md has the protocol). 'replay hook' starts it on demand.\n\nflags:")
		fs.PrintDefaults()
	}
	if err := parseVerb(fs, args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "replay serve: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	if *maxConns < 1 {
		fmt.Fprintf(stderr, "replay serve: --max-conns %d: give at least 1\n", *maxConns)
		return exitUsage
	}
	dbSet, storeSet, idleSet := false, false, false
	fs.Visit(func(fl *flag.Flag) {
		dbSet, storeSet, idleSet = dbSet || fl.Name == "db", storeSet || fl.Name == "store", idleSet || fl.Name == "idle"
	})
	if *httpPublic && *httpAddr == "" {
		fmt.Fprintln(stderr, "replay serve: --http-public needs --http HOST:PORT, the address to listen on")
		return exitUsage
	}
	if *httpAddr != "" && !*httpPublic {
		if err := web.CheckAddr(*httpAddr); err != nil {
			fmt.Fprintf(stderr, "replay serve: --http %v\n", err)
			return exitUsage
		}
	}
	if *httpAddr != "" {
		if !idleSet {
			*idle = 0
		}
	}
	loc, err := location.Select(*db, dbSet, *storeURL, storeSet, true)
	if err != nil {
		fmt.Fprintf(stderr, "replay serve: %v\n", err)
		return exitUsage
	}
	side := loc.SideFile()
	if *stop {
		return stopServer(loc, stdout, stderr)
	}
	if err := os.MkdirAll(filepath.Dir(side), 0o755); err != nil {
		fmt.Fprintf(stderr, "replay serve: %v\n", err)
		return exitFailed
	}
	if *logPath == "" {
		*logPath = filepath.Join(filepath.Dir(side), serveLogName)
	}
	var out io.Writer = stderr
	if f, err := os.OpenFile(*logPath, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600); err == nil {
		defer f.Close()
		out = io.MultiWriter(f, stderr)
	}
	lg := log.New(out, fmt.Sprintf("replay serve[%d] ", os.Getpid()), log.LstdFlags|log.Lmicroseconds|log.LUTC)
	opts := serve.Options{Idle: *idle, Hold: *hold, Log: lg, Home: homeFS(), Opened: func(ctx context.Context, d store.Store) error {
		return drainSpool(ctx, d, side)
	}, MaxConns: *maxConns, MaxInFlight: int64(inFlight), ConnIdle: *connIdle,
		Machine: hostOrigin().Machine, User: hostOrigin().User}
	appended, stopOtel, err := otelLive(otelCfg, lg)
	if err != nil {
		fmt.Fprintf(stderr, "replay serve: %v\n", err)
		return exitUsage
	}
	if stopOtel != nil {
		opts.Appended = appended
		defer stopOtel()
	}
	if *connIdle == 0 {
		opts.ConnIdle = -1
	}
	if *idle == 0 {
		opts.Idle = -1
	}
	if *hold == 0 {
		opts.Hold = -1
	}
	if loc.Shared() {
		// No file lock to let go of: many processes share the stream, so the server keeps it
		// open (and its sessions) until it exits.
		opts.Hold, opts.Name, opts.OpenedAgain = -1, loc.String(), natsSpoolCheck
		opts.Pending = (&spoolWatch{dbPath: side}).news
		opts.Open = func(ctx context.Context, _ time.Duration) (store.Store, error) {
			return loc.Open(location.Options{Wait: *timeout, CallTimeout: *timeout})
		}
	}
	srv, err := serve.Listen(side, opts)
	if errors.Is(err, serve.ErrRunning) {
		fmt.Fprintf(stderr, "replay serve: %v (%s)\n", err, serve.SocketPath(side))
		if *httpAddr != "" {
			// That server has no web app nor HTTP hooks: say so rather than seem to serve one.
			fmt.Fprintf(stderr, "replay serve: --http needs the server itself: stop that one ('replay serve --stop%s') and run this again\n", stopArgs(dbSet, storeSet, loc))
			return exitFailed
		}
		return exitOK
	}
	if err != nil {
		lg.Printf("listen: %v", err)
		return exitFailed
	}
	if *httpAddr != "" {
		cleanup, err := serveHTTP(srv, side, *httpAddr, *httpPublic, stdout, lg)
		if err != nil {
			fmt.Fprintf(stderr, "replay serve: %v\n", err)
			srv.Shutdown()
			srv.Serve()
			return exitFailed
		}
		defer cleanup()
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	defer signal.Stop(sig)
	go func() {
		select {
		case s := <-sig:
			lg.Printf("%v: finishing what was accepted", s)
			srv.Shutdown()
		case <-srv.Done():
		}
	}()
	lg.Print(collectorDefault(os.Getenv, serveGCPercent, "the server's"))
	if err := srv.Serve(); err != nil {
		lg.Printf("serve: %v", err)
		return exitFailed
	}
	return exitOK
}

// serveGCPercent is the garbage collector's setting of a server not given one. A hook
// allocates about 83 KB, much of it bbolt's copies of the pages its commit writes, on a heap of
// a few megabytes: at Go's default (100) the collector runs every 18-25 hooks, and its cycles
// make the slowest replies. At 400 it runs every 150-170, for a heap up to five times the live
// one instead of twice (docs/server.md).
const serveGCPercent = 400

// natsSpoolCheck is how often the server of a NATS store, which keeps it open, looks in the
// spool for payloads hooks could not record while the server was out of reach (at the first
// request after this long).
const natsSpoolCheck = 10 * time.Second

// homeFS reads the user's global rules.
func homeFS() fs.FS {
	if dir, err := os.UserHomeDir(); err == nil {
		return os.DirFS(dir)
	}
	return nil
}

// stopServer asks the store's server to exit and waits until it let go of its socket.
func stopServer(loc location.Location, stdout, stderr io.Writer) int {
	db := loc.String()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	sock := serve.SocketPath(loc.SideFile())
	c, err := serve.Dial(ctx, sock, "replay serve --stop")
	if err != nil {
		fmt.Fprintf(stdout, "no server for %s\n", db)
		return exitOK
	}
	defer c.Close()
	if err := c.Shutdown(ctx); err != nil {
		fmt.Fprintf(stderr, "replay serve: %v\n", err)
		return exitFailed
	}
	// The server is gone once its lock is free.
	for ctx.Err() == nil {
		if f, err := os.OpenFile(sock+".lock", os.O_RDWR, 0); err == nil {
			err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
			f.Close()
			if err == nil {
				fmt.Fprintf(stdout, "stopped the server of %s (pid %d)\n", db, c.Server.PID)
				return exitOK
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	fmt.Fprintf(stderr, "replay serve: the server (pid %d) did not exit within 10s\n", c.Server.PID)
	return exitFailed
}

// byteSize is a flag's number of bytes: digits, optionally followed by KiB, MiB or GiB.
type byteSize int64

func (b *byteSize) String() string {
	for _, u := range []struct {
		suffix string
		n      int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if *b != 0 && int64(*b)%u.n == 0 {
			return strconv.FormatInt(int64(*b)/u.n, 10) + u.suffix
		}
	}
	return strconv.FormatInt(int64(*b), 10)
}

func (b *byteSize) Set(s string) error {
	num, unit := s, int64(1)
	for suffix, n := range map[string]int64{"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30} {
		if v, ok := strings.CutSuffix(s, suffix); ok {
			num, unit = v, n
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n <= 0 || n > (1<<62)/unit {
		return errors.New("want a positive size: bytes, or a number with KiB, MiB or GiB")
	}
	*b = byteSize(n * unit)
	return nil
}

// stopArgs are the store flags 'replay serve --stop' needs to reach the same server.
func stopArgs(dbSet, storeSet bool, loc location.Location) string {
	switch {
	case storeSet:
		return " --store " + loc.String()
	case dbSet:
		return " --db " + loc.String()
	}
	return ""
}
