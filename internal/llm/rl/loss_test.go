package rl

import (
	"errors"
	"math"
	"testing"
)

func ptr(v float64) *float64 { return &v }

func near(t *testing.T, what string, got, want float64) {
	t.Helper()
	if math.Abs(got-want) > 1e-12*math.Max(1, math.Abs(want)) {
		t.Errorf("%s = %.15g, want %.15g", what, got, want)
	}
}

func TestGroupAdvantages(t *testing.T) {
	// rewards 1, 0, 0.5: mean 0.5, deviations 0.5, -0.5, 0;
	// variance (0.25+0.25+0)/3 = 1/6, std = 0.40824829...
	std := math.Sqrt(1.0 / 6)
	got := GroupAdvantages([]float64{1, 0, 0.5}, true)
	near(t, "A0", got[0], 0.5/(std+1e-6))
	near(t, "A1", got[1], -0.5/(std+1e-6))
	near(t, "A2", got[2], 0)
	if Trainable(got[2]) || !Trainable(got[0]) {
		t.Error("only the zero advantage is dropped")
	}
	// scale_rewards false: only centred.
	got = GroupAdvantages([]float64{1, 0, 0.5}, false)
	near(t, "unscaled A0", got[0], 0.5)
	near(t, "unscaled A1", got[1], -0.5)
	// Equal rewards and a lone trajectory train nothing.
	for _, rs := range [][]float64{{0.7, 0.7, 0.7}, {3}} {
		for _, a := range GroupAdvantages(rs, true) {
			if Trainable(a) {
				t.Errorf("rewards %v: advantage %v is trainable", rs, a)
			}
		}
	}
	if GroupAdvantages(nil, true) != nil {
		t.Error("empty group has advantages")
	}
	near(t, "weight of 4 tokens", TrajectoryWeight(4), 1/(4+1e-6))
}

func TestNormalize(t *testing.T) {
	row := func() *Row {
		// Positions 0, 1 are one trajectory (A 1, w 1/2), 3 another (A -2,
		// w 1); position 2 is masked out and must not change.
		return &Row{Mask: []bool{true, true, false, true}, Advantage: []float64{1, 1, 7, -2},
			Weight: []float64{0.5, 0.5, 9, 1}, OldLogprob: make([]float64, 4), Seq: make([]int, 4)}
	}
	// b = 0: mean w = (0.5+0.5+1)/3 = 2/3, so w = 0.75, 0.75, 1.5;
	// mean(|A|w) = (0.75+0.75+3)/3 = 1.5, so A = 2/3, 2/3, -4/3.
	r := row()
	Normalize([]*Row{r}, 0)
	for i, want := range []float64{0.75, 0.75, 9, 1.5} {
		near(t, "w", r.Weight[i], want)
	}
	for i, want := range []float64{2.0 / 3, 2.0 / 3, 7, -4.0 / 3} {
		near(t, "A", r.Advantage[i], want)
	}
	// b = 0.5 halves the negative: A = 1, 1, -1; mean(|A|w) = 3/3 = 1.
	r = row()
	Normalize([]*Row{r}, 0.5)
	for i, want := range []float64{1, 1, 7, -1} {
		near(t, "A (b=0.5)", r.Advantage[i], want)
	}
	// b = -0.5 halves the positives: A = 0.5, 0.5, -2;
	// mean(|A|w) = (0.375+0.375+3)/3 = 1.25, so A = 0.4, 0.4, -1.6.
	r = row()
	Normalize([]*Row{r}, -0.5)
	for i, want := range []float64{0.4, 0.4, 7, -1.6} {
		near(t, "A (b=-0.5)", r.Advantage[i], want)
	}
	// b = 1 trains only on positives: the negative becomes 0.
	r = row()
	Normalize([]*Row{r}, 1)
	near(t, "A (b=1)", r.Advantage[3], 0)
	// The normalisation spans rows: two rows of one position each.
	a := &Row{Mask: []bool{true}, Advantage: []float64{1}, Weight: []float64{1}, OldLogprob: []float64{0}, Seq: []int{0}}
	b := &Row{Mask: []bool{true}, Advantage: []float64{-3}, Weight: []float64{3}, OldLogprob: []float64{0}, Seq: []int{1}}
	// mean w = 2: w = 0.5, 1.5; mean(|A|w) = (0.5+4.5)/2 = 2.5: A = 0.4, -1.2.
	Normalize([]*Row{a, b}, 0)
	near(t, "row a A", a.Advantage[0], 0.4)
	near(t, "row b A", b.Advantage[0], -1.2)
	near(t, "row b w", b.Weight[0], 1.5)
}

