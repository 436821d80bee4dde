// Package testdb hands tests fresh, migrated databases: SQLite files in a temp
// directory, PostgreSQL schemas on one server per test binary, and schemas on
// one Citus cluster (distributed PostgreSQL: a coordinator and two workers) per
// test binary.
//
// The PostgreSQL server is, in order: $TEST_DATABASE_URL; a server registered by
// a test module with [SetServer] (the integration module registers one started
// with testcontainers when a Docker engine answers); a throwaway cluster made
// with the local initdb/pg_ctl binaries (as user postgres when running as root),
// stopped when the test binary exits. When none of these works the test is
// skipped — except under CI=true, where it fails.
//
// The Citus cluster is $TEST_CITUS_URL, else one started with the local binaries
// when they have the citus extension, with the same skip-or-fail rule. Its
// connections set citus.multi_task_query_log_level=error, so a statement that
// is not routed to one shard fails the test.
package testdb

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" database/sql driver for schema administration

	"github.com/weftlabs/weft"
)

// A Backend is one kind of database the tests run on.
type Backend struct {
	// Name is "sqlite", "postgres" or "citus".
	Name string
	// URL returns the URL of a fresh, empty database of this kind, removed
	// when the test ends.
	URL func(t testing.TB) string
}

// Backends are the databases every store and end-to-end test runs on.
var Backends = []Backend{{"sqlite", SQLiteURL}, {"postgres", PostgresURL}, {"citus", CitusURL}}

// ForEach runs body as one subtest per [Backends] ("sqlite", "postgres",
// "citus"), each with a fresh migrated database: the one store test body that
// proves every database behaves alike. The subtests run in parallel.
func ForEach(t *testing.T, body func(t *testing.T, db *weft.DB)) {
	t.Helper()
	EachURL(t, func(t *testing.T, url string) { body(t, openMigrated(t, url)) })
}

// EachURL runs body as one parallel subtest per [Backends] with the URL of a
// fresh, empty database, for tests that start a server process on it.
func EachURL(t *testing.T, body func(t *testing.T, url string)) {
	t.Helper()
	for _, b := range Backends {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			body(t, b.URL(t))
		})
	}
}

// SQLite returns a fresh migrated SQLite database in a file under t.TempDir().
func SQLite(t testing.TB) *weft.DB {
	t.Helper()
	return openMigrated(t, SQLiteURL(t))
}

// SQLiteURL returns the URL of a fresh, empty SQLite file under t.TempDir().
func SQLiteURL(t testing.TB) string {
	return "sqlite:" + filepath.Join(t.TempDir(), "weft.db")
}

// Postgres returns a fresh migrated database in a new PostgreSQL schema that is
// dropped when the test ends.
func Postgres(t testing.TB) *weft.DB {
	t.Helper()
	return openMigrated(t, PostgresURL(t))
}

// PostgresURL returns the URL of a new, empty PostgreSQL schema (as the
// connection's search_path), dropped when the test ends. Servers started as
// separate processes in a test connect with it.
func PostgresURL(t testing.TB) string {
	t.Helper()
	return newSchema(t, server(t))
}

// Citus returns a fresh migrated (and so distributed) database in a new schema
// on the test Citus cluster, dropped when the test ends.
func Citus(t testing.TB) *weft.DB {
	t.Helper()
	return openMigrated(t, CitusURL(t))
}

// CitusURL returns the URL of a new, empty schema on the test Citus cluster's
// coordinator, dropped when the test ends. Its connections make any statement
// that fans out to several shards an error.
func CitusURL(t testing.TB) string {
	t.Helper()
	return withParam(newSchema(t, citusServer(t)), "citus.multi_task_query_log_level", "error")
}

func newSchema(t testing.TB, base string) string {
	t.Helper()
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatalf("testdb: %v", err)
	}
	defer admin.Close()
	schema := fmt.Sprintf("t_%d_%s", os.Getpid(), strings.ReplaceAll(uuid.NewString()[:13], "-", ""))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := admin.ExecContext(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatalf("testdb: create schema: %v", err)
	}
	t.Cleanup(func() {
		admin, err := sql.Open("pgx", base)
		if err != nil {
			return
		}
		defer admin.Close()
		_, _ = admin.ExecContext(context.Background(), "DROP SCHEMA "+schema+" CASCADE")
	})
	return withParam(base, "search_path", schema)
}

func openMigrated(t testing.TB, url string) *weft.DB {
	t.Helper()
	ctx := context.Background()
	db, err := weft.Open(ctx, url)
	if err != nil {
		t.Fatalf("testdb: open: %v", err)
	}
	t.Cleanup(func() { _ = db.Close() })
	if err := weft.Migrate(ctx, db); err != nil {
		t.Fatalf("testdb: migrate: %v", err)
	}
	return db
}

func withParam(dsn, key, value string) string {
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	return dsn + sep + key + "=" + value
}

// A Server starts a PostgreSQL server for this test binary and returns its URL,
// or an error when it cannot.
type Server func(ctx context.Context) (url string, err error)

var (
	registered atomic.Pointer[Server]
	postgres   lazyServer
	citus      lazyServer
)

// A lazyServer is started by the first test that needs it and shared by the
// rest of the test binary.
type lazyServer struct {
	once sync.Once
	url  string
	err  error
}

