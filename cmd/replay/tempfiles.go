package main

import (
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// tempFiles are this process's temporary files (import's copy of a pipe, an output file being
// written, compact's copy): SIGINT, SIGTERM or SIGHUP (the terminal closed) removes them before
// the process exits, with the status a shell gives a process that signal ended (130, 143, 129). The signal handling runs only while there are
// some, so that otherwise the signals act as they always do.
type tempFiles struct {
	mu    sync.Mutex
	paths map[string]bool
	stop  func()
}

// temps are the process's temporary files.
var temps tempFiles

// create makes a temporary file with os.CreateTemp and registers it, the signal handling
// installed before the file exists: a signal that arrives while it is being made waits for it
// and then removes it, rather than ending the process with the file left behind.
func (t *tempFiles) create(dir, pattern string) (*os.File, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stop == nil {
		t.stop = t.handle()
	}
	f, err := os.CreateTemp(dir, pattern)
	if err != nil {
		if len(t.paths) == 0 {
			t.stop()
			t.stop = nil
		}
		return nil, err
	}
	if t.paths == nil {
		t.paths = map[string]bool{}
	}
	t.paths[f.Name()] = true
	return f, nil
}

// forget drops a file that was removed or renamed into place.
func (t *tempFiles) forget(path string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.paths, path)
	if len(t.paths) == 0 && t.stop != nil {
		t.stop()
		t.stop = nil
	}
}

func (t *tempFiles) handle() func() {
	ch := make(chan os.Signal, 1)
	done := make(chan struct{})
	signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	go func() {
		select {
		case sig := <-ch:
			t.mu.Lock()
			for p := range t.paths {
				os.Remove(p)
			}
			fmt.Fprintf(os.Stderr, "replay: stopped by %v; its temporary files were removed\n", sig)
			os.Exit(128 + int(sig.(syscall.Signal)))
		case <-done:
		}
	}()
	return func() {
		signal.Stop(ch)
		close(done)
	}
}