func TestBoundsAndValidate(t *testing.T) {
	for _, tc := range []struct {
		name   string
		cfg    Config
		lo, hi float64
	}{
		{"cispo default", Config{}, 0, 5},
		{"cispo epsilon keeps epsilon_high 4", Config{Epsilon: ptr(0.3)}, 0.7, 5},
		{"cispo both", Config{Epsilon: ptr(0.3), EpsilonHigh: ptr(0.4)}, 0.7, 1.4},
		{"ppo default", Config{PPO: true}, 0.8, 1.2},
		{"ppo epsilon_high follows epsilon", Config{PPO: true, Epsilon: ptr(0.1)}, 0.9, 1.1},
		{"ppo both", Config{PPO: true, Epsilon: ptr(0.1), EpsilonHigh: ptr(0.3)}, 0.9, 1.3},
	} {
		lo, hi := tc.cfg.Bounds()
		near(t, tc.name+" lo", lo, tc.lo)
		near(t, tc.name+" hi", hi, tc.hi)
	}
	ok := DefaultConfig()
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []func(c *Config){
		func(c *Config) { c.Level = "tokens" },
		func(c *Config) { c.AdvantageBalance = 1.5 },
		func(c *Config) { c.Epsilon = ptr(0) },
		func(c *Config) { c.EpsilonHigh = ptr(-1) },
		func(c *Config) { c.MaxImportanceWeight = ptr(0) },
		func(c *Config) { c.LearningRate = 0 },
	} {
		c := DefaultConfig()
		bad(&c)
		if err := c.Validate(); !errors.Is(err, ErrConfig) {
			t.Errorf("%+v: Validate = %v", c, err)
		}
	}
}

// one is a row of one trained position with weight 1 and old log-probability
// -1; c = 1/(1+1e-6) is the row's normaliser.
func one(adv, old float64) *Row {
	return &Row{Mask: []bool{true}, OldLogprob: []float64{old}, Advantage: []float64{adv}, Weight: []float64{1}, Seq: []int{0}}
}

const c1 = 1 / (1 + 1e-6)

