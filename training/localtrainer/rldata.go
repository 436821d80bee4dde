package localtrainer

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/weftlabs/weft/internal/llm/model"
	"github.com/weftlabs/weft/internal/llm/rl"
	"github.com/weftlabs/weft/training"
)

// step is one gradient step: whole training sequences, with for RL the loss
// inputs of their positions (flattened in sequence order) and for SFT none.
type step struct {
	seqs []model.TrainSequence
	// loss has one position per token of seqs: position i of a sequence
	// scores its token i+1.
	loss rl.Row
	// lr is the step's learning rate.
	lr float64
}

func (s *step) tokens() int {
	n := 0
	for _, q := range s.seqs {
		n += len(q.Tokens)
	}
	return n
}

// rlPlan is an RL job made ready to train.
type rlPlan struct {
	steps []*step
	// What of the submitted groups trains (logged; the job's events carry
	// the groups' own metrics).
	groupsSubmitted, groupsTrainable, trajectories int
}

// history is one entry of additional_histories.
type history struct {
	MessagesAndChoices []json.RawMessage `json:"messages_and_choices"`
	Tools              []json.RawMessage `json:"tools"`
}

// planRL turns trajectory groups into packed rows: group advantages, the
// trajectories that train (non-zero advantage), their sequences (main history
// and additional histories) with each trajectory's weight, rows packed up to
// a length and shuffled, then the job-wide normalisation.
func planRL(tp *Template, raw json.RawMessage, cfg rl.Config, maxLen int, rng *rand.Rand) (*rlPlan, error) {
	var groups []training.TrajectoryGroup
	if err := json.Unmarshal(raw, &groups); err != nil {
		return nil, fmt.Errorf("%w: trajectory groups: %v", ErrConversation, err)
	}
	plan := &rlPlan{groupsSubmitted: len(groups)}
	var seqs []*step // one sequence each, before packing
	nextSeq := 0
	for g, group := range groups {
		rewards := make([]float64, len(group.Trajectories))
		for i, tr := range group.Trajectories {
			if tr.Reward != nil {
				rewards[i] = *tr.Reward
			}
		}
		trainable := false
		for i, adv := range rl.GroupAdvantages(rewards, cfg.ScaleRewards) {
			if !rl.Trainable(adv) {
				continue
			}
			tr := group.Trajectories[i]
			histories := []history{{MessagesAndChoices: tr.MessagesAndChoices, Tools: tr.Tools}}
			for h, rawHistory := range tr.AdditionalHistories {
				var extra history
				if err := json.Unmarshal(rawHistory, &extra); err != nil {
					return nil, fmt.Errorf("%w: group %d, trajectory %d, additional history %d: %v", ErrConversation, g, i, h, err)
				}
				histories = append(histories, extra)
			}
			var sequences []Sequence
			for h, hist := range histories {
				s, err := tp.Trajectory(hist.MessagesAndChoices, hist.Tools)
				if err != nil {
					return nil, fmt.Errorf("group %d, trajectory %d, history %d: %w", g, i, h, err)
				}
				sequences = append(sequences, s...)
			}
			truncated := make([]Sequence, 0, len(sequences))
			assistant := 0
			for _, s := range sequences {
				s = truncate(s, maxLen)
				if n := scoredTokens(s); n > 0 {
					assistant += n
					truncated = append(truncated, s)
				}
			}
			if assistant == 0 {
				continue
			}
			trainable = true
			plan.trajectories++
			w := rl.TrajectoryWeight(assistant)
			for _, s := range truncated {
				seqs = append(seqs, rlSequence(s, adv, w, nextSeq))
				nextSeq++
			}
		}
		if trainable {
			plan.groupsTrainable++
		}
	}
	plan.steps = pack(seqs, maxLen)
	rng.Shuffle(len(plan.steps), func(i, j int) { plan.steps[i], plan.steps[j] = plan.steps[j], plan.steps[i] })
	rows := make([]*rl.Row, len(plan.steps))
	for i, s := range plan.steps {
		rows[i] = &s.loss
		s.lr = cfg.LearningRate
	}
	rl.Normalize(rows, cfg.AdvantageBalance)
	return plan, nil
}

// truncate keeps the first maxLen tokens of s.
func truncate(s Sequence, maxLen int) Sequence {
	if len(s.IDs) <= maxLen {
		return s
	}
	return Sequence{IDs: s.IDs[:maxLen], Trained: s.Trained[:maxLen], Logprobs: s.Logprobs[:maxLen]}
}

// scoredTokens counts the trained tokens that follow another token (the
// first token of a sequence has nothing to be predicted from).
func scoredTokens(s Sequence) int {
	n := 0
	for i := 1; i < len(s.Trained); i++ {
		if s.Trained[i] {
			n++
		}
	}
	return n
}

// trainSequence is s as the model's training pass takes it: position i
// targets token i+1 when that token is trained.
func trainSequence(s Sequence) model.TrainSequence {
	q := model.TrainSequence{Tokens: make([]int32, len(s.IDs)), Targets: make([]int32, len(s.IDs))}
	for i, id := range s.IDs {
		q.Tokens[i] = int32(id)
		q.Targets[i] = model.NoTarget
		if i+1 < len(s.IDs) && s.Trained[i+1] {
			q.Targets[i] = int32(s.IDs[i+1])
		}
	}
	return q
}

// rlSequence is a one-sequence step with the loss inputs of its positions.
func rlSequence(s Sequence, adv, w float64, seq int) *step {
	q := trainSequence(s)
	st := &step{seqs: []model.TrainSequence{q}}
	n := len(s.IDs)
	st.loss = rl.Row{Mask: make([]bool, n), OldLogprob: make([]float64, n), Advantage: make([]float64, n),
		Weight: make([]float64, n), Seq: make([]int, n)}
	for i := range n {
		st.loss.Seq[i] = seq
		st.loss.OldLogprob[i] = math.NaN()
		if q.Targets[i] != model.NoTarget {
			st.loss.Mask[i] = true
			st.loss.OldLogprob[i] = s.Logprobs[i+1]
			st.loss.Advantage[i] = adv
			st.loss.Weight[i] = w
		}
	}
	return st
}

// pack packs one-sequence steps, in order, into rows of at most L tokens,
// L = ⌈longest / DefaultPackLength⌉·DefaultPackLength capped at maxLen.
func pack(seqs []*step, maxLen int) []*step {
	longest := 0
	for _, s := range seqs {
		longest = max(longest, s.tokens())
	}
	limit := min((longest+DefaultPackLength-1)/DefaultPackLength*DefaultPackLength, maxLen)
	var rows []*step
	var cur *step
	for _, s := range seqs {
		if cur == nil || cur.tokens()+s.tokens() > limit {
			cur = &step{}
			rows = append(rows, cur)
		}
		cur.seqs = append(cur.seqs, s.seqs...)
		l := &cur.loss
		l.Mask = append(l.Mask, s.loss.Mask...)
		l.OldLogprob = append(l.OldLogprob, s.loss.OldLogprob...)
		l.Advantage = append(l.Advantage, s.loss.Advantage...)
		l.Weight = append(l.Weight, s.loss.Weight...)
		l.Seq = append(l.Seq, s.loss.Seq...)
	}
	return rows
}
