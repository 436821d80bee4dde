package localtrainer

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/weftlabs/weft/internal/llm/rl"
	"github.com/weftlabs/weft/training"
)

// planRL: trajectories with a zero advantage are dropped, additional
// histories train with their trajectory's advantage and one weight budget,
// rows are packed, and the job is normalised (mean weight 1, mean |A|·w 1).
func TestPlanRL(t *testing.T) {
	tp := qwen3(t)
	user := map[string]any{"role": "user", "content": "Hi"}
	reward := func(r float64) *float64 { return &r }
	history, _ := json.Marshal(map[string]any{"messages_and_choices": []any{user, choice(tp, "Sub-agent here.", nil, "Sub-agent here.<|im_end|>")}, "tools": nil})
	groups, _ := json.Marshal([]training.TrajectoryGroup{{Trajectories: []training.Trajectory{
		{MessagesAndChoices: raws(t, user, choice(tp, "Hello!", nil, "Hello!<|im_end|>")), Reward: reward(1),
			AdditionalHistories: []json.RawMessage{history}},
		{MessagesAndChoices: raws(t, user, choice(tp, "Go away.", nil, "Go away.<|im_end|>")), Reward: reward(0)},
		{MessagesAndChoices: raws(t, user, choice(tp, "Meh.", nil, "Meh.<|im_end|>")), Reward: reward(0.5)}, // advantage 0
	}}})
	cfg := rl.DefaultConfig()
	plan, err := planRL(tp, groups, cfg, 256, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	if plan.trajectories != 2 || plan.groupsTrainable != 1 || plan.groupsSubmitted != 1 {
		t.Errorf("plan summary %+v", plan)
	}
	// Three short sequences fit one row of 256 tokens.
	if len(plan.steps) != 1 || len(plan.steps[0].seqs) != 3 {
		t.Fatalf("%d rows", len(plan.steps))
	}
	row := plan.steps[0].loss
	hello := len(tp.tokenizer.Encode("Hello!<|im_end|>", false))
	sub := len(tp.tokenizer.Encode("Sub-agent here.<|im_end|>", false))
	away := len(tp.tokenizer.Encode("Go away.<|im_end|>", false))
	if got := row.AssistantTokens(); got != hello+sub+away {
		t.Fatalf("%d trained positions, want %d", got, hello+sub+away)
	}
	// Weights before normalisation: 1/(hello+sub) for the first trajectory's
	// two histories, 1/away for the second; the mean over positions is then
	// (1 + 1)/(hello+sub+away), so normalised they are (hello+sub+away)/(2·n).
	n := float64(hello + sub + away)
	var sumW, sumAW float64
	posW, negW := math.NaN(), math.NaN()
	for i, m := range row.Mask {
		if !m {
			continue
		}
		sumW += row.Weight[i]
		sumAW += math.Abs(row.Advantage[i]) * row.Weight[i]
		if row.Advantage[i] > 0 {
			posW = row.Weight[i]
		} else {
			negW = row.Weight[i]
		}
	}
	if math.Abs(sumW/n-1) > 1e-9 || math.Abs(sumAW/n-1) > 1e-9 {
		t.Errorf("mean w %v, mean |A|w %v; both must be 1", sumW/n, sumAW/n)
	}
	if want := n / (2 * float64(hello+sub)); math.Abs(posW-want) > 1e-6 {
		t.Errorf("weight of the first trajectory %v, want %v", posW, want)
	}
	if want := n / (2 * float64(away)); math.Abs(negW-want) > 1e-6 {
		t.Errorf("weight of the second trajectory %v, want %v", negW, want)
	}
	// The sampler's log-probabilities are the old ones, shifted: position i
	// holds token i+1's.
	for i, m := range row.Mask {
		if m && math.IsNaN(row.OldLogprob[i]) {
			t.Fatalf("trained position %d has no old log-probability", i)
		}
	}
}
