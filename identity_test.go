package weft_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/testdb"
)

func TestIdentity(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		ctx := context.Background()
		id, err := weft.NewIdentity(weft.IdentityConfig{DB: db, CacheTTL: -1})
		if err != nil {
			t.Fatal(err)
		}
		key, err := id.Bootstrap(ctx, "admin")
		if err != nil || key == "" {
			t.Fatalf("bootstrap: key=%q err=%v", key, err)
		}
		if again, err := id.Bootstrap(ctx, "admin"); err != nil || again != "" {
			t.Fatalf("second bootstrap must do nothing: key=%q err=%v", again, err)
		}
		admin, err := id.Authenticate(ctx, "api", key)
		if err != nil {
			t.Fatal(err)
		}
		if !admin.Admin || admin.Username != "admin" || admin.DefaultEntity != "admin" {
			t.Fatalf("bootstrap principal = %+v", admin)
		}

		if _, err := id.CreateUser(ctx, "alice", false); err != nil {
			t.Fatal(err)
		}
		if _, err := id.CreateUser(ctx, "alice", false); !errors.Is(err, weft.ErrUserExists) || !errors.Is(err, weft.ErrConflict) {
			t.Fatalf("duplicate user: %v", err)
		}
		if _, err := id.CreateUser(ctx, "bad/name", false); !errors.Is(err, weft.ErrInvalid) {
			t.Fatalf("bad name: %v", err)
		}
		aliceKey, err := id.CreateAPIKey(ctx, "alice", "laptop")
		if err != nil {
			t.Fatal(err)
		}
		if err := id.AddMember(ctx, "team", "alice", "member"); err != nil {
			t.Fatal(err)
		}
		// A user named after a team would own it: refused, and nothing of it
		// is stored.
		if _, err := id.CreateUser(ctx, "team", false); !errors.Is(err, weft.ErrEntityExists) || !errors.Is(err, weft.ErrConflict) {
			t.Fatalf("user named after a team entity: %v", err)
		}
		if ids, err := id.UserIDs(ctx, []string{"team"}); err != nil || len(ids) != 0 {
			t.Fatalf("the refused user was stored: %v %v", ids, err)
		}
		if owners, err := db.NewSelect().Table("memberships").Where("entity = 'team' AND role = 'owner'").Count(ctx); err != nil || owners != 0 {
			t.Fatalf("team owners = %d (%v), want 0", owners, err)
		}

		tests := []struct {
			name     string
			username string
			key      string
			wantErr  error
		}{
			{"api user", "api", aliceKey, nil},
			{"own name", "alice", aliceKey, nil},
			{"no user name", "", aliceKey, nil},
			{"other name", "admin", aliceKey, weft.ErrUnauthenticated},
			{"wrong secret", "api", otherLastChar(aliceKey), weft.ErrUnauthenticated},
			{"garbage", "api", "not-a-key", weft.ErrUnauthenticated},
			{"empty", "api", "", weft.ErrUnauthenticated},
		}
		for _, tc := range tests {
			p, err := id.Authenticate(ctx, tc.username, tc.key)
			if !errors.Is(err, tc.wantErr) {
				t.Errorf("%s: err = %v, want %v", tc.name, err, tc.wantErr)
			}
			if tc.wantErr == nil && p.Username != "alice" {
				t.Errorf("%s: principal %+v", tc.name, p)
			}
		}

		alice, err := id.Authenticate(ctx, "api", aliceKey)
		if err != nil {
			t.Fatal(err)
		}
		authz := []struct {
			project string
			write   bool
			wantErr error
		}{
			{"alice/p1", true, nil},
			{"team/shared", true, nil},
			{"team/shared", false, nil},
			{"admin/secret", false, weft.ErrForbidden},
			{"admin/secret", true, weft.ErrForbidden},
			{"ghost/proj", false, weft.ErrNotFound},
			{"ghost/proj", true, weft.ErrNotFound},
			{"no-slash", false, weft.ErrInvalid},
			{"/p", false, weft.ErrInvalid},
			{"a/b/c", false, weft.ErrInvalid},
		}
		for _, tc := range authz {
			if err := id.Authorize(ctx, alice, tc.project, tc.write); !errors.Is(err, tc.wantErr) {
				t.Errorf("authorize %s write=%v: %v, want %v", tc.project, tc.write, err, tc.wantErr)
			}
		}
		if err := id.Authorize(ctx, admin, "alice/p1", true); err != nil {
			t.Errorf("admin may touch every project: %v", err)
		}
		// An entity that does not exist is not found, for an admin too: a
		// mistyped entity is never created by a write.
		for _, write := range []bool{false, true} {
			if err := id.Authorize(ctx, admin, "ghost/proj", write); !errors.Is(err, weft.ErrNotFound) {
				t.Errorf("admin, ghost/proj write=%v: %v, want not found", write, err)
			}
		}
		// Authorizing creates no project; a write that succeeded does.
		countProjects := func() int64 {
			t.Helper()
			n, err := db.NewSelect().Table("projects").Count(ctx)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
		if n := countProjects(); n != 0 {
			t.Errorf("projects after authorizing only = %d, want 0", n)
		}
		for _, p := range []string{"alice/p1", "team/shared", "alice/p1"} {
			if err := id.ProjectWritten(ctx, alice, p); err != nil {
				t.Fatal(err)
			}
		}
		if n := countProjects(); n != 2 {
			t.Errorf("projects written = %d, want 2", n)
		}

		keyID := alice.KeyID
		if err := id.RevokeAPIKey(ctx, keyID); err != nil {
			t.Fatal(err)
		}
		if _, err := id.Authenticate(ctx, "api", aliceKey); !errors.Is(err, weft.ErrUnauthenticated) {
			t.Fatalf("revoked key still works: %v", err)
		}
		if err := id.RevokeAPIKey(ctx, "nope"); !errors.Is(err, weft.ErrNotFound) {
			t.Fatalf("revoke unknown: %v", err)
		}
	})
}

