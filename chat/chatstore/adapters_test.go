package chatstore_test

import (
	"context"
	"log/slog"
	"sync/atomic"
	"testing"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/chat/chatstore"
	"github.com/weftlabs/weft/internal/testdb"
	"github.com/weftlabs/weft/training"
	"github.com/weftlabs/weft/training/blob"
)

// countingResolver counts the checkpoint lookups that reach the store.
type countingResolver struct {
	store   *training.Store
	lookups atomic.Int64
}

func (c *countingResolver) ResolveAdapter(ctx context.Context, model string) (training.Adapter, bool, error) {
	c.lookups.Add(1)
	return c.store.ResolveAdapter(ctx, model)
}

// TestAdaptersServeOnlyReaders: alice's trained model resolves for alice
// and an admin in every spelling, and for bob (another entity), a caller
// with no principal, or a name of bob's own shape that names nothing, it is
// unknown; a refused name is never looked up, so it cannot be told from a
// missing one. With weft.Identity as the authorizer and with none (its
// rule), on every database.
func TestAdaptersServeOnlyReaders(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		ctx := context.Background()
		if err := training.MigrateQueue(db)(ctx); err != nil {
			t.Fatal(err)
		}
		identity, err := weft.NewIdentity(weft.IdentityConfig{DB: db})
		if err != nil {
			t.Fatal(err)
		}
		principals := map[string]weft.Principal{}
		for _, name := range []string{"alice", "bob", "root"} {
			if _, err := identity.CreateUser(ctx, name, name == "root"); err != nil {
				t.Fatal(err)
			}
			key, err := identity.CreateAPIKey(ctx, name, "test")
			if err != nil {
				t.Fatal(err)
			}
			if principals[name], err = identity.Authenticate(ctx, "", key); err != nil {
				t.Fatal(err)
			}
		}
		blobs, err := blob.NewDir(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		store, err := training.New(training.Config{DB: db, Blobs: blobs, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := store.CreateModel(weft.WithPrincipal(ctx, principals["alice"]),
			&training.CreateModelReq{Project: "mail", Name: "agent", BaseModel: "tiny"}); err != nil {
			t.Fatal(err)
		}
		names := []string{
			"alice/mail/agent", "alice/mail/agent:step0", "alice/mail/agent:latest",
			"wandb-artifact:///alice/mail/agent:step0", "wandb-artifact:///alice/mail/agent", "wandb-artifact://alice/mail/agent:latest",
		}
		for _, authorizer := range []chatstore.Authorizer{nil, identity} {
			counting := &countingResolver{store: store}
			adapters := chatstore.Adapters{Training: counting, Authorizer: authorizer}
			resolve := func(ctx context.Context, name string) bool {
				t.Helper()
				a, found, err := adapters.ResolveAdapter(ctx, name)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if found && (a.Name != "alice/mail/agent:step0" || a.BaseModel != "tiny") {
					t.Fatalf("%s resolved to %+v", name, a)
				}
				return found
			}
			for _, name := range names {
				for _, who := range []string{"alice", "root"} {
					if !resolve(weft.WithPrincipal(ctx, principals[who]), name) {
						t.Errorf("authorizer %T: %s cannot resolve %s", authorizer, who, name)
					}
				}
				before := counting.lookups.Load()
				if resolve(weft.WithPrincipal(ctx, principals["bob"]), name) {
					t.Errorf("authorizer %T: bob resolves alice's %s", authorizer, name)
				}
				if resolve(ctx, name) {
					t.Errorf("authorizer %T: a caller with no principal resolves %s", authorizer, name)
				}
				if n := counting.lookups.Load() - before; n != 0 {
					t.Errorf("authorizer %T: refusing %s looked it up %d times", authorizer, name, n)
				}
			}
			if resolve(weft.WithPrincipal(ctx, principals["bob"]), "bob/mail/agent") {
				t.Errorf("authorizer %T: bob resolves a model he does not have", authorizer)
			}
		}
	})
}