func TestLossByHand(t *testing.T) {
	ln2 := math.Log(2)
	newLP := []float64{-1 + ln2} // ρ = exp(ln 2) = 2
	type check struct {
		name       string
		cfg        Config
		row        *Row
		loss, grad float64
	}
	for _, tc := range []check{
		// CISPO: L = -clip(ρ,0,5)·A·ℓ = -2·2·(ln2-1); dL/dℓ = -2·2.
		{"cispo", Config{}, one(2, -1), -4 * (ln2 - 1) * c1, -4 * c1},
		// CISPO with ε_high 0.4: weight clip(2, 0.7, 1.4) = 1.4.
		{"cispo clipped", Config{Epsilon: ptr(0.3), EpsilonHigh: ptr(0.4)}, one(2, -1), -2.8 * (ln2 - 1) * c1, -2.8 * c1},
		// PPO, A=2: ρA = 4 > clip(2,0.8,1.2)·A = 2.4, so L = -2.4, flat.
		{"ppo positive clipped", Config{PPO: true}, one(2, -1), -2.4 * c1, 0},
		// PPO, A=-2: ρA = -4 < -2.4, so L = 4 and dL/dℓ = -A·dρ/dℓ = 2·2.
		{"ppo negative unclipped", Config{PPO: true}, one(-2, -1), 4 * c1, 4 * c1},
		// Unknown old log-probability: ρ = 1 with slope 1; PPO L = -A, dL/dℓ = -A.
		{"ppo unknown old", Config{PPO: true}, one(3, math.NaN()), -3 * c1, -3 * c1},
		// Cap M = 1.5: CISPO weight 1.5.
		{"cispo capped", Config{MaxImportanceWeight: ptr(1.5)}, one(2, -1), -3 * (ln2 - 1) * c1, -3 * c1},
		// Cap M = 1.5 under PPO, A=-2: ρA = -3 < -2.4, L = 3, but the cap is flat.
		{"ppo capped", Config{PPO: true, MaxImportanceWeight: ptr(1.5)}, one(-2, -1), 3 * c1, 0},
		// mask_prob_ratio, PPO: ρ = 2 ∉ (0.8, 1.2) → 0; min(0, 0.8·-2) = -1.6, L = 1.6, flat.
		{"ppo masked", Config{PPO: true, MaskProbRatio: true}, one(-2, -1), 1.6 * c1, 0},
		// mask_prob_ratio, CISPO defaults: 2 ∈ (0, 5) is kept.
		{"cispo not masked", Config{MaskProbRatio: true}, one(2, -1), -4 * (ln2 - 1) * c1, -4 * c1},
		// mask_prob_ratio, CISPO ε=0.5, ε_high=0.5: ρ=2 → 0, then clip(0, 0.5, 1.5) = 0.5:
		// the weight is 1-ε, not 0.
		{"cispo masked", Config{MaskProbRatio: true, Epsilon: ptr(0.5), EpsilonHigh: ptr(0.5)}, one(2, -1), -1 * (ln2 - 1) * c1, -1 * c1},
		// τ = 0.5: A = 1 - 0.5·ln2; CISPO weight 2.
		{"k2 tau", Config{K2Tau: 0.5}, one(1, -1), -2 * (1 - 0.5*ln2) * (ln2 - 1) * c1, -2 * (1 - 0.5*ln2) * c1},
	} {
		res, err := tc.cfg.Loss(tc.row, newLP)
		if err != nil {
			t.Fatal(err)
		}
		near(t, tc.name+" loss", res.Loss, tc.loss)
		near(t, tc.name+" grad", res.Grad[0], tc.grad)
	}
}

func TestLossSequenceLevel(t *testing.T) {
	// Two positions of one sequence with δ = ln2 and 0, a masked third.
	// Sequence ratio ρ = exp(ln2/2) = √2 at both; PPO with region (0.1, 2):
	// L_t = -√2·A each, A = 1, so loss = -2√2/(2+1e-6).
	// dρ/dℓ_u = ρ/2 for each u; dloss/dℓ_u = Σ_t c·(-1)·√2/2 = -√2·c.
	ln2 := math.Log(2)
	row := &Row{Mask: []bool{true, true, false}, OldLogprob: []float64{-1, -2, math.NaN()},
		Advantage: []float64{1, 1, 1}, Weight: []float64{1, 1, 1}, Seq: []int{4, 4, 4}}
	newLP := []float64{-1 + ln2, -2, -0.5}
	c := 1 / (2 + 1e-6)
	cfg := Config{PPO: true, Level: LevelSequence, Epsilon: ptr(0.9), EpsilonHigh: ptr(1)}
	res, err := cfg.Loss(row, newLP)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "loss", res.Loss, -2*math.Sqrt2*c)
	near(t, "grad 0", res.Grad[0], -math.Sqrt2*c)
	near(t, "grad 1", res.Grad[1], -math.Sqrt2*c)
	near(t, "masked grad", res.Grad[2], 0)
	if res.AssistantTokens != 2 {
		t.Errorf("AssistantTokens = %d", res.AssistantTokens)
	}
	// Geometric average: ρ_0 = √(2·√2) = 2^(3/4), ρ_1 = √(1·√2) = 2^(1/4);
	// dρ_t/dℓ_t = ρ_t/2 + ρ_t/4, dρ_t/dℓ_u = ρ_t/4 (u ≠ t).
	cfg.Level = LevelGeometricAverage
	res, _ = cfg.Loss(row, newLP)
	r0, r1 := math.Pow(2, 0.75), math.Pow(2, 0.25)
	near(t, "geometric loss", res.Loss, -(r0+r1)*c)
	near(t, "geometric grad 0", res.Grad[0], -(r0*0.75+r1*0.25)*c)
	near(t, "geometric grad 1", res.Grad[1], -(r1*0.75+r0*0.25)*c)
	// Average: ρ_0 = (2+√2)/2, ρ_1 = (1+√2)/2; dρ_t/dℓ_t = ρtok/2 + √2/4,
	// dρ_t/dℓ_u = √2/4.
	cfg.Level = LevelAverage
	res, _ = cfg.Loss(row, newLP)
	near(t, "average loss", res.Loss, -((2+math.Sqrt2)/2+(1+math.Sqrt2)/2)*c)
	near(t, "average grad 0", res.Grad[0], -(1+math.Sqrt2/4+math.Sqrt2/4)*c)
	near(t, "average grad 1", res.Grad[1], -(0.5+math.Sqrt2/4+math.Sqrt2/4)*c)
	// Reported terms: ρ per level; mismatch KL mean of e^δ-δ-1 = (1-ln2+0)/2.
	near(t, "ratio max", res.ImportanceRatioMax, (2+math.Sqrt2)/2)
	near(t, "mismatch kl", res.MismatchKL, (1-ln2)/2)
}