// Migrations applied twice, and by several processes at once, leave one schema.
func TestMigrateIdempotentAndConcurrent(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"sqlite", "postgres"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			url := testdb.SQLiteURL(t)
			workers := 1
			if name == "postgres" {
				url = testdb.PostgresURL(t)
				workers = 4
			}
			ctx := context.Background()
			var wg sync.WaitGroup
			errs := make(chan error, workers)
			for range workers {
				wg.Go(func() {
					db, err := weft.Open(ctx, url)
					if err != nil {
						errs <- err
						return
					}
					defer db.Close()
					if err := weft.Migrate(ctx, db); err != nil {
						errs <- err
						return
					}
					errs <- weft.Migrate(ctx, db)
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Fatal(err)
				}
			}
			db, err := weft.Open(ctx, url)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			n, err := db.NewSelect().Table("weft_migrations").Where("name = ?", "20261122000001").Count(ctx)
			if err != nil || n != int64(1) {
				t.Fatalf("identity migration recorded %d times (%v), want once", n, err)
			}
		})
	}
}

// otherLastChar returns key with its last character changed.
func otherLastChar(key string) string {
	last := byte('0')
	if key[len(key)-1] == last {
		last = '1'
	}
	return key[:len(key)-1] + string(last)
}

func TestIdentityLookups(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		ctx := context.Background()
		id, err := weft.NewIdentity(weft.IdentityConfig{DB: db, CacheTTL: -1})
		if err != nil {
			t.Fatal(err)
		}
		alice, err := id.CreateUser(ctx, "alice", false)
		if err != nil {
			t.Fatal(err)
		}
		bob, err := id.CreateUser(ctx, "bob", false)
		if err != nil {
			t.Fatal(err)
		}
		root, err := id.CreateUser(ctx, "root", true)
		if err != nil {
			t.Fatal(err)
		}
		key, err := id.CreateAPIKey(ctx, "alice", "k")
		if err != nil {
			t.Fatal(err)
		}
		p, err := id.Authenticate(ctx, "", key)
		if err != nil {
			t.Fatal(err)
		}
		for _, project := range []string{"alice/b", "alice/a", "bob/q"} {
			owner := weft.Principal{UserID: alice.ID, Username: "alice", Entities: []string{"alice"}}
			if project == "bob/q" {
				owner = weft.Principal{UserID: bob.ID, Username: "bob", Entities: []string{"bob"}}
			}
			if err := id.ProjectWritten(ctx, owner, project); err != nil {
				t.Fatal(err)
			}
		}

		projects, err := id.Projects(ctx, p)
		if err != nil || len(projects) != 2 || projects[0].ID() != "alice/a" || projects[1].ID() != "alice/b" {
			t.Fatalf("alice's projects: %+v %v", projects, err)
		}
		if err := id.AddMember(ctx, "bob", "alice", "member"); err != nil {
			t.Fatal(err)
		}
		// Memberships are read afresh for a key id, as for a new request.
		p, err = id.PrincipalOfKey(ctx, p.KeyID)
		if err != nil || !p.MemberOf("bob") || p.Username != "alice" {
			t.Fatalf("principal of key: %+v %v", p, err)
		}
		if projects, _ = id.Projects(ctx, p); len(projects) != 3 {
			t.Fatalf("after joining bob: %+v", projects)
		}
		if all, _ := id.Projects(ctx, weft.Principal{UserID: root.ID, Admin: true}); len(all) != 3 {
			t.Fatalf("an admin sees every project: %+v", all)
		}
		if none, err := id.Projects(ctx, weft.Principal{UserID: "x"}); err != nil || len(none) != 0 {
			t.Fatalf("no entity: %+v %v", none, err)
		}

		names, err := id.Usernames(ctx, []string{alice.ID, bob.ID, "unknown"})
		if err != nil || len(names) != 2 || names[alice.ID] != "alice" || names[bob.ID] != "bob" {
			t.Fatalf("usernames: %v %v", names, err)
		}

		if err := id.RevokeAPIKey(ctx, p.KeyID); err != nil {
			t.Fatal(err)
		}
		for _, keyID := range []string{p.KeyID, "unknown", ""} {
			if _, err := id.PrincipalOfKey(ctx, keyID); !errors.Is(err, weft.ErrBadCredentials) {
				t.Fatalf("key %q: %v", keyID, err)
			}
		}
	})
}

