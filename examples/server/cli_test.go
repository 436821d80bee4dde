package main

import (
	"bufio"
	"bytes"
	"flag"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/weftlabs/weft/internal/gobuild"
	"github.com/weftlabs/weft/internal/testdb"
)

// result is what one run of the built program gave.
type result struct {
	status         int
	stdout, stderr string
}

// runProgram runs the real server binary with args and env (KEY=VALUE added
// to the test's environment) in dir.
func runProgram(t *testing.T, dir string, env []string, args ...string) result {
	t.Helper()
	cmd := exec.Command(gobuild.Binary(t, "./examples/server"), args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if _, exited := err.(*exec.ExitError); err != nil && !exited {
		t.Fatal(err)
	}
	return result{status: cmd.ProcessState.ExitCode(), stdout: stdout.String(), stderr: stderr.String()}
}

// run runs the program where it can leave no database behind by accident.
func run(t *testing.T, args ...string) result {
	t.Helper()
	return runProgram(t, t.TempDir(), nil, args...)
}

// helpForms are the ways to ask for the help of the command at path; all
// print the same text on standard output and exit 0.
func helpForms(path ...string) [][]string {
	return [][]string{
		append([]string{"help"}, path...),
		append(slices.Clone(path), "-h"),
		append(slices.Clone(path), "--help"),
		append(slices.Clone(path), "-help"),
		append(slices.Clone(path), "help"),
	}
}

func assertHelp(t *testing.T, path []string, want ...string) string {
	t.Helper()
	var first string
	for i, args := range helpForms(path...) {
		got := run(t, args...)
		if got.status != 0 || got.stderr != "" {
			t.Fatalf("weft %s: status %d, stderr %q", strings.Join(args, " "), got.status, got.stderr)
		}
		if i == 0 {
			first = got.stdout
		} else if got.stdout != first {
			t.Errorf("weft %s printed\n%s\nbut weft %s printed\n%s", strings.Join(args, " "), got.stdout, strings.Join(helpForms(path...)[0], " "), first)
		}
	}
	for _, w := range want {
		if !strings.Contains(first, w) {
			t.Errorf("help of %q lacks %q:\n%s", path, w, first)
		}
	}
	return first
}

func TestTopLevelHelp(t *testing.T) {
	want := []string{"Usage: weft [COMMAND] [flags]", "runs serve"}
	for _, name := range []string{"serve", "worker", "user", "key", "member", "distribute", "version", "help"} {
		want = append(want, "\n  "+name+" ")
	}
	assertHelp(t, nil, want...)
}

// Every leaf of the tree answers the help forms with its usage line and every
// flag it parses, with that flag's environment variable.
func TestEveryCommandHelpListsItsFlags(t *testing.T) {
	var walk func(cmd *command, path []string)
	walk = func(cmd *command, path []string) {
		if cmd.setup == nil {
			if len(path) > 0 { // the root's help has its own test
				want := []string{"Usage: weft " + strings.Join(path, " ") + " COMMAND"}
				for _, sub := range cmd.subcommands {
					want = append(want, "\n  "+sub.name+" ")
				}
				t.Run(strings.Join(path, "_"), func(t *testing.T) { assertHelp(t, path, want...) })
			}
			for _, sub := range cmd.subcommands {
				walk(sub, append(slices.Clone(path), sub.name))
			}
			return
		}
		want := []string{"Usage: weft " + strings.Join(append(append(slices.Clone(path), "[flags]"), cmd.args...), " ")}
		fs := flag.NewFlagSet("", flag.ContinueOnError)
		cmd.setup(fs)
		fs.VisitAll(func(f *flag.Flag) {
			want = append(want, "\n  -"+f.Name, "env WEFT_"+strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_")))
		})
		t.Run(strings.Join(path, "_"), func(t *testing.T) { assertHelp(t, path, want...) })
	}
	walk(commands(), nil)
}

// The flags the README documents are the flags serve parses, each with the
// environment variable the README names.
func TestServeHelpMatchesREADME(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(moduleRoot(), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	rows := regexp.MustCompile("(?m)^\\| `-([a-z-]+)` \\| `(WEFT_[A-Z_]+)` \\|").FindAllStringSubmatch(string(readme), -1)
	if len(rows) < 10 {
		t.Fatalf("found %d flag rows in the README", len(rows))
	}
	help := run(t, "serve", "-h").stdout
	documented := map[string]bool{}
	for _, row := range rows {
		documented[row[1]] = true
		if !regexp.MustCompile(`\n  -` + row[1] + `\b[^\n]*\n[^\n]*env ` + row[2] + `\)`).MatchString(help) {
			t.Errorf("README documents -%s (%s); serve -h does not list it so:\n%s", row[1], row[2], help)
		}
	}
	for _, m := range regexp.MustCompile(`\n  -([a-z-]+)`).FindAllStringSubmatch(help, -1) {
		if name := m[1]; name != "h" && !documented[name] {
			t.Errorf("serve parses -%s; the README's table lacks it", name)
		}
	}
}

// Every flag the README names — a code span that starts with one, or a word
// of a `go run ./examples/server` line — is a flag some command parses: a
// how-to with a misspelt flag fails here, not in a reader's terminal.
func TestREADMENamesRealFlags(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(moduleRoot(), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	// The help flags, the README's "-flag or --flag" and go build's flag.
	parsed := map[string]bool{"h": true, "help": true, "version": true, "flag": true, "buildvcs": true}
	var walk func(cmd *command)
	walk = func(cmd *command) {
		if cmd.setup != nil {
			fs := flag.NewFlagSet("", flag.ContinueOnError)
			cmd.setup(fs)
			fs.VisitAll(func(f *flag.Flag) { parsed[f.Name] = true })
		}
		for _, sub := range cmd.subcommands {
			walk(sub)
		}
	}
	walk(commands())
	named := map[string]bool{}
	leading := regexp.MustCompile(`^--?([a-z][a-z0-9-]*)`)
	for _, span := range regexp.MustCompile("`([^`\n]+)`").FindAllStringSubmatch(string(readme), -1) {
		if m := leading.FindStringSubmatch(span[1]); m != nil {
			named[m[1]] = true
		}
	}
	for _, line := range regexp.MustCompile(`go run \./examples/server\b[^#\n`+"`"+`]*`).FindAllString(string(readme), -1) {
		for _, m := range regexp.MustCompile(`\s--?([a-z][a-z0-9-]*)`).FindAllStringSubmatch(line, -1) {
			named[m[1]] = true
		}
	}
	if len(named) < 20 {
		t.Fatalf("found %d flags in the README", len(named))
	}
	for name := range named {
		if !parsed[name] {
			t.Errorf("the README names -%s, which no command parses", name)
		}
	}
}

func TestVersion(t *testing.T) {
	binary := gobuild.Binary(t, "./examples/server")
	var first string
	for i, args := range [][]string{{"version"}, {"--version"}, {"-version"}} {
		got := run(t, args...)
		if got.status != 0 || got.stderr != "" {
			t.Fatalf("weft %s: status %d, stderr %q", args[0], got.status, got.stderr)
		}
		if i == 0 {
			first = got.stdout
		} else if got.stdout != first {
			t.Errorf("weft %s printed %q, weft version %q", args[0], got.stdout, first)
		}
	}
	// Go's own reader of the build information is the oracle.
	out, err := exec.Command("go", "version", "-m", binary).Output()
	if err != nil {
		t.Fatal(err)
	}
	// Its lines, after the first ("BINARY: GOVERSION"), are indented by a tab.
	info, err := debug.ParseBuildInfo(strings.ReplaceAll(strings.SplitN(string(out), "\n", 2)[1], "\n\t", "\n")[1:])
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"weft " + info.Main.Version + "\n", "module ", info.Main.Path, "go ", strings.Fields(string(out))[1], "platform ", runtime.GOOS + "/" + runtime.GOARCH}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision", "vcs.time", "vcs.modified":
			want = append(want, "\n"+strings.TrimPrefix(s.Key, "vcs.")+" ", " "+s.Value+"\n")
		}
	}
	for _, w := range want {
		if !strings.Contains(first, w) {
			t.Errorf("version output lacks %q:\n%s\ngo version -m says:\n%s", w, first, out)
		}
	}
}

// The lines of a binary stamped with a checkout's state, as Go records them
// (the text format go version -m prints, which debug.ParseBuildInfo reads).
func TestVersionPrintsVCSStamp(t *testing.T) {
	info, err := debug.ParseBuildInfo("path\tgithub.com/weftlabs/weft/examples/server\n" +
		"mod\tgithub.com/weftlabs/weft\tv0.3.1-0.20261120101500-0123456789ab+dirty\t\n" +
		"build\tvcs=git\nbuild\tvcs.revision=0123456789abcdef0123456789abcdef01234567\n" +
		"build\tvcs.time=2026-11-20T10:15:00Z\nbuild\tvcs.modified=true\n")
	if err != nil {
		t.Fatal(err)
	}
	info.GoVersion = "go1.26.8" // the parser leaves the go line out
	var out bytes.Buffer
	writeVersion(&out, info)
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	want := [][]string{
		{"weft", "v0.3.1-0.20261120101500-0123456789ab+dirty"},
		{"module", "github.com/weftlabs/weft"},
		{"revision", "0123456789abcdef0123456789abcdef01234567"},
		{"time", "2026-11-20T10:15:00Z"},
		{"modified", "true"},
		{"go", "go1.26.8"},
		{"platform", runtime.GOOS + "/" + runtime.GOARCH},
	}
	for i, w := range want {
		if i >= len(lines) || !slices.Equal(strings.Fields(lines[i]), w) {
			t.Fatalf("line %d: want %q in\n%s", i, w, out.String())
		}
	}
}

func TestUnknownCommandListsTheKnownOnes(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		where string
		known []string
	}{
		{[]string{"bogus"}, "weft: ", []string{"serve", "worker", "user", "key", "member", "distribute", "generate", "version", "help"}},
		{[]string{"help", "bogus"}, "weft: ", []string{"serve", "worker", "user", "key", "member", "distribute", "generate", "version", "help"}},
		{[]string{"user", "bogus"}, "weft user: ", []string{"create", "help"}},
		{[]string{"help", "user", "bogus"}, "weft user: ", []string{"create", "help"}},
		{[]string{"key", "bogus", "-h"}, "weft key: ", []string{"create", "revoke", "help"}},
	} {
		got := run(t, tc.args...)
		want := tc.where + `unknown command "bogus" (commands: ` + strings.Join(tc.known, ", ") + ")"
		if got.status != 2 || got.stdout != "" || !strings.HasPrefix(got.stderr, want+"\n") {
			t.Errorf("weft %s: status %d, stdout %q, stderr\n%s\nwant status 2 and stderr starting %q", strings.Join(tc.args, " "), got.status, got.stdout, got.stderr, want)
		}
		if !strings.Contains(got.stderr, "\nCommands:\n") {
			t.Errorf("weft %s: no usage after the error:\n%s", strings.Join(tc.args, " "), got.stderr)
		}
	}
}

