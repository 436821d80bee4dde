package weft_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/chat"
	"github.com/weftlabs/weft/chat/chatstore"
	"github.com/weftlabs/weft/chat/inprocess"
	"github.com/weftlabs/weft/objects"
	"github.com/weftlabs/weft/trace"
	"github.com/weftlabs/weft/training"
	"github.com/weftlabs/weft/training/blob"
	"github.com/weftlabs/weft/transport/httpapi"
)

// Open a database, migrate it, and manage who may touch which project.
func Example() {
	ctx := context.Background()
	db, err := weft.Open(ctx, "sqlite::memory:")
	if err != nil {
		panic(err)
	}
	defer db.Close()
	if err := weft.Migrate(ctx, db); err != nil {
		panic(err)
	}
	identity, _ := weft.NewIdentity(weft.IdentityConfig{DB: db})
	_, _ = identity.CreateUser(ctx, "alice", false)
	_, _ = identity.CreateUser(ctx, "bob", false)
	_ = identity.AddMember(ctx, "research", "alice", "member")
	key, _ := identity.CreateAPIKey(ctx, "alice", "laptop")

	alice, _ := identity.Authenticate(ctx, "api", key)
	fmt.Println(alice.Username, alice.Entities)
	fmt.Println(identity.Authorize(ctx, alice, "research/evals", true))
	err = identity.Authorize(ctx, alice, "bob/evals", false)
	fmt.Println(errors.Is(err, weft.ErrForbidden))
	err = identity.Authorize(ctx, alice, "nobody/evals", true)
	fmt.Println(errors.Is(err, weft.ErrNotFound))
	// Output:
	// alice [alice research]
	// <nil>
	// true
	// true
}

// Serve weft from a program of one's own, wired as the standalone server
// (examples/server, wiring.go) wires it: the models run in-process are
// opened once and handed to the built-in trainer and to the chat gateway
// (a routing file's routes of kind local: none here, one remote model),
// and the training service exists before the gateway, which serves its
// trained checkpoints. The API is then one http.Handler.
func Example_server() {
	ctx := context.Background()
	db, _ := weft.Open(ctx, "sqlite::memory:")
	defer db.Close()
	_ = weft.Migrate(ctx, db, training.MigrateQueue(db))
	identity, _ := weft.NewIdentity(weft.IdentityConfig{DB: db})
	traces, _ := trace.New(trace.Config{DB: db})
	files, _ := objects.New(objects.Config{DB: db})

	routing, _ := chat.ParseRouting([]byte(`models: [{name: remote-7b, upstreams: [{url: "http://127.0.0.1:9/v1"}]}]`), nil, inprocess.Kind)
	models, _ := inprocess.Open(routing, inprocess.Config{}) // engines
	defer models.Close()
	checkpoints, _ := os.MkdirTemp("", "checkpoints")
	defer os.RemoveAll(checkpoints)
	blobs, _ := blob.NewDir(checkpoints)
	trainers := &training.TrainerSet{} // localtrainer.Served(m) for each of models.Models()
	trained, _ := training.New(training.Config{DB: db, Objects: training.ObjectFiles(files), Blobs: blobs, Trainer: trainers})
	gateway, _ := chat.New(chat.Config{Routing: routing, Recorder: chatstore.Recorder{Trace: traces}, Files: chatstore.Files{Objects: files},
		Adapters: chatstore.Adapters{Training: trained, Authorizer: identity}, Backends: map[string]chat.Backend{chat.KindLocal: models}})
	defer gateway.Close(ctx)

	api, _ := httpapi.New(httpapi.Config{Identity: identity, Trace: traces, Objects: files, Training: trained, Chat: gateway})
	_, _ = identity.CreateUser(ctx, "alice", false)
	key, _ := identity.CreateAPIKey(ctx, "alice", "laptop")
	req := httptest.NewRequest(http.MethodGet, "/v1/models", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	res := httptest.NewRecorder()
	api.ServeHTTP(res, req)
	var list struct{ Data []struct{ ID string } }
	_ = json.Unmarshal(res.Body.Bytes(), &list)
	fmt.Println(res.Code, list.Data[0].ID)
	// Output:
	// 200 remote-7b
}
