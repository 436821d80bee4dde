// Command server runs weft as a standalone HTTP server, and administers its users
// and keys.
//
//	server [serve]                        run the server (the default)
//	server worker -trainer-command CMD    run training jobs only, against the servers' database
//	server user create NAME [-admin]      add a user (with a personal entity NAME)
//	server key create USER [-name N]      issue an API key for USER and print it
//	server key revoke KEY_ID              revoke a key (KEY_ID is the hex after "wf_")
//	server member add ENTITY USER [-role member|owner]
//
// Every flag has an environment variable (WEFT_ plus the flag name in upper case,
// dashes as underscores): WEFT_ADDR, WEFT_DATABASE_URL, WEFT_MAX_BODY_BYTES, ...
// Flags win over the environment.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "error:", err)
		}
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	command := "serve"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		command, args = args[0], args[1:]
	}
	switch command {
	case "serve":
		return serve(ctx, args)
	case "worker":
		return work(ctx, args)
	case "user", "key", "member":
		return administer(ctx, command, args)
	default:
		return fmt.Errorf("unknown command %q (want serve, worker, user, key or member)", command)
	}
}

// newFlagSet returns a flag set whose defaults come from WEFT_* variables once
// parsed with parseFlags.
func newFlagSet(name string) *flag.FlagSet {
	return flag.NewFlagSet(name, flag.ContinueOnError)
}

// parseFlags applies WEFT_<NAME> environment variables as defaults, then args.
func parseFlags(fs *flag.FlagSet, args []string) error {
	var envErr error
	fs.VisitAll(func(f *flag.Flag) {
		env := "WEFT_" + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
		if v, ok := os.LookupEnv(env); ok {
			if err := f.Value.Set(v); err != nil && envErr == nil {
				envErr = fmt.Errorf("%s=%q: %w", env, v, err)
			}
		}
	})
	if envErr != nil {
		return envErr
	}
	// Flags may follow positional arguments ("user create alice -admin"): parse,
	// set the first positional aside, and go on with the rest.
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			break
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
	return fs.Parse(append([]string{"--"}, positional...))
}

// databaseFlag is the flag every command shares.
func databaseFlag(fs *flag.FlagSet) *string {
	return fs.String("database-url", "sqlite:data/weft.db",
		"database: postgres://user:pass@host/db or sqlite:path/file.db (a relative sqlite path is created under the working directory)")
}
