package training

import (
	"math"
	"sort"
)

// groupMetrics computes what models/log stores for a batch of trajectory groups
// (the reference server's list of derived training metrics):
//
//   - reward: mean reward over all trajectories (absent reward = 0);
//   - exception_rate: exceptions / (trajectories + exceptions) over all groups;
//   - <key>: mean of trajectory.metrics[key] over the trajectories that have it
//     (booleans count 0/1);
//   - group_metric_<key>: mean of group.metrics[key] over non-empty groups that have it;
//   - reward_std_dev: mean over groups with ≥ 2 trajectories of the population
//     standard deviation of their rewards (0 when there is no such group);
//   - num_trajectories, num_groups_submitted, num_groups_trainable (groups whose
//     rewards are not all equal).
func groupMetrics(groups []TrajectoryGroup) map[string]float64 {
	var rewardSum, trajectories, exceptions float64
	var stdSum, stdGroups, trainable float64
	sums, counts := map[string]float64{}, map[string]float64{}
	groupSums, groupCounts := map[string]float64{}, map[string]float64{}
	for _, g := range groups {
		exceptions += float64(len(g.Exceptions))
		rewards := make([]float64, 0, len(g.Trajectories))
		for _, t := range g.Trajectories {
			r := rewardOf(t)
			rewards = append(rewards, r)
			rewardSum += r
			trajectories++
			for k, v := range t.Metrics {
				if f, ok := number(v); ok {
					sums[k] += f
					counts[k]++
				}
			}
		}
		if len(g.Trajectories) > 0 {
			for k, v := range g.Metrics {
				if f, ok := number(v); ok {
					groupSums[k] += f
					groupCounts[k]++
				}
			}
		}
		if len(rewards) >= 2 {
			stdSum += populationStdDev(rewards)
			stdGroups++
		}
		if !allEqual(rewards) {
			trainable++
		}
	}
	m := map[string]float64{
		"num_trajectories":     trajectories,
		"num_groups_submitted": float64(len(groups)),
		"num_groups_trainable": trainable,
		"reward_std_dev":       0,
		"exception_rate":       0,
	}
	if trajectories > 0 {
		m["reward"] = rewardSum / trajectories
	}
	if trajectories+exceptions > 0 {
		m["exception_rate"] = exceptions / (trajectories + exceptions)
	}
	if stdGroups > 0 {
		m["reward_std_dev"] = stdSum / stdGroups
	}
	for k, s := range sums {
		if _, reserved := m[k]; !reserved {
			m[k] = s / counts[k]
		}
	}
	for k, s := range groupSums {
		m["group_metric_"+k] = s / groupCounts[k]
	}
	return m
}

func rewardOf(t Trajectory) float64 {
	if t.Reward == nil {
		return 0
	}
	return *t.Reward
}

// number reads a metric value: numbers as they are, booleans as 0/1.
func number(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, !math.IsNaN(x) && !math.IsInf(x, 0)
	case bool:
		if x {
			return 1, true
		}
		return 0, true
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	}
	return 0, false
}

func populationStdDev(xs []float64) float64 {
	var mean float64
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	var sq float64
	for _, x := range xs {
		sq += (x - mean) * (x - mean)
	}
	return math.Sqrt(sq / float64(len(xs)))
}

func allEqual(xs []float64) bool {
	for _, x := range xs[min(1, len(xs)):] {
		if x != xs[0] {
			return false
		}
	}
	return true
}

// prefixed returns m with every key written as "{split}/{key}".
func prefixed(split string, m map[string]float64) map[string]float64 {
	out := make(map[string]float64, len(m))
	for k, v := range m {
		out[split+"/"+k] = v
	}
	return out
}

// stepAverages averages gradient_step rows per key over the rows that have it,
// as the client does for its train result, leaving out the steps' numbers
// (stepNumber): the checkpoint's metrics are measures, and the average of
// the numbers 1 … n is none.
func stepAverages(rows []map[string]float64) map[string]float64 {
	sums, counts := map[string]float64{}, map[string]float64{}
	for _, row := range rows {
		for k, v := range row {
			if k == stepNumber {
				continue
			}
			sums[k] += v
			counts[k]++
		}
	}
	out := make(map[string]float64, len(sums))
	for k, s := range sums {
		out[k] = s / counts[k]
	}
	return out
}

// stepNumber is the member of a gradient_step's data that numbers the step
// (as the built-in trainer and other SFT trainers write it).
const stepNumber = "gradient_step"

// numericData keeps the values of a gradient_step payload that the client can
// turn into floats (numbers, booleans as 0/1), in key order.
func numericData(data map[string]any) map[string]float64 {
	out := make(map[string]float64, len(data))
	keys := make([]string, 0, len(data))
	for k := range data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if f, ok := number(data[k]); ok {
			out[k] = f
		}
	}
	return out
}
