// Package wire is the client side of the replay serve protocol (see package serve) with the
// standard library only, and not even all of that: it reads and writes JSON with package
// jsonlite rather than encoding/json, and formats nothing with fmt. A program that links it
// starts in a few milliseconds, where one that links package serve (and with it session, the
// store, the rules engine, YAML) takes tens: it is what the small hook program replay-hook uses
// to hand a payload to a running server. It
// finds the socket and decides whether to trust it exactly as serve's client does; serve's tests
// hold the two to the same answers.
package wire

import (
	"bufio"
	"context"
	"errors"
	"hash/fnv"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/tasklog/tasklog/internal/jsonlite"
)

// Version is the protocol version this package speaks (serve.Version).
const Version = 1

// maxSocketPath is the longest socket path used as is (Linux allows 107 bytes, macOS 103).
const maxSocketPath = 100

// MaxMessage is the most bytes one message of the protocol may hold, its newline included. A
// hook payload may be up to 32 MiB (what 'replay hook' reads from stdin); the rest is the
// envelope.
const MaxMessage = 33 << 20

// ErrUntrustedSocket is Hook's error when the socket, or its folder in the shared temporary
// directory, is not this user's own: whoever listens there could answer the hooks.
var ErrUntrustedSocket = errors.New("the server's socket is not this user's own")

// ErrNotJSON is Hook's error for a payload that is not JSON; nothing was sent.
var ErrNotJSON = errors.New("the payload is not JSON")

// Error is a request the server answered with an error: a code of the protocol
// (serve.Code*) and a message.
type Error struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// SocketPath is where the server of the database at dbPath listens (serve.SocketPath): beside
// the database ("<db>.sock"), or, when that path is too long for a Unix socket, in an
// owner-only folder of the temporary directory named after a hash (64-bit FNV-1a) of the
// database's absolute path.
func SocketPath(dbPath string) string {
	abs, err := filepath.Abs(dbPath)
	if err != nil {
		abs = dbPath
	}
	if p := abs + ".sock"; len(p) <= maxSocketPath {
		return p
	}
	h := fnv.New64a()
	h.Write([]byte(abs))
	name := strconv.FormatUint(h.Sum64(), 16)
	for len(name) < 16 {
		name = "0" + name
	}
	return filepath.Join(PrivateDir(), name+".sock")
}

// DefaultDB is the database of hooks: $TASKLOG_DB, else tasklog.db in the user's data folder
// ($XDG_DATA_HOME/tasklog, default ~/.local/share/tasklog), never one in whatever folder the
// agent runs the hook from. replay hook, replay serve, replay mcp and replay-hook share it.
func DefaultDB() string {
	if p := os.Getenv("TASKLOG_DB"); p != "" {
		return p
	}
	dir := os.Getenv("XDG_DATA_HOME")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "tasklog.db"
		}
		dir = filepath.Join(home, ".local", "share")
	}
	return filepath.Join(dir, "tasklog", "tasklog.db")
}

// PrivateDir is the folder of this user's sockets in the temporary directory.
func PrivateDir() string {
	return filepath.Join(os.TempDir(), "tasklog-"+strconv.Itoa(os.Getuid()))
}

// CheckSocket is what a client checks before connecting to sock: its folder, when it is the
// shared temporary directory's, is a real folder of this user no one else may enter, and the
// socket file belongs to this user. A missing socket is the error of os.Lstat (ENOENT).
func CheckSocket(sock string) error {
	if err := CheckDir(filepath.Dir(sock)); err != nil {
		return err
	}
	st, err := os.Lstat(sock)
	if err != nil {
		return err
	}
	if sys, ok := st.Sys().(*syscall.Stat_t); st.Mode()&os.ModeSocket == 0 || (ok && int(sys.Uid) != os.Getuid()) {
		return untrusted(sock + " is not a socket of this user (mode " + st.Mode().String() + ")")
	}
	return nil
}

// CheckDir refuses dir, when it is the shared temporary directory's socket folder
// (PrivateDir), unless it is a real folder of this user that no one else may enter: another
// user could otherwise put a socket of theirs where the hooks look for the server. Any other
// folder (the database's own) passes. The refusal wraps ErrUntrustedSocket.
func CheckDir(dir string) error {
	if dir != PrivateDir() {
		return nil
	}
	st, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !st.IsDir() || st.Mode().Perm()&0o077 != 0 || (ok && int(sys.Uid) != os.Getuid()) {
		return untrusted("socket folder " + dir + " is not a private folder of this user (mode " + st.Mode().String() + ")")
	}
	return nil
}

