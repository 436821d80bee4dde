package monitor_test

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/testdb"
	"github.com/weftlabs/weft/monitor"
)

// TestMonitorScoresEndedCalls: a published, active monitor scores every
// call of its ops that ends after it is active with each of its
// deterministic scorers, once, stored as Weave's scoring worker stores
// verdicts; calls of other ops, unfinished calls, failed calls and calls
// that ended before the monitor was active are not scored, nor calls after
// it is turned off.
func TestMonitorScoresEndedCalls(t *testing.T) {
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		s := newServer(t, db, serverOptions{})
		ctx := s.user(t, "alice", "acme")
		const project = "acme/support"
		answer := "weave:///acme/support/op/answer:abc"

		s.ingest(t, ctx, project, call{id: newID(), op: answer, output: `"42"`}) // before any monitor

		jsonRef := s.publish(t, ctx, project, "json_valid", scorerVal(monitor.ClassValidJSON, ""))
		digitRef := s.publish(t, ctx, project, "has_digit", scorerVal(monitor.ClassRegex, `"pattern":"[0-9]+"`))
		politeRef := s.publish(t, ctx, project, "polite", scorerVal(monitor.ClassContains, `"substring":"PLEASE","case_sensitive":false`))
		lengthRef := s.publish(t, ctx, project, "short", scorerVal(monitor.ClassLength, `"max_length":10,"field":"output.text"`))
		monRef := s.publish(t, ctx, project, "quality", monitorVal(1, []string{"weave:///acme/support/op/answer:*"}, true, jsonRef, digitRef, politeRef, lengthRef))
		// A second monitor selects calls by a calls query over their output.
		minutesRef := s.publish(t, ctx, project, "minutes", scorerVal(monitor.ClassContains, `"substring":"minutes","field":"output.text"`))
		waitingRef := s.publish(t, ctx, project, "waiting", strings.Replace(monitorVal(1, nil, true, minutesRef), `"query":null`,
			`"query":{"$expr":{"$contains":{"input":{"$getField":"output.text"},"substr":{"$literal":"wait"}}}}`, 1))

		scored := []call{
			{id: newID(), op: answer, output: `"{\"a\": 1}"`},
			{id: newID(), op: "weave:///acme/support/op/answer:def", output: `{"text":"please wait 5 minutes"}`},
		}
		s.ingest(t, ctx, project, append(scored,
			call{id: newID(), op: "weave:///acme/support/op/other:abc", output: `"1"`},
			call{id: newID(), op: answer, noEnd: true},
			call{id: newID(), op: answer, output: `null`, exception: "boom"})...)

		want := map[string]map[string]string{
			scored[0].id: {"json_valid": `{"json_valid":true}`, "has_digit": `{"match":true}`, "polite": `{"contains":false}`,
				"short": `{"length":0,"within_bounds":true}`},
			scored[1].id: {"json_valid": `{"json_valid":true}`, "has_digit": `{"match":true}`, "polite": `{"contains":true}`,
				"short": `{"length":21,"within_bounds":false}`, "minutes": `{"contains":true}`},
		}
		var got map[string]map[string]map[string]any
		eventually(t, 30*time.Second, "every verdict stored", func() bool {
			got = s.verdictFeedback(t, project)
			return len(got[scored[0].id]) == 4 && len(got[scored[1].id]) == 5
		})
		if len(got) != 2 {
			t.Errorf("verdicts on %d calls, want the 2 matching ones: %v", len(got), got)
		}
		refs := map[string]string{"json_valid": jsonRef, "has_digit": digitRef, "polite": politeRef, "short": lengthRef, "minutes": minutesRef}
		triggers := map[string]string{"minutes": waitingRef}
		for id, byScorer := range want {
			for name, payload := range byScorer {
				f := got[id][name]
				out, _ := json.Marshal(f["payload"])
				if string(out) != `{"output":`+payload+`}` {
					t.Errorf("call %s, %s: payload %s, want {\"output\":%s}", id, name, out, payload)
				}
				trigger := cmp.Or(triggers[name], monRef)
				if text(f["runnable_ref"]) != refs[name] || text(f["trigger_ref"]) != trigger {
					t.Errorf("call %s, %s: runnable_ref %v trigger_ref %v, want %s and %s", id, name, f["runnable_ref"], f["trigger_ref"], refs[name], trigger)
				}
				if text(f["wb_user_id"]) != weft.UserID(ctx) {
					t.Errorf("call %s, %s: wb_user_id %v, want the monitor's publisher %s", id, name, f["wb_user_id"], weft.UserID(ctx))
				}
			}
		}

		// Turned off, it scores no more.
		s.publish(t, ctx, project, "quality", monitorVal(1, []string{"weave:///acme/support/op/answer:*"}, false, jsonRef, digitRef, politeRef, lengthRef))
		late := newID()
		s.ingest(t, ctx, project, call{id: late, op: answer, output: `"7"`})
		time.Sleep(500 * time.Millisecond)
		if got := s.verdictFeedback(t, project); len(got[late]) != 0 {
			t.Errorf("an inactive monitor scored %s: %v", late, got[late])
		}
	})
}

