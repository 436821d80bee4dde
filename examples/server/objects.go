package main

import (
	"flag"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/objects"
)

// objectsFlag registers the objects service's flag.
func objectsFlag(fs *flag.FlagSet, maxFileBytes *int64) {
	fs.Int64Var(maxFileBytes, "max-file-bytes", objects.DefaultMaxFileBytes, "largest file /file/create accepts; larger ones get 413 (also bounded by -max-body-bytes)")
}

// newObjectsService serves versioned objects, tables and files from db;
// hook, when set, watches the publishes of the objects it acts on (the
// monitors).
func newObjectsService(db *weft.DB, maxFileBytes int64, hook objects.ChangeHook) (*objects.Store, error) {
	return objects.New(objects.Config{DB: db, MaxFileBytes: maxFileBytes, Hook: hook})
}
