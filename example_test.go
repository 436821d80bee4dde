package weft_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/weftlabs/weft"
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