// TestMonitorPublishRefused: a Monitor that cannot run is refused when
// published, with a 400-class error naming why.
func TestMonitorPublishRefused(t *testing.T) {
	db := testdb.SQLite(t)
	s := newServer(t, db, serverOptions{})
	ctx := s.user(t, "alice", "acme")
	s.user(t, "bob", "rival")
	const project = "acme/support"
	jsonRef := s.publish(t, ctx, project, "json_valid", scorerVal(monitor.ClassValidJSON, ""))
	rivalRef := s.publish(t, weft.WithPrincipal(context.Background(), weft.Principal{UserID: "x"}), "rival/p", "json_valid", scorerVal(monitor.ClassValidJSON, ""))
	unknownRef := s.publish(t, ctx, project, "mystery", scorerVal("MysteryScorer", ""))
	badRegex := s.publish(t, ctx, project, "bad_regex", scorerVal(monitor.ClassRegex, `"pattern":"(["`))
	for name, val := range map[string]string{
		"rate above 1":      monitorVal(1.5, nil, true, jsonRef),
		"other project":     monitorVal(1, nil, true, rivalRef),
		"unknown class":     monitorVal(1, nil, true, unknownRef),
		"bad pattern":       monitorVal(1, nil, true, badRegex),
		"no digest":         monitorVal(1, nil, true, "weave:///acme/support/object/json_valid:latest"),
		"missing scorer":    monitorVal(1, nil, true, "weave:///acme/support/object/nothing:abcdefabcdefabcdefabcdef"),
		"inline scorer":     `{"_type":"Monitor","_class_name":"Monitor","_bases":["Object","BaseModel"],"sampling_rate":1,"scorers":[{"_class_name":"ValidJSONScorer"}],"call_filter":{"op_names":[],"query":null},"active":true}`,
		"op_names not list": `{"_type":"Monitor","_class_name":"Monitor","_bases":["Object","BaseModel"],"sampling_rate":1,"scorers":[],"call_filter":{"op_names":"x","query":null},"active":true}`,
		"unreadable query":  `{"_type":"Monitor","_class_name":"Monitor","_bases":["Object","BaseModel"],"sampling_rate":1,"scorers":[],"call_filter":{"op_names":[],"query":{"$expr":{"$near":[{"$getField":"op_name"},{"$literal":"x"}]}}},"active":true}`,
	} {
		_, err := s.tryPublish(ctx, project, "m", val)
		if !errors.Is(err, weft.ErrInvalid) {
			t.Errorf("%s: err %v, want a 400-class error", name, err)
		} else {
			t.Logf("%s: %v", name, err)
		}
	}
}

// TestSamplingDeterministic: a call is sampled the same way every time, and
// over many calls the share sampled is the rate within binomial bounds.
func TestSamplingDeterministic(t *testing.T) {
	const n, rate = 20000, 0.3
	hits := 0
	for i := range n {
		id := fmt.Sprintf("call-%d", i)
		a, b := monitor.Sampled("m", id, rate), monitor.Sampled("m", id, rate)
		if a != b {
			t.Fatalf("%s sampled %v then %v", id, a, b)
		}
		if a {
			hits++
		}
	}
	// Five standard deviations of Binomial(n, rate).
	mean, sd := n*rate, 64.8 // sqrt(20000 × 0.3 × 0.7)
	if d := float64(hits) - mean; d > 5*sd || d < -5*sd {
		t.Errorf("sampled %d of %d at rate %v, want %v ± %v", hits, n, rate, mean, 5*sd)
	}
}
