package web

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
)

// TestEachParallel: every index is called once when nothing fails; a failure is reported as
// the lowest failing index's error, whatever order the goroutines ran in.
func TestEachParallel(t *testing.T) {
	errAt := func(i int) error { return fmt.Errorf("task %d: %w", i, errBroken) }
	for _, tc := range []struct {
		name string
		n    int
		fail []int // the indexes whose call fails
	}{
		{name: "none", n: 0},
		{name: "one", n: 1},
		{name: "many", n: 200},
		{name: "one fails", n: 200, fail: []int{150}},
		{name: "two fail, the lower is told", n: 200, fail: []int{3, 7}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := make([]atomic.Int32, tc.n)
			err := eachParallel(context.Background(), tc.n, func(i int) error {
				calls[i].Add(1)
				for _, f := range tc.fail {
					if i == f {
						return errAt(i)
					}
				}
				return nil
			})
			if len(tc.fail) == 0 {
				if err != nil {
					t.Fatal(err)
				}
				for i := range calls {
					if n := calls[i].Load(); n != 1 {
						t.Errorf("index %d called %d times", i, n)
					}
				}
				return
			}
			if !errors.Is(err, errBroken) {
				t.Fatalf("got %v, want the failure", err)
			}
			// The lowest failing index is always called: the indexes are handed out in order,
			// and nothing is skipped before a failure.
			if want := errAt(tc.fail[0]).Error(); err.Error() != want {
				t.Errorf("got %q, want %q", err, want)
			}
		})
	}
}

var errBroken = errors.New("broken")

// TestEachParallelCanceled: a canceled context stops the calls not yet begun and is the error.
func TestEachParallelCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var calls atomic.Int32
	err := eachParallel(ctx, 100, func(int) error { calls.Add(1); return nil })
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	if n := calls.Load(); n != 0 {
		t.Errorf("%d calls after the context was canceled", n)
	}
}
