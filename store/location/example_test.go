package location_test

import (
	"time"

	"github.com/tasklog/tasklog/store/location"
)

// openForReading opens the store a command's --db and --store flags, or else $TASKLOG_STORE and
// $TASKLOG_DB, name, read-only, as the verbs that only read do.
func openForReading(dbFlag string, dbSet bool, storeFlag string, storeSet bool) error {
	// doc: begin
	loc, err := location.Select(dbFlag, dbSet, storeFlag, storeSet, true)
	if err != nil {
		return err
	}
	db, err := loc.Open(location.Options{
		Wait:        time.Second, // for a file another process holds
		CallTimeout: 0,           // each call to a server: 0 is natsstore's default, 5s
		ReadOnly:    true,
		MustExist:   true, // a missing file is location.ErrNoLog, and nothing is created
	})
	// doc: end
	if err != nil {
		return err
	}
	return db.Close()
}

// A command chooses its store once, from its flags and the environment, and opens it the same
// way whatever its kind.
func ExampleSelect() {
	_ = openForReading("tasklog.db", true, "", false)
}
