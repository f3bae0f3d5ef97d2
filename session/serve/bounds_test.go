package serve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
)

// waitFor waits, a minute at most, until cond holds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited a minute for %s", what)
		}
	}
}

func (s *Server) connCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

func (s *Server) bytesInFlight() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.heldBytes
}

// startMessage sends the start of a hello whose client name is n bytes long, without its end:
// a message the server is in the middle of reading.
func startMessage(t *testing.T, rc *rawConn, n int) {
	t.Helper()
	if _, err := fmt.Fprintf(rc, `{"id":1,"op":"hello","version":1,"client":"%s`, strings.Repeat("a", n)); err != nil {
		t.Fatal(err)
	}
}

// TestServerBounds: the server holds at most MaxConns connections and MaxInFlight bytes of
// messages, closes connections idle past ConnIdle, and answers a well-behaved hook all along.
func TestServerBounds(t *testing.T) {
	ws := workspace(t)
	hookServed := func(t *testing.T, s *Server, id string) {
		t.Helper()
		c := dial(t, s)
		if _, err := c.Hook(context.Background(), "claude-code", preToolUse(ws, "s-bounds", id)); err != nil {
			t.Fatalf("the hook was not answered: %v", err)
		}
		c.Close()
	}

	t.Run("idle connections", func(t *testing.T) {
		const max, idle = 8, 100
		s, _ := start(t, Options{MaxConns: max, ConnIdle: -1})
		for range idle {
			rawDial(t, s)
		}
		waitFor(t, fmt.Sprintf("the server to hold %d connections at most", max), func() bool { return s.connCount() <= max })
		hookServed(t, s, "t1")
		// The server may still be accepting the last of the idle connections (the kernel queued
		// them): each one past the bound closes another, so the count comes back under it.
		waitFor(t, fmt.Sprintf("the server to hold %d connections at most once every dial is taken", max), func() bool { return s.connCount() <= max })
	})

	t.Run("idle limit", func(t *testing.T) {
		s, _ := start(t, Options{ConnIdle: 50 * time.Millisecond})
		rc := rawDial(t, s)
		if _, err := rc.r.ReadByte(); !errors.Is(err, io.EOF) {
			t.Fatalf("an idle connection read %v, want the server to close it (EOF)", err)
		}
		waitFor(t, "the server to forget the idle connection", func() bool { return s.connCount() == 0 })
		hookServed(t, s, "t2")
	})

	t.Run("every connection busy", func(t *testing.T) {
		s, _ := start(t, Options{MaxConns: 2, ConnIdle: -1})
		for range 2 {
			startMessage(t, rawDial(t, s), 10)
		}
		waitFor(t, "two connections in the middle of a message", func() bool {
			s.mu.Lock()
			defer s.mu.Unlock()
			busy := 0
			for c := range s.conns {
				if c.busy {
					busy++
				}
			}
			return busy == 2
		})
		rc := rawDial(t, s)
		if r := rc.response(t); r.Error == nil || r.Error.Code != CodeBusy {
			t.Fatalf("a third connection got %+v, want busy", r)
		}
	})

	t.Run("bytes in flight", func(t *testing.T) {
		const bound = 1 << 20
		s, _ := start(t, Options{MaxInFlight: bound})
		a := rawDial(t, s)
		startMessage(t, a, 700<<10)
		waitFor(t, "the first large message to be counted", func() bool { return s.bytesInFlight() >= 600<<10 })
		b := rawDial(t, s)
		startMessage(t, b, 700<<10)
		if r := b.response(t); r.Error == nil || r.Error.Code != CodeBusy {
			t.Fatalf("a second large message got %+v, want busy", r)
		}
		if held := s.bytesInFlight(); held > bound {
			t.Fatalf("%d bytes in flight, bound %d", held, bound)
		}
		hookServed(t, s, "t3")
		fmt.Fprint(a, "\"}\n")
		if r := a.response(t); r.Error != nil {
			t.Fatalf("the first large message, finished, got %+v", r)
		}
		waitFor(t, "the bytes to be given back", func() bool { return s.bytesInFlight() == 0 })
	})
}