// TestAPIKeysAndMembers: a user's keys are listed newest first without their
// secrets, revoked ones marked; an entity's members by name with their
// roles.
func TestAPIKeysAndMembers(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		ctx := context.Background()
		id, err := weft.NewIdentity(weft.IdentityConfig{DB: db, CacheTTL: -1})
		if err != nil {
			t.Fatal(err)
		}
		alice, err := id.CreateUser(ctx, "alice", false)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := id.CreateUser(ctx, "bob", false); err != nil {
			t.Fatal(err)
		}
		first, _ := id.CreateAPIKey(ctx, "alice", "laptop")
		if _, err := id.CreateAPIKey(ctx, "alice", "ci"); err != nil {
			t.Fatal(err)
		}
		if _, err := id.CreateAPIKey(ctx, "bob", "bob's"); err != nil {
			t.Fatal(err)
		}
		if err := id.RevokeAPIKey(ctx, first); err != nil {
			t.Fatal(err)
		}
		keys, err := id.APIKeys(ctx, alice.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(keys) != 2 || keys[0].Name != "ci" || keys[0].RevokedAt != nil || keys[1].Name != "laptop" || keys[1].RevokedAt == nil ||
			keys[1].ID != weft.APIKeyID(first) || !strings.Contains(first, keys[1].ID+"_") {
			t.Fatalf("alice's keys: %+v", keys)
		}
		if err := id.AddMember(ctx, "team", "bob", "owner"); err != nil {
			t.Fatal(err)
		}
		if err := id.AddMember(ctx, "team", "alice", "member"); err != nil {
			t.Fatal(err)
		}
		members, err := id.Members(ctx, "team")
		if err != nil {
			t.Fatal(err)
		}
		if len(members) != 2 || members[0].Username != "alice" || members[0].Role != "member" || members[1].Username != "bob" || members[1].Role != "owner" {
			t.Fatalf("team's members: %+v", members)
		}
	})
}

