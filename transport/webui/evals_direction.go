package webui

import (
	"net/url"
	"slices"
	"strings"

	"github.com/weftlabs/weft"
)

// Bounds of the metric directions a comparison's URL may set.
const (
	maxDirectedMetrics = 64
	maxMetricName      = 256
)

// lowerIsBetterWords mark a metric whose smaller values are better when the
// view sets no direction for it: what an evaluation measures as latency,
// duration, cost, error, loss or tokens spent (as Weave minimizes latency
// and token counts), matched in the name, case-insensitively. Every other
// score is taken as higher is better: booleans read as 1 (true) and 0, so
// true is better.
var lowerIsBetterWords = []string{"latency", "duration", "cost", "error", "loss", "token"}

// metricDirections are the directions a comparison's URL sets: the metrics
// named by ?lower=<metric> are lower-is-better, by ?higher=<metric>
// higher-is-better, whatever their names suggest.
type metricDirections struct {
	Lower, Higher []string
}

// parseMetricDirections reads ?lower=…&higher=…; a metric in both is an error.
func parseMetricDirections(q url.Values) (metricDirections, error) {
	d := metricDirections{Lower: q["lower"], Higher: q["higher"]}
	if len(d.Lower)+len(d.Higher) > maxDirectedMetrics {
		return d, weft.Errorf(errBadView, "lower, higher: at most %d metrics", maxDirectedMetrics)
	}
	for _, m := range slices.Concat(d.Lower, d.Higher) {
		if m == "" || len(m) > maxMetricName {
			return d, weft.Errorf(errBadView, "lower, higher: a metric's name, from 1 to %d characters", maxMetricName)
		}
	}
	for _, m := range d.Lower {
		if slices.Contains(d.Higher, m) {
			return d, weft.Errorf(errBadView, "metric %q cannot be both lower and higher is better", truncate(m, 40))
		}
	}
	return d, nil
}

// lowerIsBetter reports whether smaller values of metric are better.
func (d metricDirections) lowerIsBetter(metric string) bool {
	switch {
	case slices.Contains(d.Lower, metric):
		return true
	case slices.Contains(d.Higher, metric):
		return false
	}
	name := strings.ToLower(metric)
	return slices.ContainsFunc(lowerIsBetterWords, func(w string) bool { return strings.Contains(name, w) })
}

// better compares a score with the baseline's in metric's direction: 1 when
// the score is better, −1 when worse, 0 when equal.
func (d metricDirections) better(metric string, baseline, score float64) int {
	c := 0
	switch {
	case score > baseline:
		c = 1
	case score < baseline:
		c = -1
	}
	if d.lowerIsBetter(metric) {
		c = -c
	}
	return c
}

// flipped is the directions with metric's turned the other way.
func (d metricDirections) flipped(metric string) metricDirections {
	lower := !d.lowerIsBetter(metric)
	out := metricDirections{
		Lower:  slices.DeleteFunc(slices.Clone(d.Lower), func(m string) bool { return m == metric }),
		Higher: slices.DeleteFunc(slices.Clone(d.Higher), func(m string) bool { return m == metric }),
	}
	if lower {
		out.Lower = append(out.Lower, metric)
	} else {
		out.Higher = append(out.Higher, metric)
	}
	return out
}
