package main

import (
	"flag"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/objects"
)

// objectsFlag registers the objects service's flag and returns where its value lands.
func objectsFlag(fs *flag.FlagSet) *int64 {
	return fs.Int64("max-file-bytes", objects.DefaultMaxFileBytes, "largest file /file/create accepts; larger ones get 413 (also bounded by -max-body-bytes)")
}

// newObjectsService serves versioned objects, tables and files from db.
func newObjectsService(db *weft.DB, maxFileBytes int64) (objects.Service, error) {
	return objects.New(objects.Config{DB: db, MaxFileBytes: maxFileBytes})
}
