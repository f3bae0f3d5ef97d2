package serve

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/tasklog/tasklog/store"
)

// Options configure a Server.
type Options struct {
	// Idle is how long the server waits without a connection before it exits; zero means
	// DefaultIdle, negative never.
	Idle time.Duration
	// Home reads the user's global rules; nil for none.
	Home fs.FS
	// Log receives one line per fault and per start and stop; nil discards.
	Log *log.Logger
	// MaxSessions bounds the open sessions; the least recently used is closed past it. Zero
	// means 64.
	MaxSessions int
	// Hold is how long the server keeps the database open after its last request; zero means
	// DefaultHold, negative until it exits. While it holds the file no other process can open
	// it (bbolt locks it), so other commands wait for at most this long.
	Hold time.Duration
	// NoSync opens the database without fsync after each commit (store.Options.NoSync): for
	// tests and benchmarks only.
	NoSync bool
	// Open opens the store for the server, waiting at most wait for a file another process
	// holds; nil opens the bbolt file at the path given to Listen. A store that many processes
	// share (a NATS stream) is usually kept open: Hold negative.
	Open func(ctx context.Context, wait time.Duration) (store.Store, error)
	// Machine and User are recorded in the task_started of each task the server starts: the
	// machine it runs on and the account it runs under, as the command that starts it finds
	// them; "" records none.
	Machine, User string
	// Name names the store in the server's log; "" is the path given to Listen.
	Name string
	// Opened runs each time the server opens the database, before any request uses it:
	// 'replay serve' records what hooks spooled while another process held it.
	Opened func(ctx context.Context, db store.Store) error
	// OpenedAgain, for a store the server keeps open, runs Opened again at the first request
	// at least this long after it last ran: 'replay serve' of a NATS stream records what hooks
	// spooled while the server was out of reach. Zero: only when the store is opened.
	OpenedAgain time.Duration
	// Pending, for a store the server keeps open, reports whether Opened has work waiting
	// ('replay serve': payloads in the spool); checked at each request, it runs Opened before
	// the request, so that what was spooled is recorded first. nil: never.
	Pending func() bool
	// MaxConns bounds the open connections; zero means DefaultMaxConns. A connection past it
	// closes the one that has waited longest for its next message; when every one is in the
	// middle of a request, the new one is answered CodeBusy and closed.
	MaxConns int
	// MaxInFlight bounds the bytes of the messages being read and answered at once, over all
	// connections; zero means DefaultMaxInFlight. The first SmallMessage bytes of each message
	// do not count, so hooks of the usual size are answered whatever the larger ones hold; a
	// message that would pass the bound is answered CodeBusy and its connection closed.
	MaxInFlight int64
	// ConnIdle is how long a connection may wait for its next message before it is closed;
	// zero means DefaultConnIdle, negative never. Clients reconnect when they need to.
	ConnIdle time.Duration
	// Appended, when set, is told after each request that appended to a task's log: the log's
	// head before and after the request, while the store is open. It runs on the request's
	// path (an OpenTelemetry export reads the new events there and queues its spans), so it
	// must not wait on anything slow; its error is logged, never the request's.
	Appended func(ctx context.Context, db store.Store, task uuid.UUID, before, after uint64) error
}

// DefaultIdle is how long a server without connections waits before it exits, and DefaultHold
// how long it keeps the database open after its last request.
const (
	DefaultIdle = 5 * time.Minute
	DefaultHold = 500 * time.Millisecond
)

// The defaults of the server's bounds (Options.MaxConns, MaxInFlight, ConnIdle), and the share
// of each message that is not counted against MaxInFlight.
const (
	DefaultMaxConns    = 128
	DefaultMaxInFlight = 64 << 20
	DefaultConnIdle    = time.Minute
	SmallMessage       = 64 << 10
)

// messageReadTimeout is how long a started message may take to arrive in full; a client that
// stops half-way is disconnected.
const messageReadTimeout = 10 * time.Second

// Server serves one database. Make it with Listen, run it with Serve, stop it with Shutdown.
type Server struct {
	// dbPth names the store (Options.Name, else file); file is the path given to Listen.
	dbPth string
	file  string
	sock  string
	lock  *lockFile
	ln    net.Listener
	opts  Options
	log   *log.Logger

	tasks *sessions

	// dbmu guards the database: open while requests use it, closed Hold after the last.
	dbmu  sync.Mutex
	db    store.Store
	users int
	holdT *time.Timer
	dbGen uint64
	// openedAt is when Opened last ran.
	openedAt time.Time

	mu      sync.Mutex
	closing bool
	conns   map[*conn]struct{}
	// heldBytes counts the bytes of messages reserved against Options.MaxInFlight.
	heldBytes int64
	inflight  sync.WaitGroup
	idle      *time.Timer
	done      chan struct{}
	stopOnce  sync.Once
	// news tells the web app that a request which used the store ended (Changed).
	news news
	// httpSrv are the HTTP hook listeners (ServeHTTPHooks), closed with the socket.
	httpSrv []*http.Server
}

