package serve

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/tasklog/tasklog/session/serve/wire"
)

// Client is a connection to a server. Its methods are safe for concurrent use; requests on
// one connection are answered one after the other.
type Client struct {
	mu   sync.Mutex
	nc   net.Conn
	r    *bufio.Reader
	next int64
	// Server is what the server said in answer to hello.
	Server HelloResult
}

// Dial connects to the server at sock and says hello. A context deadline bounds the whole
// exchange. A socket in a folder of the shared temporary directory that is not private, or a
// socket file of another user, is not connected to (ErrUntrustedSocket, which Unreachable
// reports as unreachable).
func Dial(ctx context.Context, sock, name string) (*Client, error) {
	if err := wire.CheckSocket(sock); err != nil {
		return nil, err
	}
	var d net.Dialer
	nc, err := d.DialContext(ctx, "unix", sock)
	if err != nil {
		return nil, err
	}
	c := &Client{nc: nc, r: bufio.NewReaderSize(nc, 64<<10)}
	if err := c.Call(ctx, &Request{Op: OpHello, Version: Version, Client: name}, &c.Server); err != nil {
		nc.Close()
		return nil, err
	}
	return c, nil
}

// Close closes the connection.
func (c *Client) Close() error { return c.nc.Close() }

// Call sends the request (its id is set here) and decodes the result into out. A failed
// request is an *Error; a broken connection, any other error. The context's deadline is the
// connection's and, as deadline_ms, the server's.
func (c *Client) Call(ctx context.Context, req *Request, out any) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.next++
	req.ID = c.next
	dl, ok := ctx.Deadline()
	if ok {
		left := time.Until(dl)
		if left <= 0 {
			return context.DeadlineExceeded
		}
		req.DeadlineMS = max(left.Milliseconds(), 1)
		c.nc.SetDeadline(dl)
	} else {
		c.nc.SetDeadline(time.Time{})
	}
	if err := writeMessage(c.nc, req); err != nil {
		return fmt.Errorf("send %s: %w", req.Op, err)
	}
	msg, err := readMessage(c.r, MaxMessage, nil)
	if err != nil {
		return fmt.Errorf("receive %s: %w", req.Op, err)
	}
	var resp Response
	if err := json.Unmarshal(msg, &resp); err != nil {
		return fmt.Errorf("receive %s: %w", req.Op, err)
	}
	if resp.Error != nil {
		return resp.Error
	}
	if resp.ID != req.ID {
		return fmt.Errorf("receive %s: response %d to request %d", req.Op, resp.ID, req.ID)
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(resp.Result, out)
}

// Hook hands one hook payload to the server: it records it, decides and delivers, and returns
// the reply for the agent.
func (c *Client) Hook(ctx context.Context, agent string, payload []byte) (HookResult, error) {
	var res HookResult
	if !json.Valid(payload) {
		return res, &Error{Code: CodeBadRequest, Message: "the payload is not JSON"}
	}
	err := c.Call(ctx, &Request{Op: OpHook, Agent: agent, Payload: payload}, &res)
	return res, err
}

// Open opens the agent's session (a task not in the log starts with roots and cwd).
func (c *Client) Open(ctx context.Context, agent, sessionID string, roots []string, cwd string) (OpenResult, error) {
	var res OpenResult
	err := c.Call(ctx, &Request{Op: OpOpen, Agent: agent, Session: sessionID, Roots: roots, Cwd: cwd}, &res)
	return res, err
}

// Record records events in a task, each once by its key.
func (c *Client) Record(ctx context.Context, task string, recs ...Record) (RecordResult, error) {
	var res RecordResult
	err := c.Call(ctx, &Request{Op: OpRecord, Task: task, Events: recs}, &res)
	return res, err
}

// Decide records a decision in a task.
func (c *Client) Decide(ctx context.Context, task string) (DecideResult, error) {
	var res DecideResult
	err := c.Call(ctx, &Request{Op: OpDecide, Task: task}, &res)
	return res, err
}

// Deliver decides and delivers what has not reached the model yet.
func (c *Client) Deliver(ctx context.Context, task, hook, channel, key string) (DeliverResult, error) {
	var res DeliverResult
	err := c.Call(ctx, &Request{Op: OpDeliver, Task: task, Hook: hook, Channel: channel, Key: key}, &res)
	return res, err
}

// Explain explains a rule at a turn.
func (c *Client) Explain(ctx context.Context, task string, turn int, rule string) (ExplainResult, error) {
	var res ExplainResult
	err := c.Call(ctx, &Request{Op: OpExplain, Task: task, Turn: turn, Rule: rule}, &res)
	return res, err
}

// Shutdown asks the server to finish what it accepted and exit.
func (c *Client) Shutdown(ctx context.Context) error {
	return c.Call(ctx, &Request{Op: OpShutdown}, nil)
}

// Unreachable tells whether err means the server could not take the request at all (no
// socket, refused, shutting down, the connection broke before an answer): the caller then goes
// to the database itself. A request the server answered with an error is not.
func Unreachable(err error) bool {
	var e *Error
	if errors.As(err, &e) {
		return e.Code == CodeShuttingDown
	}
	return err != nil
}
