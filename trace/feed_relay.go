package trace

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/weftlabs/weft"
)

// channelOf is the PostgreSQL notification channel of the calls written in
// schema: notifications reach every listener of the database, and the
// servers of one schema are one deployment. Hashed, as a channel name is an
// identifier of at most 63 bytes.
func channelOf(schema string) string {
	h := fnv.New64a()
	h.Write([]byte(schema))
	return fmt.Sprintf("weft_calls_%016x", h.Sum64())
}

// maxNoticeBytes bounds a notification's payload, under PostgreSQL's 8000
// bytes. A write of more calls than one notice can name notifies "many"
// instead, and readers re-read their whole view.
const maxNoticeBytes = 7500

// relayRetry is how long a relay waits before it connects again after its
// connection broke.
const relayRetry = time.Second

// notice is the payload of one notification.
type notice struct {
	Origin  string   `json:"o"` // the feed that wrote, which skips its own notices
	Project string   `json:"p"`
	IDs     []string `json:"i,omitempty"`
	Many    bool     `json:"m,omitempty"` // more calls were written than a notice names
}

// ListenPostgres makes f span every process that shares db, a PostgreSQL
// database: from now on a store with f as its Config.Feed also notifies the
// calls it writes on a PostgreSQL channel once the write commits, and f
// listens to that channel on a connection of its own and tells its
// subscribers of the calls other processes wrote. It returns once f listens;
// the listening goes on until ctx ends, connecting again when the
// connection breaks (subscribers are then told they missed some). On SQLite,
// which one process owns, it does nothing.
func (f *Feed) ListenPostgres(ctx context.Context, db *weft.DB, logger *slog.Logger) error {
	if !db.Postgres() {
		return nil
	}
	if logger == nil {
		logger = slog.Default()
	}
	var schema string
	if err := db.QueryRowContext(ctx, "SELECT current_schema()").Scan(&schema); err != nil {
		return err
	}
	channel := channelOf(schema)
	conn, err := listen(ctx, db, channel)
	if err != nil {
		return err
	}
	var origin [8]byte
	_, _ = rand.Read(origin[:])
	f.mu.Lock()
	f.origin, f.channel = hex.EncodeToString(origin[:]), channel
	f.mu.Unlock()
	go f.relay(ctx, db, conn, channel, logger)
	return nil
}

// listen opens a connection of its own (not the pool's: it is held for as
// long as the feed listens) and listens to channel on it.
func listen(ctx context.Context, db *weft.DB, channel string) (*pgx.Conn, error) {
	conn, err := pgx.ConnectConfig(ctx, db.Pool().Config().ConnConfig.Copy())
	if err != nil {
		return nil, err
	}
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{channel}.Sanitize()); err != nil {
		conn.Close(context.WithoutCancel(ctx)) //nolint:errcheck // already failing
		return nil, err
	}
	return conn, nil
}

// relay publishes the notices of other processes until ctx ends.
func (f *Feed) relay(ctx context.Context, db *weft.DB, conn *pgx.Conn, channel string, logger *slog.Logger) {
	for {
		for conn != nil {
			n, err := conn.WaitForNotification(ctx)
			if err != nil {
				conn.Close(context.WithoutCancel(ctx)) //nolint:errcheck // broken or done
				conn = nil
				if ctx.Err() == nil {
					logger.WarnContext(ctx, "trace: feed: the notification connection broke", "error", err)
				}
				break
			}
			var msg notice
			if json.Unmarshal([]byte(n.Payload), &msg) != nil || msg.Origin == f.sender().origin {
				continue
			}
			if msg.Many {
				f.overflow(msg.Project)
			} else {
				f.publish(msg.Project, msg.IDs)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(relayRetry):
		}
		var err error
		if conn, err = listen(ctx, db, channel); err != nil {
			conn = nil
			continue
		}
		// Whatever was written while no one listened is unknown.
		f.overflowAll()
	}
}

// sender is who f's notices come from and where they go.
func (f *Feed) sender() (s struct{ origin, channel string }) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s.origin, s.channel = f.origin, f.channel
	return s
}

// notify tells the other processes listening on db of the calls of a write
// that has committed, when f listens (ListenPostgres). A failure loses only
// live updates of other processes: it is not the write's.
func (f *Feed) notify(ctx context.Context, db *weft.DB, byProject map[string][]string) error {
	if f == nil {
		return nil
	}
	from := f.sender()
	if from.origin == "" {
		return nil
	}
	var errs []error
	for projectID, ids := range byProject {
		msg := notice{Origin: from.origin, Project: projectID, IDs: ids}
		payload, _ := json.Marshal(msg)
		if len(payload) > maxNoticeBytes {
			msg.IDs, msg.Many = nil, true
			payload, _ = json.Marshal(msg)
		}
		if _, err := db.ExecContext(context.WithoutCancel(ctx), "SELECT pg_notify(?, ?)", from.channel, string(payload)); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
