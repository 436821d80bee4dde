// Command testclusters starts the throwaway PostgreSQL server and Citus
// cluster that every test binary of one run of scripts/test shares, so that
// each package does not start its own (four initdb runs and three CREATE
// EXTENSION citus a package, two minutes of a loaded two-core machine).
//
// It prints TEST_DATABASE_URL=… and TEST_CITUS_URL=… for each it could
// start (package testdb reads them; tests make a schema of their own on
// them), then "ready", and keeps the clusters until it is told to stop
// (SIGTERM, SIGINT) or its standard input closes. The clusters are removed
// when it exits, however it ends (testdb.StartLocal's watcher). A cluster
// it cannot start is reported on standard error and left out: each test
// binary then tries on its own, and skips or fails as it would have.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/weftlabs/weft/internal/testdb"
)

// sharedConnections is the shared server's max_connections: the test
// binaries running at once each hold their own pools (testdb's clusters
// allow 300 for one binary).
const sharedConnections = "max_connections=1000"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() { // standard input closing (the run that started this ended) stops it too
		_, _ = io.Copy(io.Discard, os.Stdin)
		stop()
	}()

	start, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	var (
		wg          sync.WaitGroup
		pg, citus   string
		pgErr, cErr error
	)
	wg.Add(2)
	go func() {
		defer wg.Done()
		var c *testdb.Cluster
		if c, pgErr = testdb.StartLocal(start, sharedConnections); pgErr == nil {
			pg = c.URL
		}
	}()
	go func() {
		defer wg.Done()
		citus, cErr = testdb.StartCitus(start, sharedConnections)
	}()
	wg.Wait()
	if pgErr != nil {
		fmt.Fprintln(os.Stderr, "testclusters: no PostgreSQL:", pgErr)
	} else {
		fmt.Println("TEST_DATABASE_URL=" + pg)
	}
	if cErr != nil {
		fmt.Fprintln(os.Stderr, "testclusters: no Citus:", cErr)
	} else {
		fmt.Println("TEST_CITUS_URL=" + citus)
	}
	fmt.Println("ready")
	<-ctx.Done()
}