func TestLossPartsSumToRow(t *testing.T) {
	// A row of two sequences run as two parts: the parts' losses and
	// gradients are the row's.
	row := &Row{Mask: []bool{false, true, true, false, true}, OldLogprob: []float64{math.NaN(), -1, -0.5, math.NaN(), -2},
		Advantage: []float64{0, 1, 1, 0, -0.5}, Weight: []float64{0, 0.8, 0.8, 0, 1.4}, Seq: []int{0, 0, 0, 1, 1}}
	newLP := []float64{-3, -0.7, -0.9, -1, -1.5}
	cfg := Config{PPO: true, Level: LevelSequence}
	whole, err := cfg.Loss(row, newLP)
	if err != nil {
		t.Fatal(err)
	}
	part := func(lo, hi int) *Row {
		return &Row{Mask: row.Mask[lo:hi], OldLogprob: row.OldLogprob[lo:hi], Advantage: row.Advantage[lo:hi], Weight: row.Weight[lo:hi], Seq: row.Seq[lo:hi]}
	}
	a, _ := cfg.LossPart(part(0, 3), newLP[:3], 3)
	b, _ := cfg.LossPart(part(3, 5), newLP[3:], 3)
	near(t, "loss", a.Loss+b.Loss, whole.Loss)
	for i, g := range append(a.Grad, b.Grad...) {
		near(t, "grad", g, whole.Grad[i])
	}
	if whole.Loss == 0 {
		t.Fatal("degenerate case")
	}
}

func TestLossRejectsRaggedRow(t *testing.T) {
	cfg := DefaultConfig()
	if _, err := cfg.Loss(one(1, -1), []float64{-1, -2}); err == nil {
		t.Error("a row of 1 position took 2 log-probabilities")
	}
}

// The reported entropy, by hand: positions 0 and 2 are trained with weights
// 0.5 and 2; H = 1.5 and 0.25 there, so (1.5·0.5 + 0.25·2) / (2 + 1e-6);
// the untrained position's entropy counts for nothing. In two parts, the
// parts' entropies with the row's token count add up to the row's.
func TestEntropyByHand(t *testing.T) {
	row := &Row{Mask: []bool{true, false, true}, OldLogprob: []float64{0, math.NaN(), 0}, Advantage: []float64{1, 0, 1},
		Weight: []float64{0.5, 0, 2}, Seq: []int{0, 0, 1}}
	h := []float64{1.5, 9, 0.25}
	got, err := row.Entropy(h, row.AssistantTokens())
	if err != nil {
		t.Fatal(err)
	}
	near(t, "entropy", got, (1.5*0.5+0.25*2)/(2+1e-6))
	first := &Row{Mask: row.Mask[:2], OldLogprob: row.OldLogprob[:2], Advantage: row.Advantage[:2], Weight: row.Weight[:2], Seq: row.Seq[:2]}
	second := &Row{Mask: row.Mask[2:], OldLogprob: row.OldLogprob[2:], Advantage: row.Advantage[2:], Weight: row.Weight[2:], Seq: row.Seq[2:]}
	a, _ := first.Entropy(h[:2], 2)
	b, _ := second.Entropy(h[2:], 2)
	near(t, "parts", a+b, got)
	if _, err := row.Entropy(h[:2], 2); err == nil {
		t.Error("entropies of the wrong length were accepted")
	}
}