// TestAPIKeyLastUsed: a key's use is written at most once a KeyUseInterval
// per key, by any number of processes (each with its own Identity), both
// when the key signs a request and when a browser session made with it is
// used; a key never used has none.
func TestAPIKeyLastUsed(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		ctx := context.Background()
		t0 := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
		now := t0
		clock := func() time.Time { return now }
		id, err := weft.NewIdentity(weft.IdentityConfig{DB: db, Now: clock})
		if err != nil {
			t.Fatal(err)
		}
		other, err := weft.NewIdentity(weft.IdentityConfig{DB: db, Now: clock, CacheTTL: -1}) // another process
		if err != nil {
			t.Fatal(err)
		}
		alice, err := id.CreateUser(ctx, "alice", false)
		if err != nil {
			t.Fatal(err)
		}
		key, _ := id.CreateAPIKey(ctx, "alice", "laptop")
		if _, err := id.CreateAPIKey(ctx, "alice", "unused"); err != nil {
			t.Fatal(err)
		}
		lastUsed := func() map[string]*time.Time {
			t.Helper()
			keys, err := id.APIKeys(ctx, alice.ID)
			if err != nil {
				t.Fatal(err)
			}
			out := map[string]*time.Time{}
			for _, k := range keys {
				out[k.Name] = k.LastUsedAt
			}
			return out
		}
		use := func(by *weft.Identity, at time.Duration, want time.Duration) {
			t.Helper()
			now = t0.Add(at)
			if _, err := by.Authenticate(ctx, "", key); err != nil {
				t.Fatal(err)
			}
			got := lastUsed()
			if got["unused"] != nil || got["laptop"] == nil || !got["laptop"].Equal(t0.Add(want)) {
				t.Fatalf("at +%v: last used %v, want +%v", at, got["laptop"], want)
			}
		}
		if got := lastUsed(); got["laptop"] != nil {
			t.Fatalf("a new key was used at %v", got["laptop"])
		}
		use(id, 0, 0)
		use(id, 30*time.Second, 0)              // within the interval: not written again
		use(other, 40*time.Second, 0)           // nor by another process
		use(id, 61*time.Second, 61*time.Second) // the next minute is
		use(other, 90*time.Second, 61*time.Second)

		// A browser's session made with the key uses it.
		now = t0.Add(10 * time.Minute)
		if err := id.CreateSession(ctx, "hash", weft.Session{UserID: alice.ID, KeyID: weft.APIKeyID(key), CreatedAt: now, ExpiresAt: now.Add(time.Hour)}); err != nil {
			t.Fatal(err)
		}
		if _, err := other.SessionOf(ctx, "hash"); err != nil {
			t.Fatal(err)
		}
		if got := lastUsed()["laptop"]; got == nil || !got.Equal(now) {
			t.Fatalf("after the session's use: %v, want %v", got, now)
		}
		// An expired session is no use.
		now = now.Add(2 * time.Hour)
		if _, err := id.SessionOf(ctx, "hash"); err != nil {
			t.Fatal(err)
		}
		if got := lastUsed()["laptop"]; !got.Equal(t0.Add(10 * time.Minute)) {
			t.Fatalf("an expired session's key was used at %v", got)
		}
	})
}