// NothingListens tells whether a Hook error says no server listens on the socket (no socket
// file, or a stale one that refuses connections): starting one is then of use.
func NothingListens(err error) bool {
	return errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ECONNREFUSED)
}

// Hook connects to the server at sock and hands it one hook payload of agent, as serve's
// Client.Hook does, and returns the reply for the agent, byte for byte. The hello and the hook
// request go out in one write (the server answers a connection's requests in order). The
// context's deadline bounds the whole exchange and is the server's deadline for the request.
//
// A request the server answered with an error is an *Error; a payload that is not JSON is
// ErrNotJSON (nothing is sent); an untrusted socket wraps ErrUntrustedSocket; anything else
// is the connection's error (NothingListens tells the two that mean no server). The server is
// told to give up on the request an eighth of the time left before the deadline.
func Hook(ctx context.Context, sock, client, agent string, payload []byte) (string, error) {
	return hook(ctx, sock, client, agent, payload, false)
}

// HookAgain is Hook for a payload handled a second time because a server may have recorded
// its delivery without the reply reaching the agent (it died, or did not answer in time): the
// server then replies with that delivery again ("again" in the request).
func HookAgain(ctx context.Context, sock, client, agent string, payload []byte) (string, error) {
	return hook(ctx, sock, client, agent, payload, true)
}

// serverMargin: the server is told to give up on a request this share of the time left before
// the client does, so that it does not record a delivery after the client stopped waiting for
// it (the store writes nothing once the request's deadline has passed).
const serverMargin = 8

func hook(ctx context.Context, sock, client, agent string, payload []byte, again bool) (string, error) {
	msg := make([]byte, 0, len(payload)+160)
	msg = append(msg, `{"id":1,"op":"hello","version":`...)
	msg = strconv.AppendInt(msg, Version, 10)
	msg = append(msg, `,"client":`...)
	msg = jsonlite.Quote(msg, client)
	msg = append(msg, "}\n"...)
	msg = append(msg, `{"id":2,"op":"hook","agent":`...)
	msg = jsonlite.Quote(msg, agent)
	if dl, ok := ctx.Deadline(); ok {
		left := time.Until(dl)
		if left <= 0 {
			return "", context.DeadlineExceeded
		}
		msg = append(msg, `,"deadline_ms":`...)
		msg = strconv.AppendInt(msg, max((left-left/serverMargin).Milliseconds(), 1), 10)
	}
	if again {
		msg = append(msg, `,"again":true`...)
	}
	msg = append(msg, `,"payload":`...)
	msg, err := jsonlite.Compact(msg, payload)
	if err != nil {
		return "", ErrNotJSON
	}
	msg = append(msg, "}\n"...)

	if err := CheckSocket(sock); err != nil {
		return "", err
	}
	nc, err := dial(ctx, sock)
	if err != nil {
		return "", err
	}
	defer nc.Close()
	if _, err := nc.Write(msg); err != nil {
		return "", wrap(err, "send hook")
	}
	r := bufio.NewReaderSize(nc, 16<<10)
	if _, err := receive(r, 1); err != nil {
		return "", wrap(err, "receive hello")
	}
	res, err := receive(r, 2)
	if err != nil {
		return "", wrap(err, "receive hook")
	}
	reply, _ := res["reply"].(string)
	return reply, nil
}

// receive reads one response, checks it answers request id and returns its result.
func receive(r *bufio.Reader, id int64) (map[string]any, error) {
	line, err := readLine(r)
	if err != nil {
		return nil, err
	}
	v, err := jsonlite.Parse(line)
	resp, ok := v.(map[string]any)
	if err != nil || !ok {
		return nil, errors.New("a response that is not a JSON object")
	}
	if e, ok := resp["error"].(map[string]any); ok {
		code, _ := e["code"].(string)
		message, _ := e["message"].(string)
		return nil, &Error{Code: code, Message: message}
	}
	if got, _ := resp["id"].(float64); got != float64(id) {
		return nil, errors.New("response " + strconv.FormatFloat(got, 'g', -1, 64) + " to request " + strconv.FormatInt(id, 10))
	}
	result, _ := resp["result"].(map[string]any)
	return result, nil
}