func TestCommandLineMistakesExit2WithUsage(t *testing.T) {
	for _, tc := range []struct {
		args       []string
		err, usage string
	}{
		{[]string{"serve", "-bogus"}, "weft serve: flag provided but not defined: -bogus", "Usage: weft serve [flags]"},
		{[]string{"-bogus"}, "weft serve: flag provided but not defined: -bogus", "Usage: weft serve [flags]"},
		{[]string{"user", "create", "alice", "--bogus"}, "weft user create: flag provided but not defined: -bogus", "Usage: weft user create [flags] NAME"},
		{[]string{"key", "create", "alice", "-admin"}, "weft key create: flag provided but not defined: -admin", "Usage: weft key create [flags] USER"},
		{[]string{"serve", "-addr"}, "weft serve: flag needs an argument: -addr", "Usage: weft serve [flags]"},
		{[]string{"serve", "-rate-limit", "fast"}, `weft serve: invalid value "fast" for flag -rate-limit`, "Usage: weft serve [flags]"},
		{[]string{"serve", "now"}, `weft serve: takes no arguments, got ["now"]`, "Usage: weft serve [flags]"},
		{[]string{"user", "create"}, "weft user create: wants NAME, got []", "Usage: weft user create [flags] NAME"},
		{[]string{"member", "add", "research"}, `weft member add: wants ENTITY USER, got ["research"]`, "Usage: weft member add [flags] ENTITY USER"},
		{[]string{"user"}, "weft user: a command is needed: create, help", "Usage: weft user COMMAND"},
		{[]string{"worker"}, "weft worker: needs -trainer-command and -training-workers ≥ 1", "Usage: weft worker [flags]"},
		{[]string{"-log-level", "loud"}, "weft serve: -log-level: ", "Usage: weft serve [flags]"},
	} {
		got := run(t, tc.args...)
		if got.status != 2 || got.stdout != "" || !strings.HasPrefix(got.stderr, tc.err) || !strings.Contains(got.stderr, "\n\n"+tc.usage+"\n") {
			t.Errorf("weft %s: status %d, stdout %q, stderr\n%s\nwant status 2, %q, then %q", strings.Join(tc.args, " "), got.status, got.stdout, got.stderr, tc.err, tc.usage)
		}
	}
	got := runProgram(t, t.TempDir(), []string{"WEFT_RATE_LIMIT=fast"}, "-addr", "127.0.0.1:0")
	if got.status != 2 || !strings.HasPrefix(got.stderr, `weft serve: WEFT_RATE_LIMIT="fast": `) {
		t.Errorf("bad environment value: status %d, stderr\n%s", got.status, got.stderr)
	}
}

