package trace_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/testdb"
	"github.com/weftlabs/weft/trace"
)

func TestFeed(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		feed := trace.NewFeed()
		s, err := trace.New(trace.Config{DB: db, Feed: feed})
		if err != nil {
			t.Fatal(err)
		}
		ctx := weft.WithPrincipal(context.Background(), weft.Principal{UserID: "u-alice", Username: "alice"})
		sub := feed.Subscribe(project)
		defer sub.Close()
		other := feed.Subscribe("bob/other")
		defer other.Close()

		take := func(what string) []string {
			t.Helper()
			select {
			case <-sub.Ready():
			case <-time.After(10 * time.Second):
				t.Fatalf("%s: nothing published", what)
			}
			ids, overflow := sub.Take()
			if overflow {
				t.Fatalf("%s: overflow", what)
			}
			return ids
		}
		a, b := id(), id()
		upsert(t, ctx, s, start(a, id(), nil, t0, `{}`), start(b, id(), nil, t0, `{}`), end(a, t0.Add(time.Second), `{}`))
		if got := take("batch"); !slices.Equal(got, []string{a, b}) {
			t.Errorf("batch: %v, want %v", got, []string{a, b})
		}
		if _, err := s.CallEnd(ctx, &trace.CallEndReq{End: *end(b, t0.Add(time.Second), `{}`).End}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.CallUpdate(ctx, &trace.CallUpdateReq{ProjectID: project, CallID: a, DisplayName: "renamed"}); err != nil {
			t.Fatal(err)
		}
		if got := take("end and rename"); !slices.Equal(got, []string{b, a}) {
			t.Errorf("end and rename: %v", got)
		}
		if _, err := s.CallsDelete(ctx, &trace.CallsDeleteReq{ProjectID: project, CallIDs: []string{b}}); err != nil {
			t.Fatal(err)
		}
		if got := take("delete"); !slices.Equal(got, []string{b}) {
			t.Errorf("delete: %v", got)
		}
		// A failed write publishes nothing; another project's subscriber
		// hears nothing of this one.
		if _, err := s.CallStart(ctx, &trace.CallStartReq{Start: trace.StartedCall{ProjectID: project, OpName: ""}}); err == nil {
			t.Fatal("a start without op name was accepted")
		}
		select {
		case <-sub.Ready():
			ids, _ := sub.Take()
			t.Errorf("published after a failed write: %v", ids)
		case <-other.Ready():
			t.Error("another project's subscriber was told")
		default:
		}
		// A subscriber that does not keep up learns that it missed ids.
		var items []trace.BatchItem
		for i := range trace.MaxFeedPending + 1 {
			items = append(items, start(fmt.Sprintf("00000000-0000-7000-8000-%012d", i), id(), nil, t0, `{}`))
		}
		upsert(t, ctx, s, items...)
		<-sub.Ready()
		if ids, overflow := sub.Take(); !overflow || ids != nil {
			t.Errorf("past the bound: %d ids, overflow %v", len(ids), overflow)
		}
	})
}

// TestFeedAcrossProcesses has two feeds listen on one PostgreSQL schema,
// each with its own store, as two server processes do: a call written
// through either store reaches the subscribers of both, once; a write of
// more calls than a notice names tells the other side it missed some; and
// a feed on another schema (another deployment) hears nothing.
func TestFeedAcrossProcesses(t *testing.T) {
	t.Parallel()
	for _, backend := range []struct {
		name string
		url  func(testing.TB) string
	}{{"postgres", testdb.PostgresURL}, {"citus", testdb.CitusURL}} {
		t.Run(backend.name, func(t *testing.T) {
			t.Parallel()
			url := backend.url(t)
			ctx, cancel := context.WithCancel(weft.WithPrincipal(context.Background(), weft.Principal{UserID: "u-alice", Username: "alice"}))
			defer cancel()
			open := func(url string) (*trace.Feed, *trace.Store) {
				db, err := weft.Open(ctx, url)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { db.Close() })
				if err := weft.Migrate(ctx, db); err != nil {
					t.Fatal(err)
				}
				feed := trace.NewFeed()
				if err := feed.ListenPostgres(ctx, db, nil); err != nil {
					t.Fatal(err)
				}
				s, err := trace.New(trace.Config{DB: db, Feed: feed})
				if err != nil {
					t.Fatal(err)
				}
				return feed, s
			}
			feedA, storeA := open(url)
			feedB, storeB := open(url)
			feedC, _ := open(backend.url(t))
			subA, subB, subC := feedA.Subscribe(project), feedB.Subscribe(project), feedC.Subscribe(project)
			defer subA.Close()
			defer subB.Close()
			defer subC.Close()
			take := func(sub *trace.Subscription, what string) ([]string, bool) {
				t.Helper()
				select {
				case <-sub.Ready():
				case <-time.After(10 * time.Second):
					t.Fatalf("%s: nothing published", what)
				}
				return sub.Take()
			}

			callID := id()
			upsert(t, ctx, storeA, start(callID, id(), nil, t0, `{}`))
			for name, sub := range map[string]*trace.Subscription{"the writer's feed": subA, "the other feed": subB} {
				if ids, overflow := take(sub, name); overflow || !slices.Equal(ids, []string{callID}) {
					t.Fatalf("%s: %v overflow=%v", name, ids, overflow)
				}
			}
			// The other way round, an end.
			upsert(t, ctx, storeB, end(callID, t0.Add(time.Second), `{}`))
			if ids, _ := take(subA, "an end written by the other store"); !slices.Equal(ids, []string{callID}) {
				t.Fatalf("the end: %v", ids)
			}
			if ids, _ := take(subB, "the end's own feed"); !slices.Equal(ids, []string{callID}) {
				t.Fatalf("the end: %v", ids)
			}
			// The writer's own notice does not come back to it.
			select {
			case <-subA.Ready():
				ids, overflow := subA.Take()
				t.Fatalf("published twice: %v %v", ids, overflow)
			case <-time.After(300 * time.Millisecond):
			}
			// A bulk write is one "many" notice.
			var items []trace.BatchItem
			for range 300 {
				items = append(items, start(id(), id(), nil, t0, `{}`))
			}
			upsert(t, ctx, storeA, items...)
			if ids, overflow := take(subB, "a bulk write"); !overflow || ids != nil {
				t.Fatalf("a bulk write: %d ids, overflow=%v", len(ids), overflow)
			}
			select {
			case <-subC.Ready():
				ids, overflow := subC.Take()
				t.Fatalf("another schema heard %v %v", ids, overflow)
			default:
			}
		})
	}
}
