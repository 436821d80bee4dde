package monitor_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/chat/chatstore"
	"github.com/weftlabs/weft/internal/testdb"
	"github.com/weftlabs/weft/monitor"
)

// TestPausedMonitorJudgesNoMore: a judge queued while its monitor was
// active, still waiting when the monitor is paused, leaves an error verdict
// saying it was paused (never a silent gap, never a judge's request); calls
// that end while it is paused are not scored; resumed, it scores the calls
// that end from then on.
func TestPausedMonitorJudgesNoMore(t *testing.T) {
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		// The first server dispatches but runs no judge: the judge jobs wait.
		first := newServer(t, db, serverOptions{monitor: func(c *monitor.Config) { c.JudgeWorkers = -1 }})
		ctx := first.user(t, "alice", "acme")
		const project = "acme/support"
		answer := "weave:///acme/support/op/answer:abc"
		judge := first.publish(t, ctx, project, "judge", judgeVal("judge-qwen3"))
		contains := first.publish(t, ctx, project, "says_42", scorerVal(monitor.ClassContains, `"substring":"42"`))
		first.publish(t, ctx, project, "graded", monitorVal(1, nil, true, judge, contains))
		queued := newID()
		first.ingest(t, ctx, project, call{id: queued, op: answer, output: `"42"`})
		state := func(callID, scorer string) (string, string) {
			var state, reason string
			err := db.NewRaw("SELECT state, coalesce(error, '') FROM monitor_verdicts WHERE project_id = ? AND call_id = ? AND scorer_id = ?",
				project, callID, scorer).Scan(context.Background(), &state, &reason)
			if err != nil {
				return "", err.Error()
			}
			return state, reason
		}
		eventually(t, 30*time.Second, "the judge's verdict queued", func() bool {
			s, _ := state(queued, "judge")
			return s == monitor.StatePending
		})

		first.publish(t, ctx, project, "graded", monitorVal(1, nil, false, judge, contains))
		paused := newID()
		first.ingest(t, ctx, project, call{id: paused, op: answer, output: `"42"`})
		// A second server runs judges (it serves no models: a judge that
		// ran would say so).
		newServer(t, db, serverOptions{})
		eventually(t, 30*time.Second, "the queued judge's error verdict", func() bool {
			s, _ := state(queued, "judge")
			return s == monitor.StateError
		})
		if _, reason := state(queued, "judge"); !strings.Contains(reason, "paused") {
			t.Errorf("the queued judge's verdict says %q, want that the monitor was paused", reason)
		}
		if s, _ := state(queued, "says_42"); s != monitor.StateDone {
			t.Errorf("the deterministic verdict given while active: %q", s)
		}

		first.publish(t, ctx, project, "graded", monitorVal(1, nil, true, judge, contains))
		resumed := newID()
		first.ingest(t, ctx, project, call{id: resumed, op: answer, output: `"42"`})
		eventually(t, 30*time.Second, "the resumed monitor's verdict", func() bool {
			s, _ := state(resumed, "says_42")
			return s == monitor.StateDone
		})
		if s, reason := state(paused, "says_42"); s != "" {
			t.Errorf("a call that ended while the monitor was paused was scored: %s %s", s, reason)
		}
	})
}

// TestScorerDraftChecked: a scorer not yet published is checked as a
// monitor would read it, its judge model with the caller's authority, and
// previewed on a call of the project: a judge's messages filled from the
// call (no model asked), a deterministic scorer's verdict; a call of
// another project is not found.
func TestScorerDraftChecked(t *testing.T) {
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		s := newServer(t, db, serverOptions{})
		const project = "acme/support"
		gateway := judgeGateway(t, project, s.trace)
		s.monitors.SetChat(gateway, monitor.ChatModels{Chat: gateway, Adapters: chatstore.Adapters{Training: knownCheckpoints{}}})
		alice := s.user(t, "alice", "acme")
		bob := s.user(t, "bob", "rival")
		id, other := newID(), newID()
		s.ingest(t, alice, project, call{id: id, op: "weave:///acme/support/op/answer:abc", output: `"42"`})
		s.ingest(t, bob, "rival/p", call{id: other, op: "weave:///rival/p/op/answer:abc", output: `"secret"`})

		if err := s.monitors.CheckScorer(alice, project, "j", []byte(judgeVal("judge-qwen3"))); err != nil {
			t.Errorf("a judge on a served model: %v", err)
		}
		if err := s.monitors.CheckScorer(alice, project, "j", []byte(judgeVal("gpt-nothing"))); !errors.Is(err, monitor.ErrJudgeModel) {
			t.Errorf("a judge on a model nobody serves: %v, want ErrJudgeModel", err)
		}
		if err := s.monitors.CheckScorer(alice, project, "r", []byte(scorerVal(monitor.ClassRegex, `"pattern":"("`))); !errors.Is(err, monitor.ErrInvalidScorer) {
			t.Errorf("a regex that does not compile: %v, want ErrInvalidScorer", err)
		}

		p, err := s.monitors.PreviewScorer(alice, project, "j", []byte(judgeVal("judge-qwen3")), id)
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Messages) != 2 || p.Messages[0].Role != "system" || p.Messages[1].Content != "Question: what is 6*7?\nAnswer: 42\nIs the answer good?" ||
			p.Model != "judge-qwen3" || string(p.Schema) != verdictSchema {
			t.Errorf("the judge's preview: %+v", p)
		}
		p, err = s.monitors.PreviewScorer(alice, project, "j", []byte(strings.Replace(judgeVal("judge-qwen3"), "{question}", "{context}", 1)), id)
		if err != nil || !strings.Contains(p.Error, "{context}") {
			t.Errorf("a template naming what the call lacks: %+v, %v", p, err)
		}
		p, err = s.monitors.PreviewScorer(alice, project, "c", []byte(scorerVal(monitor.ClassContains, `"substring":"42"`)), id)
		if err != nil || string(p.Verdict) != `{"contains":true}` {
			t.Errorf("the deterministic preview: %+v, %v", p, err)
		}
		if _, err := s.monitors.PreviewScorer(alice, project, "j", []byte(judgeVal("judge-qwen3")), other); !errors.Is(err, monitor.ErrCallNotFound) {
			t.Errorf("a preview on another project's call: %v, want ErrCallNotFound", err)
		}
	})
}
