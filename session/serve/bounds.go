package serve

import (
	"bufio"
	"net"
	"time"
)

// The server's bounds (Options.MaxConns, MaxInFlight, ConnIdle): which connection makes room
// for a new one, and the count of the bytes of messages in flight.

// evictLocked ends the wait of the connection that has waited longest for its next message,
// to make room for a new one; false when every connection is in the middle of a request. The
// caller holds s.mu.
func (s *Server) evictLocked() bool {
	var oldest *conn
	for c := range s.conns {
		if !c.busy && (oldest == nil || c.waitingSince.Before(oldest.waitingSince)) {
			oldest = c
		}
	}
	if oldest == nil {
		return false
	}
	// Its handler, waiting for a message, returns and closes it.
	oldest.nc.SetReadDeadline(time.Now())
	oldest.evicted, oldest.busy = true, true
	return true
}

// refuse answers a connection the server cannot take with CodeBusy and closes it.
func (s *Server) refuse(nc net.Conn, why string) {
	defer nc.Close()
	nc.SetWriteDeadline(time.Now().Add(messageReadTimeout))
	w := bufio.NewWriter(nc)
	s.reply(w, Response{Error: &Error{Code: CodeBusy, Message: why}})
}

// setBusy marks the connection in the middle of a message, or waiting for the next.
func (s *Server) setBusy(c *conn, busy bool) {
	s.mu.Lock()
	c.busy = busy
	if !busy {
		c.waitingSince = time.Now()
	}
	s.mu.Unlock()
}

// reserve counts n more bytes of a message against Options.MaxInFlight; false, counting
// nothing, when they do not fit.
func (s *Server) reserve(n int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.heldBytes+n > s.opts.MaxInFlight {
		return false
	}
	s.heldBytes += n
	return true
}

// unreserve gives back n bytes reserve counted.
func (s *Server) unreserve(n int64) {
	s.mu.Lock()
	s.heldBytes -= n
	s.mu.Unlock()
}

// waitNext sets how long the connection may wait for its next message; false when it was
// evicted (under s.mu, so that an eviction's deadline is not overwritten).
func (s *Server) waitNext(c *conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c.evicted {
		return false
	}
	if s.opts.ConnIdle > 0 {
		c.nc.SetReadDeadline(time.Now().Add(s.opts.ConnIdle))
	}
	return true
}
