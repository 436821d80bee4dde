package testdb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"sync"
)

// citusShards is the test cluster's shard count per distributed table: enough
// that a statement which is not routed by project_id reaches several shards
// (an error on test connections), few enough that each test's schema is
// distributed quickly.
const citusShards = 4

// StartCitus starts a throwaway Citus cluster with the local PostgreSQL
// binaries — a coordinator and two workers, each made by [StartLocal] with
// settings added, the three at once — and returns the coordinator's URL. It
// fails when the binaries lack the citus extension.
func StartCitus(ctx context.Context, settings ...string) (string, error) {
	settings = append([]string{"shared_preload_libraries=citus", fmt.Sprintf("citus.shard_count=%d", citusShards)}, settings...)
	var nodes [3]*Cluster
	var errs [3]error
	var wg sync.WaitGroup
	for i := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := StartLocal(ctx, settings...)
			if err == nil {
				err = execOn(ctx, c.URL, "CREATE EXTENSION IF NOT EXISTS citus")
			}
			nodes[i], errs[i] = c, err
		}()
	}
	wg.Wait()
	if err := errors.Join(errs[:]...); err != nil {
		return "", fmt.Errorf("citus node: %w", err)
	}
	coord := nodes[0]
	if err := execOn(ctx, coord.URL, "SELECT citus_set_coordinator_host('127.0.0.1', $1)", portOf(coord.URL)); err != nil {
		return "", err
	}
	for _, w := range nodes[1:] {
		if err := execOn(ctx, coord.URL, "SELECT citus_add_node('127.0.0.1', $1)", portOf(w.URL)); err != nil {
			return "", err
		}
	}
	return coord.URL, nil
}

func execOn(ctx context.Context, dsn, query string, args ...any) error {
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, query, args...); err != nil {
		return fmt.Errorf("citus: %s: %w", query, err)
	}
	return nil
}

func portOf(dsn string) int {
	u, err := url.Parse(dsn)
	if err != nil {
		return 0
	}
	port, _ := strconv.Atoi(u.Port())
	return port
}
