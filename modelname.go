package weft

import (
	"fmt"
	"strconv"
	"strings"
)

// TrainedModel is a trained model's name as a chat completion spells it:
// "<entity>/<project>/<name>" (its latest checkpoint), "…:step<N>" or
// "…:latest", each also prefixed with "wandb-artifact:///" (or
// "wandb-artifact://"). The chat gateway reads it to tell a trained model
// from a served one, training to find the checkpoint.
type TrainedModel struct {
	// ProjectID is the model's project, "<entity>/<project>": whoever may
	// read it may be served the model.
	ProjectID string
	Name      string
	// Step is the checkpoint named, -1 for the latest.
	Step int64
}

// ParseTrainedModel reads a trained model's name (see [TrainedModel]). ok
// is false for a name of any other form.
func ParseTrainedModel(model string) (m TrainedModel, ok bool) {
	name := model
	for _, prefix := range []string{"wandb-artifact:///", "wandb-artifact://"} {
		if rest, ok := strings.CutPrefix(name, prefix); ok {
			name = rest
			break
		}
	}
	name, version, _ := strings.Cut(name, ":")
	parts := strings.Split(name, "/")
	if len(parts) != 3 || parts[0] == "" || parts[1] == "" || parts[2] == "" {
		return TrainedModel{}, false
	}
	m = TrainedModel{ProjectID: parts[0] + "/" + parts[1], Name: parts[2], Step: -1}
	switch {
	case version == "" || version == "latest":
	case strings.HasPrefix(version, "step"):
		n, err := strconv.ParseInt(strings.TrimPrefix(version, "step"), 10, 64)
		if err != nil || n < 0 {
			return TrainedModel{}, false
		}
		m.Step = n
	default:
		return TrainedModel{}, false
	}
	return m, true
}

// String is the name of the checkpoint, "<entity>/<project>/<name>:step<N>",
// or "<entity>/<project>/<name>" for the latest.
func (m TrainedModel) String() string {
	if m.Step < 0 {
		return m.ProjectID + "/" + m.Name
	}
	return fmt.Sprintf("%s/%s:step%d", m.ProjectID, m.Name, m.Step)
}
