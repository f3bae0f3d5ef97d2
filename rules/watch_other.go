//go:build !linux

package rules

import "errors"

type watcher struct{}

func newWatcher(string) (*watcher, error) {
	return nil, errors.New("watching folders is implemented for Linux only")
}

func (w *watcher) add(string, watchKind) error   { return nil }
func (w *watcher) addNamed(string, string) error { return nil }
func (w *watcher) setRoom(int)                   {}
func (w *watcher) changed() bool                 { return true }
func (w *watcher) close()                        {}
