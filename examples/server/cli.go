package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
)

// programName is how usage texts name the program, whatever its binary is
// called ("go run ./examples/server" builds one named server).
const programName = "weft"

// A command is one word of the command line: either a leaf, which has flags
// and runs, or a group (user, key, member) whose subcommands are its verbs.
// Adding a command is adding one of these to the tree in commands().
type command struct {
	name    string
	args    []string // positional arguments a leaf takes, as its usage line names them
	summary string   // one line, shown in the parent's list of commands
	about   string   // paragraphs shown under the usage line; optional
	// setup registers a leaf's flags on fs and returns what runs the command
	// once they are parsed. It has no other effect, so help can call it to
	// list the flags. Nil for a group.
	setup       func(fs *flag.FlagSet) action
	subcommands []*command
}

// An action runs a leaf command with its positional arguments, writing its
// results to out.
type action func(ctx context.Context, out io.Writer, args []string) error

func (c *command) find(name string) *command {
	for _, sub := range c.subcommands {
		if sub.name == name {
			return sub
		}
	}
	return nil
}

// names lists the subcommands for error messages, help included where it
// answers.
func (c *command) names() []string {
	names := make([]string, 0, len(c.subcommands)+1)
	for _, sub := range c.subcommands {
		names = append(names, sub.name)
	}
	return append(names, "help")
}

// usageError is a mistake in the command line. It is reported with the usage
// of the command it concerns, and the process exits 2.
type usageError struct {
	err  error
	cmd  *command // set by dispatch when the action that failed did not
	path string   // the command's words after the program name
}

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

// misuse is a usage error about the command at path.
func misuse(cmd *command, path []string, err error) *usageError {
	return &usageError{err: err, cmd: cmd, path: strings.Join(path, " ")}
}

// usagef returns a usage error; an action returns one for arguments that
// parse but make no sense together.
func usagef(format string, a ...any) error {
	return &usageError{err: fmt.Errorf(format, a...)}
}

// cli runs a command line against the command tree.
type cli struct {
	root           *command
	defaultCommand string // run when the line is empty or starts with a flag
	stdout, stderr io.Writer
}

// run executes args (without the program name) and returns the exit status:
// 0 when the command succeeded or help was asked for, 1 when it failed, 2 for
// a mistake in the command line.
func (c *cli) run(ctx context.Context, args []string) int {
	err := c.dispatch(ctx, c.root, nil, args)
	var usage *usageError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &usage):
		fmt.Fprintf(c.stderr, "%s: %v\n\n", strings.TrimSpace(programName+" "+usage.path), usage.err)
		c.help(c.stderr, usage.cmd, usage.path)
		return 2
	default:
		fmt.Fprintln(c.stderr, "error:", err)
		return 1
	}
}

func (c *cli) dispatch(ctx context.Context, cmd *command, path []string, args []string) error {
	if cmd.setup != nil {
		err := c.runLeaf(ctx, cmd, path, args)
		var usage *usageError
		if errors.As(err, &usage) && usage.cmd == nil {
			*usage = *misuse(cmd, path, usage.err)
		}
		return err
	}
	if cmd == c.root && (len(args) == 0 || isFlag(args[0]) && !isHelp(args[0]) && !isVersionFlag(args[0])) {
		return c.dispatch(ctx, cmd, path, append([]string{c.defaultCommand}, args...))
	}
	if len(args) == 0 {
		return misuse(cmd, path, fmt.Errorf("a command is needed: %s", strings.Join(cmd.names(), ", ")))
	}
	name := args[0]
	switch {
	case isHelp(name):
		return c.helpTopic(cmd, path, args[1:])
	case cmd == c.root && isVersionFlag(name):
		name = "version"
	}
	sub := cmd.find(name)
	if sub == nil {
		return misuse(cmd, path, unknownCommand(cmd, name))
	}
	return c.dispatch(ctx, sub, append(path, sub.name), args[1:])
}

func unknownCommand(cmd *command, name string) error {
	return fmt.Errorf("unknown command %q (commands: %s)", name, strings.Join(cmd.names(), ", "))
}

// runLeaf parses a leaf's flags and runs it. "help" as its first argument, or
// -h anywhere among its flags, prints its usage instead.
func (c *cli) runLeaf(ctx context.Context, cmd *command, path []string, args []string) error {
	if len(args) > 0 && args[0] == "help" {
		return c.helpTopic(cmd, path, args[1:])
	}
	fs := newFlagSet(cmd)
	run := cmd.setup(fs)
	if err := parseFlags(fs, args); errors.Is(err, flag.ErrHelp) {
		c.help(c.stdout, cmd, strings.Join(path, " "))
		return nil
	} else if err != nil {
		return &usageError{err: err}
	}
	if fs.NArg() != len(cmd.args) {
		if len(cmd.args) == 0 {
			return usagef("takes no arguments, got %q", fs.Args())
		}
		return usagef("wants %s, got %q", strings.Join(cmd.args, " "), fs.Args())
	}
	return run(ctx, c.stdout, fs.Args())
}

