package store

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/tasklog/tasklog/events"
)

// runHelper is the body of a child process the tests start by re-executing the test binary.
func runHelper(role, path string) int {
	switch role {
	case "lock":
		// Hold the file until the parent closes our stdin.
		db, err := Open(path, nil)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Println("locked")
		io.Copy(io.Discard, os.Stdin)
		db.Close()
		return 0
	case "append":
		return appendForever(path)
	}
	fmt.Fprintf(os.Stderr, "unknown helper role %q\n", role)
	return 2
}

// appendForever appends durably to a few tasks at once and prints "task seq id" for every
// acknowledged event, until it is killed.
func appendForever(path string) int {
	db, err := Open(path, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	out := bufio.NewWriter(os.Stdout)
	var mu sync.Mutex
	ids := events.NewIDSource(nil)
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			task := uuid.New()
			for seq := uint64(0); ; seq++ {
				ev, _ := events.New(&events.UserMessage{Text: fmt.Sprintf("writer %d event %d", w, seq)})
				ev.ID, _ = ids.New(time.Now())
				ev.Turn = 1
				if _, err := db.Append(context.Background(), task, seq, ev); err != nil {
					fmt.Fprintln(os.Stderr, err)
					os.Exit(1)
				}
				mu.Lock()
				fmt.Fprintf(out, "%s %d %s\n", task, seq+1, ev.ID)
				out.Flush()
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return 0
}
