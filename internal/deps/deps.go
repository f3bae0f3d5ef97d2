package deps

import (
	_ "github.com/bmatcuk/doublestar/v4"
	_ "github.com/google/uuid"
	_ "github.com/oklog/ulid/v2"
	_ "github.com/rogpeppe/go-internal/testscript"
	_ "go.etcd.io/bbolt"
	_ "golang.org/x/term"
	_ "gopkg.in/yaml.v3"
)