// helpTopic prints the usage of the command that topic (the words after
// "help") names under cmd, on standard output.
func (c *cli) helpTopic(cmd *command, path []string, topic []string) error {
	for _, name := range topic {
		sub := cmd.find(name)
		if sub == nil {
			return misuse(cmd, path, unknownCommand(cmd, name))
		}
		cmd, path = sub, append(path, sub.name)
	}
	c.help(c.stdout, cmd, strings.Join(path, " "))
	return nil
}

// help writes cmd's usage: its usage line, what it does, and its commands or
// flags with their environment variables and defaults.
func (c *cli) help(w io.Writer, cmd *command, path string) {
	full := strings.TrimSpace(programName + " " + path)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	defer tw.Flush()
	if cmd.setup == nil {
		usage := full + " COMMAND"
		if cmd == c.root {
			usage = full + " [COMMAND] [flags]"
		}
		fmt.Fprintf(tw, "Usage: %s\n\n", usage)
		if cmd.about != "" {
			fmt.Fprintf(tw, "%s\n\n", cmd.about)
		}
		fmt.Fprintln(tw, "Commands:")
		for _, sub := range cmd.subcommands {
			fmt.Fprintf(tw, "  %s\t%s\n", sub.name, sub.summary)
		}
		fmt.Fprintf(tw, "  help\tshow the usage and flags of a command: %s help COMMAND...\n", full)
		fmt.Fprintf(tw, "\nRun '%s help COMMAND' or '%s COMMAND -h' for a command's usage and flags.\n", full, full)
		return
	}
	fmt.Fprintf(tw, "Usage: %s\n\n", strings.Join(append([]string{full, "[flags]"}, cmd.args...), " "))
	about := cmd.about
	if about == "" {
		about = strings.ToUpper(cmd.summary[:1]) + cmd.summary[1:] + "."
	}
	fmt.Fprintf(tw, "%s\n\nFlags (each can also be set by the environment variable named; flags win):\n", about)
	fs := newFlagSet(cmd)
	cmd.setup(fs)
	fs.VisitAll(func(f *flag.Flag) {
		kind, usage := flag.UnquoteUsage(f)
		fmt.Fprintf(tw, "  -%s\n    \t%s (", strings.TrimSpace(f.Name+" "+kind), usage)
		if def := defaultText(f); def != "" {
			fmt.Fprintf(tw, "default %s; ", def)
		}
		fmt.Fprintf(tw, "env %s)\n", envName(f.Name))
	})
	fmt.Fprintln(tw, "  -h, -help\n    \tshow this help; so does help as the first argument")
}

// defaultText is a flag's default as help shows it; empty for a zero value.
func defaultText(f *flag.Flag) string {
	switch f.DefValue {
	case "", "0", "0s", "false":
		return ""
	}
	if getter, ok := f.Value.(flag.Getter); ok {
		if _, isString := getter.Get().(string); isString {
			return fmt.Sprintf("%q", f.DefValue)
		}
	}
	return f.DefValue
}

func isHelp(arg string) bool {
	return slices.Contains([]string{"help", "-h", "-help", "--help"}, arg)
}

func isVersionFlag(arg string) bool { return arg == "-version" || arg == "--version" }

func isFlag(arg string) bool { return strings.HasPrefix(arg, "-") && arg != "-" }

func newFlagSet(cmd *command) *flag.FlagSet {
	fs := flag.NewFlagSet(cmd.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // the cli prints usage itself, on the stream the case calls for
	return fs
}

// envName is the environment variable that sets a flag: WEFT_ plus its name
// in upper case, dashes as underscores.
func envName(flagName string) string {
	return "WEFT_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// parseFlags applies WEFT_<NAME> environment variables as defaults, then args.
// Flags may follow positional arguments ("user create alice -admin"); "--"
// ends the flags.
func parseFlags(fs *flag.FlagSet, args []string) error {
	var envErr error
	fs.VisitAll(func(f *flag.Flag) {
		env := envName(f.Name)
		if v, ok := os.LookupEnv(env); ok {
			if err := f.Value.Set(v); err != nil && envErr == nil {
				envErr = fmt.Errorf("%s=%q: %w", env, v, err)
			}
		}
	})
	if envErr != nil {
		return envErr
	}
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			break
		}
		if consumed := len(args) - len(rest); consumed > 0 && args[consumed-1] == "--" {
			positional = append(positional, rest...)
			break
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
	return fs.Parse(append([]string{"--"}, positional...))
}
