// Command server runs weft as a standalone HTTP server, and administers its users
// and keys.
//
//	weft [serve] [flags]                  run the server (the default)
//	weft worker -trainer-command CMD      run training jobs only, against the servers' database
//	weft user create NAME [-admin]        add a user (with a personal entity NAME)
//	weft key create USER [-name N]        issue an API key for USER and print it
//	weft key revoke KEY_ID                revoke a key (KEY_ID is the hex after "wf_")
//	weft member add ENTITY USER [-role member|owner]
//	weft version                          print the version and build information
//	weft help [COMMAND...]                usage and flags of a command (or COMMAND -h)
//
// Every flag has an environment variable (WEFT_ plus the flag name in upper case,
// dashes as underscores): WEFT_ADDR, WEFT_DATABASE_URL, WEFT_MAX_BODY_BYTES, ...
// Flags win over the environment. The exit status is 0 on success and for
// help, 1 when a command fails and 2 for a mistake in the command line.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	line := cli{root: commands(), defaultCommand: "serve", stdout: os.Stdout, stderr: os.Stderr}
	status := line.run(ctx, os.Args[1:])
	stop()
	os.Exit(status)
}

// commands is the command tree of the program.
func commands() *command {
	return &command{
		about: "weft serves call tracing, feedback, objects, chat and training over HTTP, on SQLite\n" +
			"or PostgreSQL. With no command, or with flags only, it runs serve.",
		subcommands: []*command{
			serveCommand(),
			workerCommand(),
			userCommand(),
			keyCommand(),
			memberCommand(),
			distributeCommand(),
			generateCommand(),
			versionCommand(),
		},
	}
}
