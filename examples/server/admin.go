package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/weftlabs/weft"
)

func userCommand() *command {
	return &command{name: "user", summary: "manage users: create", subcommands: []*command{{
		name: "create", args: []string{"NAME"}, summary: "add a user, with a personal entity NAME",
		setup: func(fs *flag.FlagSet) action {
			admin := fs.Bool("admin", false, "make the user an admin (may touch every project)")
			return withIdentity(fs, func(ctx context.Context, identity *weft.Identity, out io.Writer, args []string) error {
				user, err := identity.CreateUser(ctx, args[0], *admin)
				if err != nil {
					return err
				}
				_, err = fmt.Fprintf(out, "created user %s (id %s) with entity %s\n", user.Username, user.ID, user.Username)
				return err
			})
		},
	}}}
}

func keyCommand() *command {
	return &command{name: "key", summary: "manage API keys: create, revoke", subcommands: []*command{{
		name: "create", args: []string{"USER"}, summary: "issue an API key for USER and print it",
		setup: func(fs *flag.FlagSet) action {
			label := fs.String("name", "cli", "a label for the key")
			return withIdentity(fs, func(ctx context.Context, identity *weft.Identity, out io.Writer, args []string) error {
				key, err := identity.CreateAPIKey(ctx, args[0], *label)
				if err != nil {
					return err
				}
				_, err = fmt.Fprintln(out, key)
				return err
			})
		},
	}, {
		name: "revoke", args: []string{"KEY"}, summary: `revoke a key (KEY: the whole wf_… key, or its id, the hex after "wf_")`,
		setup: func(fs *flag.FlagSet) action {
			return withIdentity(fs, func(ctx context.Context, identity *weft.Identity, out io.Writer, args []string) error {
				if err := identity.RevokeAPIKey(ctx, args[0]); err != nil {
					return err
				}
				// The id alone: the secret part of a whole key is not printed back.
				_, err := fmt.Fprintln(out, "revoked", weft.APIKeyID(args[0]))
				return err
			})
		},
	}}}
}

func memberCommand() *command {
	return &command{name: "member", summary: "manage who may use an entity's projects: add", subcommands: []*command{{
		name: "add", args: []string{"ENTITY", "USER"}, summary: "let USER use the projects of ENTITY",
		setup: func(fs *flag.FlagSet) action {
			role := fs.String("role", "member", "member or owner")
			return withIdentity(fs, func(ctx context.Context, identity *weft.Identity, out io.Writer, args []string) error {
				if err := identity.AddMember(ctx, args[0], args[1], *role); err != nil {
					return err
				}
				_, err := fmt.Fprintf(out, "%s is now %s of %s\n", args[1], *role, args[0])
				return err
			})
		},
	}}}
}

// withIdentity registers the database flag of an administration command and
// returns an action that runs do against that database's identity store.
func withIdentity(fs *flag.FlagSet, do func(ctx context.Context, identity *weft.Identity, out io.Writer, args []string) error) action {
	var dbURL string
	databaseFlag(fs, &dbURL)
	return func(ctx context.Context, out io.Writer, args []string) error {
		db, err := openDatabase(ctx, dbURL)
		if err != nil {
			return err
		}
		defer db.Close()
		identity, err := weft.NewIdentity(weft.IdentityConfig{DB: db})
		if err != nil {
			return err
		}
		return do(ctx, identity, out, args)
	}
}
