package serve

import (
	"context"
	"sync"

	"github.com/tasklog/tasklog/store"
)

// View runs fn on the server's store, opening it when the server holds none (as a request
// does), and lets go of it after the hold period as a request does; once the server is
// shutting down it returns an error with CodeShuttingDown. fn only reads: the web
// app's pages are built this way while the server goes on answering hooks.
func (s *Server) View(ctx context.Context, fn func(db store.Store) error) error {
	// Counted as a request in flight, so the server closes the store only after fn.
	if !s.begin() {
		return &Error{Code: CodeShuttingDown, Message: "the server is shutting down"}
	}
	defer s.inflight.Done()
	db, err := s.acquire(ctx)
	if err != nil {
		return err
	}
	defer s.letGo()
	return fn(db)
}

// Changed returns a channel closed when a request that used the store ends (it may have
// appended to a task's log), or when the server stops. Take a new one after each close.
func (s *Server) Changed() <-chan struct{} { return s.news.next() }

// news is a broadcast: every channel handed out is closed at the next bump; once stopped,
// every channel handed out is closed already.
type news struct {
	mu      sync.Mutex
	ch      chan struct{}
	stopped bool
}

func (n *news) next() <-chan struct{} {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.ch == nil {
		n.ch = make(chan struct{})
		if n.stopped {
			close(n.ch)
		}
	}
	return n.ch
}

// stop closes the channels handed out and every one handed out later.
func (n *news) stop() {
	n.mu.Lock()
	n.stopped = true
	n.mu.Unlock()
	n.bump()
}

func (n *news) bump() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.ch == nil {
		return
	}
	select {
	case <-n.ch: // closed by stop already
	default:
		close(n.ch)
	}
	if !n.stopped {
		n.ch = nil
	}
}
