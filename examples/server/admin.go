package main

import (
	"context"
	"fmt"

	"github.com/weftlabs/weft"
)

// administer runs the user, key and member commands.
func administer(ctx context.Context, noun string, args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("%s needs a verb", noun)
	}
	verb, args := args[0], args[1:]
	fs := newFlagSet(noun + " " + verb)
	dbURL := databaseFlag(fs)
	admin := fs.Bool("admin", false, "user create: make the user an admin (may touch every project)")
	keyName := fs.String("name", "cli", "key create: a label for the key")
	role := fs.String("role", "member", "member add: member or owner")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	db, err := openDatabase(ctx, *dbURL)
	if err != nil {
		return err
	}
	defer db.Close()
	identity, err := weft.NewIdentity(weft.IdentityConfig{DB: db.DB})
	if err != nil {
		return err
	}
	pos := fs.Args()
	need := func(n int, usage string) error {
		if len(pos) != n {
			return fmt.Errorf("usage: %s %s %s", noun, verb, usage)
		}
		return nil
	}
	switch noun + " " + verb {
	case "user create":
		if err := need(1, "NAME [-admin]"); err != nil {
			return err
		}
		user, err := identity.CreateUser(ctx, pos[0], *admin)
		if err != nil {
			return err
		}
		fmt.Printf("created user %s (id %s) with entity %s\n", user.Username, user.ID, user.Username)
	case "key create":
		if err := need(1, "USER [-name LABEL]"); err != nil {
			return err
		}
		key, err := identity.CreateAPIKey(ctx, pos[0], *keyName)
		if err != nil {
			return err
		}
		fmt.Println(key)
	case "key revoke":
		if err := need(1, "KEY_ID"); err != nil {
			return err
		}
		if err := identity.RevokeAPIKey(ctx, pos[0]); err != nil {
			return err
		}
		fmt.Println("revoked", pos[0])
	case "member add":
		if err := need(2, "ENTITY USER [-role member|owner]"); err != nil {
			return err
		}
		if err := identity.AddMember(ctx, pos[0], pos[1], *role); err != nil {
			return err
		}
		fmt.Printf("%s is now %s of %s\n", pos[1], *role, pos[0])
	default:
		return fmt.Errorf("unknown command %q %q", noun, verb)
	}
	return nil
}
