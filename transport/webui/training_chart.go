package webui

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
)

// chartData is what a training chart draws, written into the page as JSON (a
// data attribute, read by static/training.js): one small chart per metric,
// one line per run, all sharing the steps X. Values are null where a run has
// no value at a step. The server aligns the runs so that the browser only
// plots.
type chartData struct {
	// Runs names the lines, in the order of every Metric's Values.
	Runs []string `json:"runs"`
	// X are the steps, ascending.
	X       []int64       `json:"x"`
	Metrics []chartMetric `json:"metrics"`
	// Markers are steps drawn as vertical lines (saved checkpoints).
	Markers []int64 `json:"markers"`
	// StepURL, when set, is where a click on step s goes: StepURL + s.
	StepURL string `json:"step_url,omitempty"`
}

// chartMetric is one metric's lines: Values[run][i] is at X[i].
type chartMetric struct {
	Name   string       `json:"name"`
	Values [][]*float64 `json:"values"`
}

// chartRun is one run's points before alignment: step → metric → value.
type chartRun struct {
	Label  string
	Points map[int64]map[string]float64
}

// preferredMetrics come first, in this order; the rest follow by name, with
// validation metrics ("val/…") ahead of the others.
var preferredMetrics = []string{"train/reward", "reward", "loss", "grad_norm", "learning_rate"}

// maxChartMetrics bounds how many charts a page draws.
const maxChartMetrics = 12

// buildChart aligns runs on the union of their steps and picks the metrics:
// the preferred ones any run has, then validation metrics, then the rest.
func buildChart(runs []chartRun, markers []int64) chartData {
	steps := map[int64]bool{}
	names := map[string]bool{}
	for _, r := range runs {
		for s, m := range r.Points {
			steps[s] = true
			for k := range m {
				names[k] = true
			}
		}
	}
	d := chartData{X: make([]int64, 0, len(steps)), Markers: markers, Runs: make([]string, len(runs)), Metrics: []chartMetric{}}
	for s := range steps {
		d.X = append(d.X, s)
	}
	slices.Sort(d.X)
	if d.Markers == nil {
		d.Markers = []int64{}
	}
	for i, r := range runs {
		d.Runs[i] = r.Label
	}
	for _, name := range orderMetrics(names) {
		m := chartMetric{Name: name, Values: make([][]*float64, len(runs))}
		for i, r := range runs {
			vals := make([]*float64, len(d.X))
			for j, s := range d.X {
				if v, ok := r.Points[s][name]; ok && !math.IsNaN(v) && !math.IsInf(v, 0) {
					vals[j] = &v
				}
			}
			m.Values[i] = vals
		}
		d.Metrics = append(d.Metrics, m)
	}
	return d
}

func orderMetrics(names map[string]bool) []string {
	var out []string
	for _, p := range preferredMetrics {
		if names[p] {
			out = append(out, p)
		}
	}
	var val, rest []string
	for n := range names {
		switch {
		case slices.Contains(preferredMetrics, n):
		case len(n) > 4 && n[:4] == "val/":
			val = append(val, n)
		default:
			rest = append(rest, n)
		}
	}
	sort.Strings(val)
	sort.Strings(rest)
	out = append(append(out, val...), rest...)
	if len(out) > maxChartMetrics {
		out = out[:maxChartMetrics]
	}
	return out
}

// JSON is the chart's data attribute.
func (d chartData) JSON() (string, error) {
	b, err := json.Marshal(d)
	return string(b), err
}

// trainingFuncs are the template functions of the training pages.
func trainingFuncs() map[string]any {
	return map[string]any{
		"modelPath": modelPath,
		"jobPath":   jobPath,
		"shortID":   shortID,
		"metric":    formatMetric,
		"metricOf": func(m map[string]float64, name string) string {
			if v, ok := m[name]; ok {
				return formatMetric(v)
			}
			return "–"
		},
		"add64": func(a, b int64) int64 { return a + b },
	}
}

// formatMetric writes a metric with 4 significant digits ("0.5", "5e-06").
func formatMetric(v any) string {
	switch x := v.(type) {
	case float64:
		return strconv.FormatFloat(x, 'g', 4, 64)
	case *float64:
		if x == nil {
			return "–"
		}
		return strconv.FormatFloat(*x, 'g', 4, 64)
	}
	return fmt.Sprint(v)
}