// The administration commands keep their flags, environment variables and
// flags after positional arguments; a command that fails exits 1.
func TestAdministrationAgainstADatabase(t *testing.T) {
	dir := t.TempDir()
	db := []string{"WEFT_DATABASE_URL=sqlite:" + filepath.Join(dir, "env.db")}
	mustRun := func(env []string, args ...string) string {
		t.Helper()
		got := runProgram(t, dir, env, args...)
		if got.status != 0 {
			t.Fatalf("weft %s: status %d, stderr %s", strings.Join(args, " "), got.status, got.stderr)
		}
		return got.stdout
	}
	if out := mustRun(db, "user", "create", "alice", "-admin"); !strings.HasPrefix(out, "created user alice ") {
		t.Errorf("user create: %q", out)
	}
	key := mustRun(db, "key", "create", "-name", "laptop", "alice")
	if !regexp.MustCompile(`^wf_[0-9a-f]+_[0-9a-f]+\n$`).MatchString(key) {
		t.Errorf("key create: %q", key)
	}
	// A key is revoked by the whole key as printed, by "wf_<id>" or by its id;
	// revoking it again is no error.
	key = strings.TrimSpace(key)
	keyID := strings.Split(key, "_")[1]
	for _, named := range []string{key, "wf_" + keyID, keyID} {
		if out := mustRun(db, "key", "revoke", named); out != "revoked "+keyID+"\n" {
			t.Errorf("key revoke %s: %q", named, out)
		}
	}
	if got := runProgram(t, dir, db, "key", "revoke", "wf_00000000_0000"); got.status != 1 || !strings.Contains(got.stderr, `API key "00000000" not found`) {
		t.Errorf("key revoke of an unknown key: status %d, stderr %q", got.status, got.stderr)
	}
	if out := mustRun(db, "member", "add", "alice", "-role", "owner", "alice"); out != "alice is now owner of alice\n" {
		t.Errorf("member add: %q", out)
	}
	// A user is not named after a team: it would become the team's owner.
	mustRun(db, "member", "add", "research", "alice")
	if got := runProgram(t, dir, db, "user", "create", "research"); got.status != 1 || !strings.Contains(got.stderr, `"research" is already an entity`) {
		t.Errorf("user create research (a team): status %d, stderr %q; want 1 and the entity named", got.status, got.stderr)
	}
	// "--" ends the flags: a user may be called help.
	if out := mustRun(db, "user", "create", "--", "help"); !strings.HasPrefix(out, "created user help ") {
		t.Errorf("user create -- help: %q", out)
	}
	// The flag wins over the environment: alice is not in flag.db yet.
	mustRun(db, "user", "create", "alice", "-database-url", "sqlite:"+filepath.Join(dir, "flag.db"))
	if got := runProgram(t, dir, db, "user", "create", "alice"); got.status != 1 || !strings.Contains(got.stderr, "error: ") || !strings.Contains(got.stderr, "alice") {
		t.Errorf("second user create alice: status %d, stderr %q; want 1 and an error", got.status, got.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "data")); !os.IsNotExist(err) {
		t.Errorf("the default database was created although every command named another: %v", err)
	}
}