// Listen takes the database's server lock and listens on its socket (SocketPath(dbPath)); the
// database is opened by the first request (with Options.Open, else as the bbolt file at dbPath).
// ErrRunning: another server has the lock.
func Listen(dbPath string, opts Options) (*Server, error) {
	if opts.Idle == 0 {
		opts.Idle = DefaultIdle
	}
	if opts.Hold == 0 {
		opts.Hold = DefaultHold
	}
	if opts.MaxSessions <= 0 {
		opts.MaxSessions = 64
	}
	if opts.MaxConns <= 0 {
		opts.MaxConns = DefaultMaxConns
	}
	if opts.MaxInFlight <= 0 {
		opts.MaxInFlight = DefaultMaxInFlight
	}
	if opts.ConnIdle == 0 {
		opts.ConnIdle = DefaultConnIdle
	}
	lg := opts.Log
	if lg == nil {
		lg = log.New(io.Discard, "", 0)
	}
	sock := SocketPath(dbPath)
	lk, err := lock(sock)
	if err != nil {
		return nil, err
	}
	name := opts.Name
	if name == "" {
		name = dbPath
	}
	s := &Server{dbPth: name, file: dbPath, sock: sock, lock: lk, opts: opts, log: lg,
		conns: map[*conn]struct{}{}, done: make(chan struct{})}
	s.tasks = newSessions(s, opts.MaxSessions)
	ln, err := listen(sock)
	if err != nil {
		lk.release()
		return nil, err
	}
	s.ln = ln
	return s, nil
}

// Socket is the path the server listens on.
func (s *Server) Socket() string { return s.sock }

// Done is closed once the server has stopped.
func (s *Server) Done() <-chan struct{} { return s.done }

// Serve accepts connections until Shutdown, or the idle period passes without one; then it
// finishes what it accepted, closes the sessions and the database and returns.
func (s *Server) Serve() error {
	s.log.Printf("serving %s on %s (pid %d)", s.dbPth, s.sock, os.Getpid())
	s.mu.Lock()
	if s.opts.Idle > 0 {
		s.idle = time.AfterFunc(s.opts.Idle, s.idleExpired)
	}
	s.mu.Unlock()
	go s.watchSocket()
	var err error
	for {
		c, aerr := s.ln.Accept()
		if aerr != nil {
			s.mu.Lock()
			closing := s.closing
			s.mu.Unlock()
			if !closing {
				err = aerr
				s.log.Printf("accept: %v", aerr)
			}
			break
		}
		s.track(c)
	}
	s.stop()
	<-s.done
	return err
}

// idleExpired stops the server when it still has no connection.
func (s *Server) idleExpired() {
	s.mu.Lock()
	n := len(s.conns)
	s.mu.Unlock()
	if n == 0 {
		s.log.Printf("idle for %s: exiting", s.opts.Idle)
		s.Shutdown()
		return
	}
	s.mu.Lock()
	if !s.closing && s.idle != nil {
		s.idle.Reset(s.opts.Idle)
	}
	s.mu.Unlock()
}

// Shutdown stops accepting: the socket goes away at once (new hooks open the database
// themselves), requests already read are answered, any later one on an open connection gets
// CodeShuttingDown. Serve returns when everything is closed.
func (s *Server) Shutdown() {
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		return
	}
	s.closing = true
	if s.idle != nil {
		s.idle.Stop()
	}
	// A connection waiting for its next message gets nothing more; one in the middle of a
	// request finishes it.
	for c := range s.conns {
		c.nc.SetReadDeadline(time.Now())
	}
	s.closeHTTP()
	s.mu.Unlock()
	s.ln.Close()
}