// get returns the server's URL, starting it on first use. When it cannot be
// had the test is skipped (hint says how to provide one), except under
// CI=true, where it fails.
func (l *lazyServer) get(t testing.TB, what, hint string, start func(context.Context) (string, error)) string {
	t.Helper()
	l.once.Do(func() {
		// Generous: on a loaded two-core machine a Citus coordinator and two
		// workers take minutes to create their extension.
		ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
		defer cancel()
		l.url, l.err = start(ctx)
	})
	if l.err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("testdb: %s is required under CI=true: %v", what, l.err)
		}
		t.Skipf("testdb: no %s (%s): %v", what, hint, l.err)
	}
	return l.url
}

// SetServer registers a way to start PostgreSQL that is tried after
// $TEST_DATABASE_URL and before local binaries. Call it from TestMain.
func SetServer(s Server) { registered.Store(&s) }

func server(t testing.TB) string {
	t.Helper()
	return postgres.get(t, "PostgreSQL", "set TEST_DATABASE_URL or install initdb/pg_ctl", startServer)
}

func citusServer(t testing.TB) string {
	t.Helper()
	return citus.get(t, "Citus", "set TEST_CITUS_URL or install the citus extension", func(ctx context.Context) (string, error) {
		if url := os.Getenv("TEST_CITUS_URL"); url != "" {
			return url, nil
		}
		url, err := StartCitus(ctx)
		if err == nil {
			// As for PostgreSQL: child test processes share this cluster.
			_ = os.Setenv("TEST_CITUS_URL", url)
		}
		return url, err
	})
}

func startServer(ctx context.Context) (string, error) {
	if url := os.Getenv("TEST_DATABASE_URL"); url != "" {
		return url, nil
	}
	var errs []string
	if s := registered.Load(); s != nil {
		url, err := (*s)(ctx)
		if err == nil {
			return url, nil
		}
		errs = append(errs, err.Error())
	}
	cluster, err := StartLocal(ctx)
	if err == nil {
		// Test processes this one starts (fuzzing workers) use this cluster
		// rather than each making its own.
		_ = os.Setenv("TEST_DATABASE_URL", cluster.URL)
		return cluster.URL, nil
	}
	errs = append(errs, err.Error())
	return "", fmt.Errorf("%s", strings.Join(errs, "; "))
}

// Cluster is a throwaway local PostgreSQL cluster made by [StartLocal].
type Cluster struct {
	// URL reaches the cluster's postgres database as the postgres superuser.
	URL string

	pgctl  string
	data   string
	log    string
	opts   string
	asUser []string // runuser prefix when running as root
}

// StartLocal makes a throwaway PostgreSQL cluster with the local initdb and
// pg_ctl binaries, tuned for tests (no fsync), and starts it. A watcher process
// stops the cluster and removes its files when this process exits, however it
// ends.
//
// settings are extra server settings ("fsync=on") that override the test
// tuning, for runs that must measure a durable server.
func StartLocal(ctx context.Context, settings ...string) (*Cluster, error) {
	closeInheritedOnExec()
	initdb, err := exec.LookPath("initdb")
	if err != nil {
		return nil, fmt.Errorf("initdb not found: %w", err)
	}
	pgctl, err := exec.LookPath("pg_ctl")
	if err != nil {
		return nil, fmt.Errorf("pg_ctl not found: %w", err)
	}
	dir, err := os.MkdirTemp("", "weft-testpg-")
	if err != nil {
		return nil, err
	}
	c := &Cluster{pgctl: pgctl, data: filepath.Join(dir, "data"), log: filepath.Join(dir, "log")}
	// PostgreSQL refuses to run as root: run it as the postgres user instead.
	if os.Geteuid() == 0 {
		pgUser, err := user.Lookup("postgres")
		if err != nil {
			return nil, fmt.Errorf("running as root and no postgres user: %w", err)
		}
		uid, _ := strconv.Atoi(pgUser.Uid)
		gid, _ := strconv.Atoi(pgUser.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			return nil, err
		}
		c.asUser = []string{"runuser", "-u", "postgres", "--"}
	}
	if err := c.run(ctx, initdb, "-D", c.data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync"); err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	c.opts = fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off -c max_connections=300", port, dir)
	for _, setting := range settings {
		c.opts += " -c " + setting
	}
	c.URL = fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port)
	if err := c.Start(ctx); err != nil {
		return nil, err
	}
	stop := strings.Join(append(append([]string{}, c.asUser...), pgctl, "-D", c.data, "stop", "-m", "immediate"), " ")
	script := fmt.Sprintf("while kill -0 %d 2>/dev/null; do sleep 1; done; %s >/dev/null 2>&1; rm -rf %s", os.Getpid(), stop, dir)
	watcher := exec.Command("sh", "-c", script)
	watcher.SysProcAttr = detached()
	if err := watcher.Start(); err != nil {
		return nil, err
	}
	go func() { _ = watcher.Wait() }()
	return c, nil
}

// Start starts the cluster (again) and waits until it accepts connections.
func (c *Cluster) Start(ctx context.Context) error {
	return c.run(ctx, c.pgctl, "-D", c.data, "-l", c.log, "-o", c.opts, "-w", "start")
}

// Stop stops the cluster at once, as an outage would, dropping its connections.
func (c *Cluster) Stop(ctx context.Context) error {
	return c.run(ctx, c.pgctl, "-D", c.data, "-m", "immediate", "-w", "stop")
}

func (c *Cluster) run(ctx context.Context, args ...string) error {
	full := append(append([]string{}, c.asUser...), args...)
	out, err := exec.CommandContext(ctx, full[0], full[1:]...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %w: %s", filepath.Base(args[0]), err, strings.TrimSpace(string(out)))
	}
	return nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
