package training

import (
	"encoding/json"
	"maps"
	"math"
	"testing"
)

// TestGroupMetrics checks models/log's metrics against the reference's
// formulas (the reference server's derived training metrics), one rule per case.
func TestGroupMetrics(t *testing.T) {
	t.Parallel()
	reward := func(r float64) string { b, _ := json.Marshal(r); return string(b) }
	traj := func(r float64, metrics string) string {
		return `{"messages_and_choices":[],"reward":` + reward(r) + `,"metrics":` + metrics + `}`
	}
	tests := []struct {
		name   string
		groups string
		want   map[string]float64 // checked keys; absent lists keys that must not be there
		absent []string
	}{
		{
			name:   "reward is the mean over all trajectories of all groups",
			groups: `[{"trajectories":[` + traj(1, `{}`) + `,` + traj(0, `{}`) + `]},{"trajectories":[` + traj(0.5, `{}`) + `]}]`,
			want:   map[string]float64{"reward": 0.5, "num_trajectories": 3, "num_groups_submitted": 2},
		},
		{
			name:   "an absent reward counts as 0",
			groups: `[{"trajectories":[{"messages_and_choices":[]},` + traj(1, `{}`) + `]}]`,
			want:   map[string]float64{"reward": 0.5},
		},
		{
			name:   "reward_std_dev is the mean of per-group population standard deviations over groups with at least 2 trajectories",
			groups: `[{"trajectories":[` + traj(0, `{}`) + `,` + traj(2, `{}`) + `]},{"trajectories":[` + traj(1, `{}`) + `,` + traj(1, `{}`) + `,` + traj(1, `{}`) + `]},{"trajectories":[` + traj(9, `{}`) + `]}]`,
			want:   map[string]float64{"reward_std_dev": 0.5}, // (1 + 0) / 2; the single-trajectory group is left out
		},
		{
			name:   "reward_std_dev is 0 without a group of 2",
			groups: `[{"trajectories":[` + traj(3, `{}`) + `]}]`,
			want:   map[string]float64{"reward_std_dev": 0, "num_groups_trainable": 0},
		},
		{
			name:   "exception_rate is exceptions over trajectories plus exceptions",
			groups: `[{"trajectories":[` + traj(1, `{}`) + `,` + traj(1, `{}`) + `,` + traj(1, `{}`) + `],"exceptions":[{"type":"ValueError"}]},{"trajectories":[],"exceptions":[]}]`,
			want:   map[string]float64{"exception_rate": 0.25, "num_trajectories": 3},
		},
		{
			name:   "a trajectory metric is averaged over the trajectories that have it; booleans count 0/1",
			groups: `[{"trajectories":[` + traj(0, `{"correct":true,"turns":2}`) + `,` + traj(0, `{"correct":false}`) + `,` + traj(0, `{"correct":true,"turns":4,"note":"text"}`) + `]}]`,
			want:   map[string]float64{"correct": 2.0 / 3, "turns": 3},
			absent: []string{"note"},
		},
		{
			name:   "group_metric_ averages group metrics over non-empty groups",
			groups: `[{"trajectories":[` + traj(0, `{}`) + `],"metrics":{"difficulty":1}},{"trajectories":[` + traj(0, `{}`) + `],"metrics":{"difficulty":0}},{"trajectories":[],"metrics":{"difficulty":100}}]`,
			want:   map[string]float64{"group_metric_difficulty": 0.5},
		},
		{
			name:   "trainable groups are those whose rewards differ",
			groups: `[{"trajectories":[` + traj(1, `{}`) + `,` + traj(1, `{}`) + `]},{"trajectories":[` + traj(0, `{}`) + `,` + traj(1, `{}`) + `]}]`,
			want:   map[string]float64{"num_groups_trainable": 1, "num_groups_submitted": 2},
		},
		{
			name:   "no trajectories: no reward, zero rates",
			groups: `[]`,
			want:   map[string]float64{"exception_rate": 0, "reward_std_dev": 0, "num_trajectories": 0},
			absent: []string{"reward"},
		},
		{
			name:   "a trajectory metric may not overwrite a computed one",
			groups: `[{"trajectories":[` + traj(1, `{"reward":7,"exception_rate":9}`) + `]}]`,
			want:   map[string]float64{"reward": 1, "exception_rate": 0},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var groups []TrajectoryGroup
			if err := json.Unmarshal([]byte(tt.groups), &groups); err != nil {
				t.Fatal(err)
			}
			got := groupMetrics(groups)
			for k, want := range tt.want {
				v, ok := got[k]
				if !ok || math.Abs(v-want) > 1e-12 {
					t.Errorf("%s = %v (present %v), want %v; all: %v", k, v, ok, want, got)
				}
			}
			for _, k := range tt.absent {
				if _, ok := got[k]; ok {
					t.Errorf("%s present: %v", k, got)
				}
			}
		})
	}
}

func TestPrefixedAndStepAverages(t *testing.T) {
	t.Parallel()
	got := prefixed("val", map[string]float64{"reward": 1, "group_metric_x": 2})
	if want := map[string]float64{"val/reward": 1, "val/group_metric_x": 2}; !maps.Equal(got, want) {
		t.Fatalf("prefixed = %v, want %v", got, want)
	}
	// A step's number (gradient_step, as trainers number them) is no metric
	// of the checkpoint: its average (1.5 of steps 1 and 2) means nothing.
	avg := stepAverages([]map[string]float64{{"loss": 1, "grad_norm": 4, "gradient_step": 1}, {"loss": 3, "gradient_step": 2}})
	if want := map[string]float64{"loss": 2, "grad_norm": 4}; !maps.Equal(avg, want) {
		t.Fatalf("stepAverages = %v, want %v", avg, want)
	}
	data := numericData(map[string]any{"loss": 0.5, "clipped": true, "name": "x", "nan": math.NaN()})
	if want := map[string]float64{"loss": 0.5, "clipped": 1}; !maps.Equal(data, want) {
		t.Fatalf("numericData = %v, want %v", data, want)
	}
}