// The quick start: with no arguments the program serves (the database in
// ./data), prints the admin key once and stops cleanly on SIGINT.
func TestNoArgumentsServes(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(gobuild.Binary(t, "./examples/server"))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "WEFT_ADDR=127.0.0.1:0", "WEFT_LOG_LEVEL=warn")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill() //nolint:errcheck // already stopped unless the test failed
	var lines []string
	scanner := bufio.NewScanner(stdout)
	for scanner.Scan() {
		lines = append(lines, scanner.Text())
		if strings.HasPrefix(scanner.Text(), "weft listening on http://127.0.0.1:") {
			break
		}
	}
	if len(lines) != 3 || !strings.HasPrefix(lines[1], "WEFT_API_KEY=wf_") {
		t.Fatalf("first start printed %q", lines)
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("after SIGINT: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "data", "weft.db")); err != nil {
		t.Errorf("the default database: %v", err)
	}
}

func moduleRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// distribute lays a Citus schema out and prints where each table lives; on a
// database without the extension it says what to do, exit 1.
func TestDistributeCommand(t *testing.T) {
	t.Run("citus", func(t *testing.T) {
		got := run(t, "distribute", "-database-url", testdb.CitusURL(t))
		if got.status != 0 {
			t.Fatalf("status %d, stderr %s", got.status, got.stderr)
		}
		for _, want := range []string{"calls  ", "distributed  project_id", "users ", "reference", "training_ids", "weft_migrations", "local"} {
			if !strings.Contains(got.stdout, want) {
				t.Errorf("output lacks %q:\n%s", want, got.stdout)
			}
		}
	})
	t.Run("sqlite", func(t *testing.T) {
		got := run(t, "distribute", "-database-url", "sqlite:"+filepath.Join(t.TempDir(), "weft.db"))
		if got.status != 1 || !strings.Contains(got.stderr, "citus extension") || !strings.Contains(got.stderr, "CREATE EXTENSION citus") {
			t.Fatalf("status %d, stderr %q", got.status, got.stderr)
		}
	})
}

// A first start that fails — its address taken, a model that cannot be
// opened — prints no admin key and stores no admin: the key, shown once,
// is not spent by a server that never ran.
func TestFailedFirstStartSpendsNoAdminKey(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	dir := t.TempDir()
	db := []string{"WEFT_DATABASE_URL=sqlite:" + filepath.Join(dir, "weft.db"), "WEFT_LOG_LEVEL=warn"}
	for _, args := range [][]string{
		{"serve", "-addr", taken.Addr().String()},
		{"serve", "-addr", "127.0.0.1:0", "-model", filepath.Join(dir, "no-such-model")},
	} {
		got := runProgram(t, dir, db, args...)
		if got.status == 0 || strings.Contains(got.stdout, "WEFT_API_KEY") {
			t.Errorf("weft %s: status %d, stdout %q; want a failure and no key", strings.Join(args, " "), got.status, got.stdout)
		}
	}
	if got := runProgram(t, dir, db, "key", "create", "admin"); got.status != 1 || !strings.Contains(got.stderr, `user "admin" not found`) {
		t.Errorf("the failed starts stored the admin: status %d, stdout %q, stderr %q", got.status, got.stdout, got.stderr)
	}
}
