package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/database"
)

func distributeCommand() *command {
	return &command{
		name:    "distribute",
		summary: "lay the schema out over a Citus cluster (distributed PostgreSQL)",
		about: "Migrate the database, then make the identity tables reference tables and distribute every\n" +
			"per-project table on project_id, colocated with calls; print where each table lives.\n" +
			"Servers do this by themselves at start when the citus extension exists; run it after\n" +
			"creating the extension on a database weft already uses, to move its rows to the workers.\n" +
			"It is idempotent.",
		setup: func(fs *flag.FlagSet) action {
			var dbURL string
			databaseFlag(fs, &dbURL)
			return func(ctx context.Context, out io.Writer, _ []string) error {
				db, err := openDatabase(ctx, dbURL) // migrating distributes where it can
				if err != nil {
					return err
				}
				defer db.Close()
				if err := weft.Distribute(ctx, db); errors.Is(err, weft.ErrNotDistributed) {
					return fmt.Errorf("%w: run CREATE EXTENSION citus on the coordinator and add workers first", err)
				} else if err != nil {
					return err
				}
				layout, err := database.Layout(ctx, db.DB)
				if err != nil {
					return err
				}
				w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
				fmt.Fprintln(w, "TABLE\tLAYOUT\tCOLUMN")
				for _, l := range layout {
					fmt.Fprintf(w, "%s\t%s\t%s\n", l.Table, l.Kind, l.Column)
				}
				return w.Flush()
			}
		},
	}
}
