package weft_test

import (
	"testing"

	"github.com/weftlabs/weft"
)

// Every spelling of a trained model's name reads as its project, name and
// step; anything else is not one.
func TestParseTrainedModel(t *testing.T) {
	for _, c := range []struct {
		in   string
		want weft.TrainedModel
		ok   bool
	}{
		{"alice/proj/run-1", weft.TrainedModel{ProjectID: "alice/proj", Name: "run-1", Step: -1}, true},
		{"alice/proj/run-1:latest", weft.TrainedModel{ProjectID: "alice/proj", Name: "run-1", Step: -1}, true},
		{"alice/proj/run-1:step3", weft.TrainedModel{ProjectID: "alice/proj", Name: "run-1", Step: 3}, true},
		{"wandb-artifact:///alice/proj/run-1:step0", weft.TrainedModel{ProjectID: "alice/proj", Name: "run-1", Step: 0}, true},
		{"wandb-artifact://alice/proj/run-1", weft.TrainedModel{ProjectID: "alice/proj", Name: "run-1", Step: -1}, true},
		{"Qwen/Qwen3-0.6B", weft.TrainedModel{}, false},
		{"a/b/c/d", weft.TrainedModel{}, false},
		{"alice//run-1", weft.TrainedModel{}, false},
		{"alice/proj/run-1:step-1", weft.TrainedModel{}, false},
		{"alice/proj/run-1:stepx", weft.TrainedModel{}, false},
		{"alice/proj/run-1:v3", weft.TrainedModel{}, false},
		{"run-1:step3", weft.TrainedModel{}, false},
	} {
		got, ok := weft.ParseTrainedModel(c.in)
		if got != c.want || ok != c.ok {
			t.Errorf("ParseTrainedModel(%q) = %+v, %v; want %+v, %v", c.in, got, ok, c.want, c.ok)
		}
		if ok {
			again, _ := weft.ParseTrainedModel(got.String())
			if again != got {
				t.Errorf("%q reads back as %+v", got.String(), again)
			}
		}
	}
}
