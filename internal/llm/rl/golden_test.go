package rl

import (
	"encoding/json"
	"math"
	"os"
	"testing"
)

// The job and the losses and gradients PyTorch autograd computed for it, one
// case per experimental_config combination (testdata/torch/rlloss.py).
type goldenFile struct {
	Groups []struct {
		Trajectories []struct {
			Reward    float64 `json:"reward"`
			Sequences []struct {
				Row        int        `json:"row"`
				Mask       []bool     `json:"mask"`
				OldLogprob []*float64 `json:"old_logprob"`
				NewLogprob []float64  `json:"new_logprob"`
			} `json:"sequences"`
		} `json:"trajectories"`
	} `json:"groups"`
	Cases []struct {
		Name   string         `json:"name"`
		Config map[string]any `json:"config"`
		Rows   []struct {
			Loss float64   `json:"loss"`
			Grad []float64 `json:"grad"`
		} `json:"rows"`
	} `json:"cases"`
}

// goldenConfig reads a case's experimental_config the way the trainer does:
// absent keys keep their defaults.
func goldenConfig(t *testing.T, raw map[string]any) Config {
	t.Helper()
	c := DefaultConfig()
	num := func(k string) *float64 {
		if v, ok := raw[k]; ok {
			f := v.(float64)
			return &f
		}
		return nil
	}
	flag := func(k string) bool { v, _ := raw[k].(bool); return v }
	c.PPO = flag("ppo")
	c.MaskProbRatio = flag("mask_prob_ratio")
	c.PrecalculateLogprobs = flag("precalculate_logprobs")
	if v, ok := raw["scale_rewards"]; ok {
		c.ScaleRewards = v.(bool)
	}
	c.Epsilon, c.EpsilonHigh = num("epsilon"), num("epsilon_high")
	c.MaxImportanceWeight = num("max_negative_advantage_importance_sampling_weight")
	if v := num("variant_k2_tau"); v != nil {
		c.K2Tau = *v
	}
	if v := num("advantage_balance"); v != nil {
		c.AdvantageBalance = *v
	}
	if v, ok := raw["importance_sampling_level"]; ok {
		c.Level = Level(v.(string))
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	return c
}

func TestLossMatchesAutograd(t *testing.T) {
	b, err := os.ReadFile("../testdata/torch/rlloss/golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var g goldenFile
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	if len(g.Cases) < 20 {
		t.Fatalf("golden file has %d cases", len(g.Cases))
	}
	for _, tc := range g.Cases {
		t.Run(tc.Name, func(t *testing.T) {
			cfg := goldenConfig(t, tc.Config)
			rows := []*Row{{}, {}}
			news := make([][]float64, 2)
			seq := 0
			for _, grp := range g.Groups {
				rewards := make([]float64, len(grp.Trajectories))
				for i, tr := range grp.Trajectories {
					rewards[i] = tr.Reward
				}
				for i, adv := range GroupAdvantages(rewards, cfg.ScaleRewards) {
					tr := grp.Trajectories[i]
					if !Trainable(adv) {
						seq += len(tr.Sequences)
						continue
					}
					tokens := 0
					for _, s := range tr.Sequences {
						for _, m := range s.Mask {
							if m {
								tokens++
							}
						}
					}
					w := TrajectoryWeight(tokens)
					for _, s := range tr.Sequences {
						r := rows[s.Row]
						for p := range s.Mask {
							old := math.NaN()
							if s.OldLogprob[p] != nil {
								old = *s.OldLogprob[p]
							}
							if cfg.PrecalculateLogprobs {
								old = s.NewLogprob[p] // the pre-update policy's
							}
							r.Mask = append(r.Mask, s.Mask[p])
							r.OldLogprob = append(r.OldLogprob, old)
							r.Advantage = append(r.Advantage, adv)
							r.Weight = append(r.Weight, w)
							r.Seq = append(r.Seq, seq)
						}
						news[s.Row] = append(news[s.Row], s.NewLogprob...)
						seq++
					}
				}
			}
			Normalize(rows, cfg.AdvantageBalance)
			for i, want := range tc.Rows {
				res, err := cfg.Loss(rows[i], news[i])
				if err != nil {
					t.Fatal(err)
				}
				if !closeRel(res.Loss, want.Loss, 1e-6) {
					t.Errorf("row %d: loss %.12g, autograd %.12g", i, res.Loss, want.Loss)
				}
				if len(res.Grad) != len(want.Grad) {
					t.Fatalf("row %d: %d gradients, autograd %d", i, len(res.Grad), len(want.Grad))
				}
				for p := range want.Grad {
					if !closeRel(res.Grad[p], want.Grad[p], 1e-6) {
						t.Errorf("row %d position %d: dloss/dlogprob %.12g, autograd %.12g", i, p, res.Grad[p], want.Grad[p])
					}
				}
			}
		})
	}
}

// closeRel reports |got−want| ≤ tol·max(|want|, 1e-9): relative, with exact
// zeros (masked positions) required to be zero to within 1e-15.
func closeRel(got, want, tol float64) bool {
	return math.Abs(got-want) <= tol*math.Max(math.Abs(want), 1e-9)
}