// stop waits for the requests in flight, then closes the sessions, the database and the lock.
func (s *Server) stop() {
	s.stopOnce.Do(func() {
		s.Shutdown()
		s.inflight.Wait()
		s.mu.Lock()
		for c := range s.conns {
			c.nc.Close()
		}
		s.mu.Unlock()
		s.dbmu.Lock()
		if s.holdT != nil {
			s.holdT.Stop()
		}
		// Sessions of the open database store their snapshots as they close; parked ones
		// stored them when they were parked.
		if err := s.tasks.closeAll(); err != nil {
			s.log.Printf("close the sessions: %v", err)
		}
		s.closeDB()
		s.dbmu.Unlock()
		s.lock.release()
		s.log.Printf("stopped")
		s.news.stop() // before done: whoever saw Done sees Changed closed
		close(s.done)
	})
}

// conn is one client connection. busy and waitingSince are guarded by Server.mu.
type conn struct {
	nc    net.Conn
	hello bool
	// busy: a message is being read or answered; else the connection has waited for its
	// next one since waitingSince.
	busy         bool
	waitingSince time.Time
	// evicted: closed to make room for a new connection.
	evicted bool
}

func (s *Server) track(nc net.Conn) {
	c := &conn{nc: nc, waitingSince: time.Now()}
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		nc.Close()
		return
	}
	if len(s.conns) >= s.opts.MaxConns && !s.evictLocked() {
		s.mu.Unlock()
		go s.refuse(nc, fmt.Sprintf("the server has %d connections in the middle of a request, its bound (--max-conns); open the database directly", len(s.conns)))
		return
	}
	s.conns[c] = struct{}{}
	s.mu.Unlock()
	go s.handle(c)
}

func (s *Server) untrack(c *conn) {
	c.nc.Close()
	s.mu.Lock()
	delete(s.conns, c)
	if len(s.conns) == 0 && s.idle != nil && !s.closing {
		s.idle.Reset(s.opts.Idle)
	}
	s.mu.Unlock()
}

// begin registers a request in flight, unless the server is shutting down.
func (s *Server) begin() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return false
	}
	s.inflight.Add(1)
	return true
}

// handle reads requests one after the other and answers each before reading the next.
func (s *Server) handle(c *conn) {
	defer s.untrack(c)
	dr := &deadlineReader{nc: c.nc}
	r := bufio.NewReaderSize(dr, 64<<10)
	w := bufio.NewWriterSize(c.nc, 64<<10)
	for {
		// Wait for a message up to ConnIdle; once one starts, it must arrive in time.
		if !s.waitNext(c) {
			return
		}
		if _, err := r.Peek(1); err != nil {
			return
		}
		s.setBusy(c, true)
		if !s.message(c, r, w, dr) {
			return
		}
		s.setBusy(c, false)
		s.mu.Lock()
		closing := s.closing
		s.mu.Unlock()
		if closing {
			return
		}
	}
}

// message reads one message and answers it; false when the connection is to be closed.
func (s *Server) message(c *conn, r *bufio.Reader, w *bufio.Writer, dr *deadlineReader) bool {
	var reserved int64
	defer func() { s.unreserve(reserved) }()
	grow := func(size int) bool {
		need := int64(size) - SmallMessage
		if need <= reserved {
			return true
		}
		if !s.reserve(need - reserved) {
			return false
		}
		reserved = need
		return true
	}
	dr.on = true
	msg, err := readMessage(r, MaxMessage, grow)
	dr.on = false
	switch {
	case errors.Is(err, errLineTooLong):
		s.reply(w, Response{Error: &Error{Code: CodeTooLarge,
			Message: fmt.Sprintf("a message may hold at most %d bytes; closing the connection", MaxMessage)}})
	case errors.Is(err, errNoRoom):
		s.mu.Lock()
		held := s.heldBytes
		s.mu.Unlock()
		s.reply(w, Response{Error: &Error{Code: CodeBusy,
			Message: fmt.Sprintf("the server holds %d bytes of messages, near its bound of %d (--max-in-flight); send this one to the database directly", held, s.opts.MaxInFlight)}})
	}
	if errors.Is(err, errLineTooLong) || errors.Is(err, errNoRoom) {
		s.unreserve(reserved)
		reserved = 0
		dr.on = true
		s.drain(c.nc, dr)
		return false
	}
	if err != nil {
		if !errors.Is(err, io.EOF) {
			s.log.Printf("read: %v", err)
		}
		return false
	}
	c.nc.SetReadDeadline(time.Time{})
	if len(msg) == 0 {
		return true
	}
	if !s.begin() {
		s.reply(w, Response{ID: peekID(msg), Error: &Error{Code: CodeShuttingDown, Message: "the server is shutting down; open the database directly"}})
		return false
	}
	resp := s.serve(c, msg)
	s.reply(w, resp)
	s.inflight.Done()
	return true
}

