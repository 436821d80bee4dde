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
