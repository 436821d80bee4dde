package monitor_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/weftlabs/weft/chat/chatstore"
	"github.com/weftlabs/weft/internal/testdb"
	"github.com/weftlabs/weft/monitor"
	"github.com/weftlabs/weft/trace"
)

// rewardSchema is a verdict an RL job reads its reward from.
const rewardSchema = `{"type":"object","properties":{"score":{"enum":[0,1,2,3]}},"required":["score"],"additionalProperties":false}`

// TestScoreGivesRewards: a judge on the built-in engine scores rollouts
// that are no calls, with the caller's authority: each verdict satisfies
// the judge's schema and its reward is the verdict's score, the judge's
// request is traced in the project and its tokens counted; a deterministic
// scorer's boolean is a reward of 1 or 0. Requests that cannot run are
// refused whole: too many items, a scorer of another project, a judge
// model the caller may not use.
func TestScoreGivesRewards(t *testing.T) {
	db := testdb.SQLite(t)
	s := newServer(t, db, serverOptions{monitor: func(cfg *monitor.Config) { cfg.MaxScoreItems = 4 }})
	const project = "acme/rl"
	gateway := judgeGateway(t, project, s.trace)
	s.monitors.SetChat(gateway, monitor.ChatModels{Chat: gateway, Adapters: chatstore.Adapters{Training: knownCheckpoints{"rival/p/agent": true}}})
	alice := s.user(t, "alice", "acme")
	judge := strings.Replace(judgeVal("judge-qwen3"), verdictSchema, rewardSchema, 1)
	judgeRef := s.publish(t, alice, project, "grader", judge)
	containsRef := s.publish(t, alice, project, "polite", scorerVal(monitor.ClassContains, `"substring":"please"`))

	items := []monitor.ScoreItem{
		{Inputs: json.RawMessage(`{"question":"What is 6 times 7?"}`), Output: json.RawMessage(`"42, please"`)},
		{Inputs: json.RawMessage(`{"question":"What is 6 times 7?"}`), Output: json.RawMessage(`"I do not know"`)},
	}
	res, err := s.monitors.Score(alice, monitor.ScoreReq{ProjectID: project, Scorer: judgeRef, Items: items, Reward: "score"})
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res.Results {
		var v struct{ Score *float64 }
		if err := json.Unmarshal(r.Output, &v); err != nil || v.Score == nil || r.Error != "" {
			t.Fatalf("item %d: verdict %s (%v), error %q", i, r.Output, err, r.Error)
		}
		if r.Reward == nil || *r.Reward != *v.Score || *v.Score < 0 || *v.Score > 3 {
			t.Errorf("item %d: reward %v from verdict %s", i, r.Reward, r.Output)
		}
		if r.PromptTokens == 0 || r.CompletionTokens == 0 || r.CallID == "" {
			t.Errorf("item %d: %+v, want the judge's tokens and traced call", i, r)
		}
		eventually(t, 30*time.Second, "the judge's call traced", func() bool {
			found := false
			_ = s.trace.CallsQuery(context.Background(), &trace.CallsQueryReq{ProjectID: project,
				Filter: trace.CallsFilter{CallIDs: []string{r.CallID}}}, func(*trace.Call) error {
				found = true
				return nil
			})
			return found
		})
	}

	res, err = s.monitors.Score(alice, monitor.ScoreReq{ProjectID: project, Scorer: containsRef, Items: items, Reward: "contains"})
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprintf("%v %v %s", *res.Results[0].Reward, *res.Results[1].Reward, res.Results[0].Output); got != `1 0 {"contains":true}` {
		t.Errorf("contains rewards: %s", got)
	}
	res, err = s.monitors.Score(alice, monitor.ScoreReq{ProjectID: project, Scorer: containsRef, Items: items, Reward: "score"})
	if err != nil || res.Results[0].Reward != nil || !strings.Contains(res.Results[0].Error, "no score") {
		t.Errorf("a reward the verdict lacks: %+v, %v", res, err)
	}

	bob := s.user(t, "bob", "rival")
	rivalJudge := s.publish(t, bob, "rival/p", "grader", judgeVal("rival/p/agent"))
	borrowed := s.publish(t, alice, project, "borrowed", judgeVal("rival/p/agent"))
	for name, c := range map[string]struct {
		req  monitor.ScoreReq
		want error
	}{
		"too many items":  {monitor.ScoreReq{ProjectID: project, Scorer: judgeRef, Items: make([]monitor.ScoreItem, 5)}, monitor.ErrInvalidScore},
		"other project":   {monitor.ScoreReq{ProjectID: project, Scorer: rivalJudge, Items: items}, monitor.ErrInvalidScore},
		"not a ref":       {monitor.ScoreReq{ProjectID: project, Scorer: "grader", Items: items}, monitor.ErrInvalidScore},
		"bad reward":      {monitor.ScoreReq{ProjectID: project, Scorer: judgeRef, Items: items, Reward: "a..b"}, monitor.ErrInvalidScore},
		"model not yours": {monitor.ScoreReq{ProjectID: project, Scorer: borrowed, Items: items}, monitor.ErrJudgeModel},
	} {
		if _, err := s.monitors.Score(alice, c.req); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", name, err, c.want)
		}
	}
}
