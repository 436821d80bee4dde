// Command embed shows weft inside an existing net/http program: the weft
// handler mounted under /weft/ beside the program's own routes, and weft's Go
// API called directly with the acting user in the context.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/trace"
	"github.com/weftlabs/weft/transport/httpapi"
)

func main() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "weft-embed-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	db, err := weft.Open(ctx, "sqlite:"+filepath.Join(dir, "weft.db"))
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	if err := weft.Migrate(ctx, db); err != nil {
		log.Fatal(err)
	}
	identity, err := weft.NewIdentity(weft.IdentityConfig{DB: db})
	if err != nil {
		log.Fatal(err)
	}

	// Calling weft directly: create a user and a key, then authenticate as it.
	if _, err := identity.CreateUser(ctx, "service-account", false); err != nil {
		log.Fatal(err)
	}
	key, err := identity.CreateAPIKey(ctx, "service-account", "embed example")
	if err != nil {
		log.Fatal(err)
	}
	caller, err := identity.Authenticate(ctx, "api", key)
	if err != nil {
		log.Fatal(err)
	}
	ctx = weft.WithPrincipal(ctx, caller)
	fmt.Printf("acting as %s (entity %s)\n", caller.Username, caller.DefaultEntity)

	// Calling a service directly: trace one call of the program's own work.
	traces, err := trace.New(trace.Config{DB: db})
	if err != nil {
		log.Fatal(err)
	}
	project := caller.DefaultEntity + "/embedded"
	started, err := traces.CallStart(ctx, &trace.CallStartReq{Start: trace.StartedCall{
		ProjectID: project, OpName: "nightly-report", StartedAt: time.Now(),
		Inputs: json.RawMessage(`{"day":"2026-11-21"}`),
	}})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := traces.CallEnd(ctx, &trace.CallEndReq{End: trace.EndedCall{
		ProjectID: project, ID: started.ID, EndedAt: time.Now(), Output: json.RawMessage(`{"rows":42}`),
	}}); err != nil {
		log.Fatal(err)
	}
	read, err := traces.CallRead(ctx, &trace.CallReadReq{ProjectID: project, ID: started.ID})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("traced %s: output %s, stored by user %s\n", read.Call.OpName, read.Call.Output, *read.Call.PfUserID)

	// Mounting weft's HTTP API in the program's own mux; the call above is
	// readable there too (POST /weft/call/read with the key).
	handler, err := httpapi.New(httpapi.Config{Identity: identity, Trace: traces, Health: db.PingContext})
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /hello", func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "the host program's own route") })
	mux.Handle("/weft/", http.StripPrefix("/weft", handler))

	addr := "127.0.0.1:8090"
	if len(os.Args) > 1 {
		addr = os.Args[1]
	}
	fmt.Printf("serving the host program on http://%s (weft under /weft/, e.g. /weft/health)\n", addr)
	log.Fatal(http.ListenAndServe(addr, mux))
}
