// Command vendorgen copies a package's third-party browser files out of
// their npm packages, as its vendor.json pins them (see internal/vendored).
// It runs from the package's directory through go generate:
//
//	go generate ./transport/webui ./transport/httpapi
//
// -manifest names the manifest and -dest the directory of the files that
// name none, both relative to that directory.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/weftlabs/weft/internal/vendored"
)

func main() {
	manifest := flag.String("manifest", "vendor.json", "the manifest")
	dest := flag.String("dest", filepath.Join("static", "vendor"), "where the files go that name no dir")
	flag.Parse()
	if err := vendored.Fetch(*manifest, *dest, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "vendorgen:", err)
		os.Exit(1)
	}
}