// wrapped is an error with words before or after it, as fmt.Errorf("%s: %w") and
// fmt.Errorf("%w: %s") make one.
type wrapped struct {
	err   error
	text  string
	after bool
}

func (w *wrapped) Error() string {
	if w.after {
		return w.err.Error() + ": " + w.text
	}
	return w.text + ": " + w.err.Error()
}

func (w *wrapped) Unwrap() error { return w.err }

// wrap puts text before err; errors.Is and errors.As see err through it.
func wrap(err error, text string) error { return &wrapped{err: err, text: text} }

// untrusted is ErrUntrustedSocket with what was found.
func untrusted(detail string) error {
	return &wrapped{err: ErrUntrustedSocket, text: detail, after: true}
}

// errTooLong is readLine's error for a response over MaxMessage.
var errTooLong = errors.New("response longer than the limit")

// readLine reads one newline-terminated message of at most MaxMessage bytes.
func readLine(r *bufio.Reader) ([]byte, error) {
	var buf []byte
	for {
		chunk, err := r.ReadSlice('\n')
		if len(buf)+len(chunk) > MaxMessage {
			return nil, errTooLong
		}
		buf = append(buf, chunk...)
		switch {
		case err == nil:
			return buf, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		default:
			return nil, err
		}
	}
}

// dial connects to the Unix socket with system calls rather than package net, which would link
// the C resolver (and with it the dynamic loader) into every program using this package. Its
// reads and writes are blocking system calls bounded by the socket's own timeouts (set from
// ctx's deadline): a program that does nothing else then waits in one system call on one
// thread, where the runtime's network poller would hand the wake-up to another thread, which
// on a loaded machine costs a scheduling delay of its own.
func dial(ctx context.Context, sock string) (*fdConn, error) {
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		return nil, os.NewSyscallError("socket", err)
	}
	syscall.CloseOnExec(fd)
	c := &fdConn{fd: fd}
	if dl, ok := ctx.Deadline(); ok {
		c.deadline = dl
		tv := syscall.NsecToTimeval(max(time.Until(dl).Nanoseconds(), int64(time.Millisecond)))
		// A blocking connect waits while the server's backlog is full, bounded by the send
		// timeout.
		if err := syscall.SetsockoptTimeval(fd, syscall.SOL_SOCKET, syscall.SO_SNDTIMEO, &tv); err != nil {
			c.Close()
			return nil, os.NewSyscallError("setsockopt", err)
		}
		if err := syscall.SetsockoptTimeval(fd, syscall.SOL_SOCKET, syscall.SO_RCVTIMEO, &tv); err != nil {
			c.Close()
			return nil, os.NewSyscallError("setsockopt", err)
		}
	}
	for {
		err = syscall.Connect(fd, &syscall.SockaddrUnix{Name: sock})
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		c.Close()
		if err == syscall.EAGAIN {
			err = os.ErrDeadlineExceeded
		}
		return nil, &os.PathError{Op: "connect", Path: sock, Err: err}
	}
	return c, nil
}

// fdConn is a connected socket read and written with blocking system calls.
type fdConn struct {
	fd       int
	deadline time.Time
}

func (c *fdConn) Read(p []byte) (int, error) {
	for {
		n, err := syscall.Read(c.fd, p)
		switch {
		case err == syscall.EINTR:
			continue
		case err == syscall.EAGAIN:
			return 0, os.ErrDeadlineExceeded
		case err != nil:
			return 0, os.NewSyscallError("read", err)
		case n == 0 && len(p) > 0:
			return 0, io.EOF
		}
		return n, nil
	}
}

func (c *fdConn) Write(p []byte) (int, error) {
	written := 0
	for written < len(p) {
		if !c.deadline.IsZero() && time.Now().After(c.deadline) {
			return written, os.ErrDeadlineExceeded
		}
		n, err := syscall.Write(c.fd, p[written:])
		switch {
		case err == syscall.EINTR:
			continue
		case err == syscall.EAGAIN:
			return written, os.ErrDeadlineExceeded
		case err != nil:
			return written, os.NewSyscallError("write", err)
		}
		written += n
	}
	return written, nil
}

// Close closes the socket.
func (c *fdConn) Close() error { return syscall.Close(c.fd) }