func (s *Server) reply(w *bufio.Writer, resp Response) {
	if err := writeMessage(w, resp); err == nil {
		w.Flush()
	}
}

// drain reads and drops what a client still sends after a message too large, so that closing
// the connection does not reset it before the client has read the error.
func (s *Server) drain(nc net.Conn, r io.Reader) {
	if cw, ok := nc.(interface{ CloseWrite() error }); ok {
		cw.CloseWrite()
	}
	io.Copy(io.Discard, io.LimitReader(r, 1<<30))
}

// deadlineReader gives a client that started a message messageReadTimeout for each read: a
// slow client goes on, one that stops half-way is disconnected. Between messages (on unset)
// the wait is unbounded, as long as the server runs.
type deadlineReader struct {
	nc net.Conn
	on bool
}

func (d *deadlineReader) Read(p []byte) (int, error) {
	if d.on {
		d.nc.SetReadDeadline(time.Now().Add(messageReadTimeout))
	}
	return d.nc.Read(p)
}

// acquire opens the database when the server does not hold it, waiting for another process
// that holds it until ctx's deadline, and counts a user until release.
func (s *Server) acquire(ctx context.Context) (store.Store, error) {
	s.dbmu.Lock()
	defer s.dbmu.Unlock()
	if s.holdT != nil {
		s.holdT.Stop()
	}
	if s.db == nil {
		wait := 10 * time.Second
		if dl, ok := ctx.Deadline(); ok {
			wait = max(time.Until(dl), time.Millisecond)
		}
		db, err := s.open(ctx, wait)
		if err != nil {
			return nil, err
		}
		s.db = db
		s.dbGen++
		s.runOpened(ctx, "after opening the database")
	} else if s.opts.OpenedAgain > 0 && time.Since(s.openedAt) >= s.opts.OpenedAgain || s.opts.Pending != nil && s.opts.Pending() {
		s.runOpened(ctx, "on the open database")
	}
	s.users++
	return s.db, nil
}

// runOpened runs Options.Opened on the open store. The caller holds dbmu.
func (s *Server) runOpened(ctx context.Context, when string) {
	s.openedAt = time.Now()
	if s.opts.Opened == nil {
		return
	}
	if err := s.opts.Opened(ctx, s.db); err != nil {
		s.log.Printf("%s: %v", when, err)
	}
}

// open opens the store with Options.Open, else the bbolt file at the path Listen was given.
func (s *Server) open(ctx context.Context, wait time.Duration) (store.Store, error) {
	if s.opts.Open != nil {
		return s.opts.Open(ctx, wait)
	}
	return store.Open(s.file, &store.Options{Timeout: wait, NoSync: s.opts.NoSync})
}

// release ends a request's use of the database (see letGo) and tells Changed's waiters.
func (s *Server) release() {
	s.letGo()
	s.news.bump()
}

// letGo ends a use of the database; the last one lets it go after the hold period.
func (s *Server) letGo() {
	s.dbmu.Lock()
	defer s.dbmu.Unlock()
	s.users--
	if s.users > 0 || s.opts.Hold < 0 {
		return
	}
	gen := s.dbGen
	if s.holdT != nil {
		s.holdT.Stop()
	}
	s.holdT = time.AfterFunc(s.opts.Hold, func() {
		s.dbmu.Lock()
		defer s.dbmu.Unlock()
		if s.users == 0 && s.dbGen == gen {
			s.closeDB()
		}
	})
}

// closeDB parks the sessions (see sessions.park) and closes the database. The caller holds
// dbmu and no request uses them.
func (s *Server) closeDB() {
	if s.db == nil {
		return
	}
	if err := errors.Join(s.tasks.park(), s.db.Close()); err != nil {
		s.log.Printf("close the database: %v", err)
	}
	s.db = nil
}

// current is the open database, nil while the server holds none. The caller holds dbmu, or
// runs a request (between acquire and release).
func (s *Server) current() store.Store { return s.db }

// watchSocket stops the server when its socket file is removed or replaced (its folder was
// deleted, or another server took over): no client can reach it any more.
func (s *Server) watchSocket() {
	st, err := os.Stat(s.sock)
	if err != nil {
		return
	}
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-s.done:
			return
		case <-t.C:
			now, err := os.Stat(s.sock)
			if err != nil || !os.SameFile(st, now) {
				s.log.Printf("socket %s is gone: exiting", s.sock)
				s.Shutdown()
				return
			}
		}
	}
}
