package training

import (
	"encoding/json"
	"fmt"
	"math"
)

// validateGroups checks trajectory groups against the trajectory-group rules beyond what the
// JSON shape already guarantees: every trajectory has a finite reward (absent
// means 0), every entry of messages_and_choices is an object that is either a
// chat message (has "role") or a sampled choice (has "message"), and tools and
// additional histories are objects.
func validateGroups(path string, groups []TrajectoryGroup) error {
	for g, group := range groups {
		gp := fmt.Sprintf("%s[%d]", path, g)
		if group.Trajectories == nil {
			return fieldErrorf(gp+".trajectories", "Field required")
		}
		for t, traj := range group.Trajectories {
			tp := fmt.Sprintf("%s.trajectories[%d]", gp, t)
			if traj.MessagesAndChoices == nil {
				return fieldErrorf(tp+".messages_and_choices", "Field required")
			}
			if traj.Reward != nil && (math.IsNaN(*traj.Reward) || math.IsInf(*traj.Reward, 0)) {
				return fieldErrorf(tp+".reward", "reward must be a finite number")
			}
			for i, raw := range traj.MessagesAndChoices {
				if err := validateMessage(fmt.Sprintf("%s.messages_and_choices[%d]", tp, i), raw); err != nil {
					return err
				}
			}
			for i, raw := range traj.Tools {
				if !isObject(raw) {
					return fieldErrorf(fmt.Sprintf("%s.tools[%d]", tp, i), "a tool must be an object")
				}
			}
			for i, raw := range traj.AdditionalHistories {
				if !isObject(raw) {
					return fieldErrorf(fmt.Sprintf("%s.additional_histories[%d]", tp, i), "a history must be an object with messages_and_choices")
				}
			}
		}
	}
	return nil
}

// validateMessage accepts a chat message ({"role": string, ...}) or a choice
// ({"message": {...}, ...}); anything else is an error.
func validateMessage(path string, raw json.RawMessage) error {
	var m struct {
		Role    json.RawMessage `json:"role"`
		Message json.RawMessage `json:"message"`
	}
	if !isObject(raw) || json.Unmarshal(raw, &m) != nil {
		return fieldErrorf(path, "must be a chat message or a chat completion choice object")
	}
	switch {
	case len(m.Message) > 0 && string(m.Message) != "null":
		if !isObject(m.Message) {
			return fieldErrorf(path+".message", "a choice's message must be an object")
		}
	case len(m.Role) > 0:
		var role string
		if json.Unmarshal(m.Role, &role) != nil || role == "" {
			return fieldErrorf(path+".role", "role must be a non-empty string")
		}
	default:
		return fieldErrorf(path, "must have a role (a message) or a message (a choice)")
	}
	return nil
}

func isObject(raw json.RawMessage) bool {
	for _, c := range raw {
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		case '{':
			return true
		default:
			return false
		}
	}
	return false
}

// validateExperimental checks the ranges the trainer relies on.
func validateExperimental(c *ExperimentalConfig) error {
	if c == nil {
		return nil
	}
	const p = "experimental_config."
	if v := c.AdvantageBalance; v != nil && (*v < -1 || *v > 1) {
		return fieldErrorf(p+"advantage_balance", "must be between -1 and 1")
	}
	positive := map[string]*float64{"epsilon": c.Epsilon, "epsilon_high": c.EpsilonHigh, "learning_rate": c.LearningRate,
		"max_negative_advantage_importance_sampling_weight": c.MaxNegativeAdvantageImportanceSamplingWeight}
	for name, v := range positive {
		if v != nil && !(*v > 0) {
			return fieldErrorf(p+name, "must be greater than 0")
		}
	}
	if v := c.ImportanceSamplingLevel; v != nil {
		switch *v {
		case "token", "sequence", "average", "geometric_average":
		default:
			return fieldErrorf(p+"importance_sampling_level", "must be one of token, sequence, average, geometric_average")
		}
	}
	return nil
}
