package main

import (
	"flag"

	"github.com/weftlabs/weft/datasets"
)

// datasetFlags are the bounds of one dataset made of calls
// (/v2/{entity}/{project}/datasets/from_calls).
func datasetFlags(fs *flag.FlagSet) *datasets.Limits {
	l := &datasets.Limits{}
	fs.IntVar(&l.MaxRows, "dataset-max-rows", datasets.DefaultMaxRows, "calls one dataset made of a selection of calls may hold; a larger limit gets 400")
	fs.IntVar(&l.MaxBytes, "dataset-max-bytes", datasets.DefaultMaxBytes, "bytes of JSON the rows of one dataset made of calls may come to (what the request holds in memory); more get 413")
	return l
}
